import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Json } from '../fakes/stripe-wire.js';
import {
  BACKEND_NAMES,
  type BillingRig,
  deliverUntilAccepted,
  startBillingRig,
} from './billing-stripe-rig.js';

// Card money going back, as Stripe reports it, through the gateway's webhook and the official client against the
// fake Stripe (test/fakes/stripe-reversals.ts), on SQLite and on PostgreSQL: refunds that fail or are cancelled
// (in order, failure first, duplicated, concurrent), inquiries that close, turn into chargebacks or end with a
// refund, chargebacks won and lost. Each is held to the ledger to the micro-dollar: the balance, every movement
// and whether the credit line is frozen.

const M = 1_000_000;
const DISPUTED = 'a card payment was disputed';

const typesOf = (events: Json[]) => events.map((e) => e.type);

describe.each(BACKEND_NAMES)('card refunds and disputes as Stripe reports them ($name)', ({ name }) => {
  let rig: BillingRig;
  beforeAll(async () => {
    rig = await startBillingRig(name);
  });
  afterAll(async () => {
    await rig?.close();
  });
  beforeEach(() => {
    rig.fake.holdWebhooks = false;
  });

  const objectId = (e: Json) => (e.data as { object: Json }).object.id as string;

  describe('refunds', () => {
    it('[billing:refund-failed-given-back] a refund Stripe later reports failed is given back once, and replays change nothing', async () => {
      const { accountId, key, pi } = await rig.account({ topUpUsd: 10 });
      const re = await rig.fake.refund(pi as string, 300);
      expect(await rig.ledgerOf(accountId)).toEqual({
        balance: 7 * M,
        moves: [
          ['refund', -3 * M],
          ['topup', 10 * M],
        ],
        frozen: null,
      });
      await rig.fake.failRefund(re.id as string, { reason: 'expired_or_canceled_card' });
      const events = rig.eventsAbout(re.id as string);
      expect(typesOf(events)).toEqual([
        'refund.created',
        'charge.refund.updated',
        'refund.updated',
        'refund.failed',
      ]);
      const delivered = rig.fake.deliveries.filter((d) => events.some((e) => e.id === d.eventId));
      expect(delivered.map((d) => d.status)).toEqual([200, 200, 200, 200]);
      const after = {
        balance: 10 * M,
        moves: [
          ['refund', -3 * M],
          ['refund_reversal', 3 * M],
          ['topup', 10 * M],
        ],
        frozen: null,
      };
      expect(await rig.ledgerOf(accountId)).toEqual(after);
      for (const e of events) expect((await rig.fake.deliver(e)).status).toBe(200);
      expect(await rig.ledgerOf(accountId)).toEqual(after);
      const back = await rig.t.gw.ledger.movementByRef('refund_reversal', re.id as string);
      expect(back?.memo).toBe('card refund failed (expired_or_canceled_card): given back');
      expect(back?.meta).toMatchObject({ failure_reason: 'expired_or_canceled_card', payment_intent: pi });
      // The account holder sees both in its history.
      const r = await rig.t.post('/api/run/platform/transactions', { limit: 10 }, { key });
      expect(r.status).toBe(200);
      const history = r.body.data.transactions as Array<{
        kind: string;
        amount_micros: number;
        status: string;
      }>;
      expect(history.filter((x) => x.kind.startsWith('refund'))).toEqual([
        expect.objectContaining({ kind: 'refund_reversal', amount_micros: 3 * M, status: 'succeeded' }),
        expect.objectContaining({ kind: 'refund', amount_micros: -3 * M, status: 'succeeded' }),
      ]);
    });

    it('[billing:refund-failed-given-back] the failure delivered before the refund: nothing is taken, nothing given', async () => {
      const { accountId, pi } = await rig.account({ topUpUsd: 10 });
      rig.fake.holdWebhooks = true;
      const re = await rig.fake.refund(pi as string, 400);
      await rig.fake.failRefund(re.id as string);
      const held = rig.fake.takeHeld();
      rig.fake.holdWebhooks = false;
      // Stripe's order reversed: refund.failed, refund.updated, charge.refund.updated, charge.refunded, refund.created.
      for (const e of held.reverse()) expect((await rig.fake.deliver(e)).status).toBe(200);
      expect(await rig.ledgerOf(accountId)).toEqual({
        balance: 10 * M,
        moves: [
          ['refund_reversal', 0],
          ['topup', 10 * M],
        ],
        frozen: null,
      });
      for (const e of held) expect((await rig.fake.deliver(e)).status).toBe(200);
      expect((await rig.ledgerOf(accountId)).balance).toBe(10 * M);
    });

    it('[billing:refund-failed-given-back] refunds and their failures delivered concurrently, each three times, net to zero', async () => {
      const { accountId, pi } = await rig.account({ topUpUsd: 10 });
      rig.fake.holdWebhooks = true;
      const refunds: string[] = [];
      for (let i = 0; i < 4; i++) refunds.push((await rig.fake.refund(pi as string, 200)).id as string);
      for (const re of refunds) await rig.fake.failRefund(re);
      const held = rig.fake.takeHeld();
      rig.fake.holdWebhooks = false;
      // Shuffled, tripled and all at once, as several replicas behind a load balancer would get them.
      const storm = [...held, ...held, ...held].sort(() => Math.random() - 0.5);
      await deliverUntilAccepted(rig.fake, storm);
      const after = await rig.ledgerOf(accountId);
      expect(after.balance).toBe(10 * M);
      expect(after.frozen).toBeNull();
      for (const re of refunds) {
        const mine = (await rig.t.gw.ledger.movements(accountId, 100)).filter((m) => m.external_ref === re);
        expect(mine.filter((m) => m.kind === 'refund_reversal')).toHaveLength(1);
        expect(mine.filter((m) => m.kind === 'refund').length).toBeLessThanOrEqual(1);
        expect(mine.reduce((s, m) => s + m.amount_micros, 0)).toBe(0);
      }
    });

    it('[billing:refund-failed-given-back] a pending refund debits at once; succeeding changes nothing, a cancelled one is given back', async () => {
      const { accountId, pi } = await rig.account({ topUpUsd: 10 });
      const ok = await rig.fake.refund(pi as string, 300, { status: 'pending' });
      expect((await rig.ledgerOf(accountId)).balance).toBe(7 * M);
      await rig.fake.settleRefund(ok.id as string);
      const cancelled = await rig.fake.refund(pi as string, 200, { status: 'pending' });
      expect((await rig.ledgerOf(accountId)).balance).toBe(5 * M);
      await rig.fake.failRefund(cancelled.id as string, { status: 'canceled' });
      expect(typesOf(rig.eventsAbout(cancelled.id as string))).toEqual([
        'refund.created',
        'charge.refund.updated',
        'refund.updated',
      ]);
      expect(await rig.ledgerOf(accountId)).toEqual({
        balance: 7 * M,
        moves: [
          ['refund', -3 * M],
          ['refund', -2 * M],
          ['refund_reversal', 2 * M],
          ['topup', 10 * M],
        ],
        frozen: null,
      });
    });
  });

  describe('disputes', () => {
    it('[billing:dispute-inquiry] an inquiry opened and closed moves no money and leaves the line usable', async () => {
      // A card no other account of this gateway has: the account gets its own 2 USD line.
      const { accountId, key, pi } = await rig.account({ topUpUsd: 10, card: '5555555555554444' });
      const dp = await rig.fake.dispute(pi as string, { inquiry: true });
      expect(dp).toMatchObject({ status: 'warning_needs_response', balance_transactions: [] });
      const unchanged = { balance: 10 * M, moves: [['topup', 10 * M]], frozen: null };
      expect(await rig.ledgerOf(accountId)).toEqual(unchanged);
      expect((await rig.t.gw.ledger.balance(accountId)).available_micros).toBe(12 * M);
      expect(await rig.paidCall(key)).toBe(200);
      await rig.fake.closeDispute(dp.id as string, 'warning_closed');
      expect(typesOf(rig.eventsAbout(dp.id as string))).toEqual([
        'charge.dispute.created',
        'charge.dispute.closed',
      ]);
      expect(await rig.ledgerOf(accountId)).toEqual({ ...unchanged, balance: 10 * M - 350_000 });
      expect(await rig.t.gw.ledger.movementByRef('dispute', dp.id as string)).toBeUndefined();
    });

    it('[billing:dispute-inquiry] a refund during an inquiry debits once in all (Stripe closes the inquiry)', async () => {
      const { accountId, pi } = await rig.account({ topUpUsd: 10 });
      const dp = await rig.fake.dispute(pi as string, { inquiry: true });
      await rig.fake.refund(pi as string);
      expect(rig.fake.objects.get(dp.id as string)?.status).toBe('warning_closed');
      expect(typesOf(rig.eventsAbout(dp.id as string))).toEqual([
        'charge.dispute.created',
        'charge.dispute.closed',
      ]);
      expect(await rig.ledgerOf(accountId)).toEqual({
        balance: 0,
        moves: [
          ['refund', -10 * M],
          ['topup', 10 * M],
        ],
        frozen: null,
      });
    });

    it('[billing:dispute-inquiry] [billing:dispute-chargeback] an inquiry that becomes a chargeback debits then, once; won gives it back once', async () => {
      const { accountId, key, pi } = await rig.account({ topUpUsd: 10 });
      const dp = await rig.fake.dispute(pi as string, { inquiry: true });
      expect((await rig.ledgerOf(accountId)).balance).toBe(10 * M);
      await rig.fake.escalateDispute(dp.id as string);
      expect(typesOf(rig.eventsAbout(dp.id as string))).toEqual([
        'charge.dispute.created',
        'charge.dispute.updated',
        'charge.dispute.funds_withdrawn',
      ]);
      expect(await rig.ledgerOf(accountId)).toEqual({
        balance: 0,
        moves: [
          ['dispute', -10 * M],
          ['topup', 10 * M],
        ],
        frozen: DISPUTED,
      });
      expect(await rig.paidCall(key)).toBe(402);
      await rig.fake.closeDispute(dp.id as string, 'won');
      const won = {
        balance: 10 * M,
        moves: [
          ['dispute', -10 * M],
          ['dispute_reversal', 10 * M],
          ['topup', 10 * M],
        ],
        // The line stays frozen until a settlement succeeds or a card is saved (docs/decisions.md).
        frozen: DISPUTED,
      };
      expect(await rig.ledgerOf(accountId)).toEqual(won);
      for (const e of rig.eventsAbout(dp.id as string)) expect((await rig.fake.deliver(e)).status).toBe(200);
      expect(await rig.ledgerOf(accountId)).toEqual(won);
    });

    it('[billing:dispute-chargeback] a chargeback debits once and freezes the line; lost keeps it so', async () => {
      const { accountId, pi } = await rig.account({ topUpUsd: 10 });
      const dp = await rig.fake.dispute(pi as string);
      const taken = {
        balance: 0,
        moves: [
          ['dispute', -10 * M],
          ['topup', 10 * M],
        ],
        frozen: DISPUTED,
      };
      expect(await rig.ledgerOf(accountId)).toEqual(taken);
      await rig.fake.closeDispute(dp.id as string, 'lost');
      expect(typesOf(rig.eventsAbout(dp.id as string))).toEqual([
        'charge.dispute.created',
        'charge.dispute.funds_withdrawn',
        'charge.dispute.closed',
      ]);
      expect(await rig.ledgerOf(accountId)).toEqual(taken);
    });

    it('[billing:dispute-chargeback] a chargeback already won when its events arrive, out of order and at once: nothing moves in the end', async () => {
      const { accountId, pi } = await rig.account({ topUpUsd: 10 });
      rig.fake.holdWebhooks = true;
      const dp = await rig.fake.dispute(pi as string);
      await rig.fake.closeDispute(dp.id as string, 'won');
      const held = rig.fake.takeHeld().filter((e) => objectId(e) === dp.id);
      rig.fake.holdWebhooks = false;
      expect(typesOf(held)).toEqual([
        'charge.dispute.created',
        'charge.dispute.funds_withdrawn',
        'charge.dispute.closed',
        'charge.dispute.funds_reinstated',
      ]);
      await deliverUntilAccepted(rig.fake, [...held.reverse(), ...held]);
      expect(await rig.ledgerOf(accountId)).toEqual({
        balance: 10 * M,
        moves: [
          ['dispute', -10 * M],
          ['dispute_reversal', 10 * M],
          ['topup', 10 * M],
        ],
        frozen: null,
      });
    });

    it('[billing:dispute-chargeback] a partly refunded payment disputed in full and lost: Stripe reinstates the refunded part, the account ends where Stripe does', async () => {
      const { accountId, pi } = await rig.account({ topUpUsd: 10 });
      await rig.fake.refund(pi as string, 300);
      const dp = await rig.fake.dispute(pi as string);
      // 10 withdrawn by Stripe; the account had 7 left: 3 are the operator's until Stripe gives them back.
      expect(await rig.ledgerOf(accountId)).toEqual({
        balance: 0,
        moves: [
          ['dispute', -7 * M],
          ['refund', -3 * M],
          ['topup', 10 * M],
        ],
        frozen: DISPUTED,
      });
      await rig.fake.closeDispute(dp.id as string, 'lost');
      expect(rig.fake.objects.get(dp.id as string)?.balance_transactions).toMatchObject([
        { amount: -1000 },
        { amount: 300 },
      ]);
      // Stripe's net: +10 paid, −3 refunded, −10 withdrawn, +3 reinstated = 0; the account's: 0.
      expect(await rig.ledgerOf(accountId)).toEqual({
        balance: 0,
        moves: [
          ['dispute', -7 * M],
          ['dispute_reversal', 0],
          ['refund', -3 * M],
          ['topup', 10 * M],
        ],
        frozen: DISPUTED,
      });
    });
  });
});
