import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { formatUsd } from '../../src/lib/money.js';
import {
  FAKE_WEBHOOK_SECRET,
  type FakeStripe,
  startFakeStripe,
  stripeEnv,
  type TestCard,
} from '../fakes/stripe.js';
import { signPayload } from '../fakes/stripe-wire.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

// Every money path of card payments through the gateway's official `stripe` client against the fake Stripe
// (test/fakes/stripe.ts), webhooks signed and delivered by the fake to the gateway's endpoint. A paid call here
// is propstats/value-estimate at 35 cents, its upstream replaced.

let fake: FakeStripe;
let t: TestGateway;
const offset = { ms: 0 };

beforeAll(async () => {
  fake = await startFakeStripe();
  t = await startGateway({
    // The tests run the scheduler's passes themselves (no timer in between).
    env: {
      ...stripeEnv(fake),
      TOLLGATE_SETTLE_THRESHOLD_USD: '1',
      TOLLGATE_SETTLE_EVERY_HOURS: '24',
      TOLLGATE_SETTLE_CHECK_SECONDS: '3600',
    },
    clock: { now: () => Date.now() + offset.ms },
    handlers: {
      'propstats/value-estimate': async () => ({
        price: 1,
        priceRangeLow: 1,
        priceRangeHigh: 2,
        comparables: [],
      }),
    },
  });
  fake.webhookUrl = `${t.url}/billing/stripe/webhook`;
});
afterAll(async () => {
  await t?.close();
  await fake?.close();
});
beforeEach(() => {
  fake.holdWebhooks = false;
});

const billing = () => {
  const b = t.gw.billing;
  if (!b) throw new Error('billing is off');
  return b;
};

async function saveCard(accountId: string, card: TestCard = '4242424242424242'): Promise<void> {
  const url = await billing().startCardSetup(accountId);
  const session = new URL(url).pathname.split('/').at(-1) as string;
  const back = await fake.completeCheckout(session, card);
  expect(back).toBe(`${t.url}/account/checkout/return?session_id=${session}`);
}

async function topUp(accountId: string, usd: number): Promise<string> {
  const url = await billing().startTopUp(accountId, usd * 1_000_000);
  const session = new URL(url).pathname.split('/').at(-1) as string;
  await fake.completeCheckout(session, '4242424242424242');
  return session;
}

const paidCall = (key: string) =>
  t.post('/api/run/propstats/value-estimate', { address: '1 Main St, Austin, TX' }, { key });

async function callsUntilRefused(key: string): Promise<number> {
  for (let n = 0; n < 100; n++) {
    const r = await paidCall(key);
    if (r.status !== 200) return n;
  }
  throw new Error('never refused');
}

const settlementsOf = (accountId: string) =>
  fake.requests.filter(
    (r) =>
      r.method === 'POST' &&
      r.path === '/v1/payment_intents' &&
      (r.params.metadata as Record<string, string>)?.tollgate_account === accountId,
  );

describe('card on file and the welcome credit line', () => {
  it('[billing:credit-line-once] [billing:credit-line] a confirmed card grants the 2 USD line once; a second account with the same card gets none', async () => {
    const a = await t.account('0');
    expect(await t.gw.ledger.creditLine(a.accountId)).toMatchObject({ limit_micros: 0 });
    expect((await paidCall(a.key)).status).toBe(402);
    await saveCard(a.accountId);
    expect(await t.gw.ledger.creditLine(a.accountId)).toMatchObject({
      limit_micros: 2_000_000,
      drawn_micros: 0,
      frozen: null,
    });
    expect(await billing().card(a.accountId)).toMatchObject({ brand: 'visa', last4: '4242' });
    // The Checkout session was made with the official client, in setup mode, for cards.
    const created = fake.requests.find(
      (r) => r.path === '/v1/checkout/sessions' && r.params.mode === 'setup',
    );
    expect(created?.headers['stripe-version']).toMatch(/^\d{4}-\d{2}-\d{2}/);
    expect(created?.params).toMatchObject({
      allowed_payment_method_types: ['card'],
      client_reference_id: a.accountId,
    });
    // Another card on the same account: no second line.
    await saveCard(a.accountId, '5555555555554444');
    expect((await t.gw.ledger.creditLine(a.accountId)).limit_micros).toBe(2_000_000);
    expect(await billing().card(a.accountId)).toMatchObject({ brand: 'mastercard', last4: '4444' });
    // A second account with the first card: the card is on file, but no line.
    const b = await t.account('0');
    await saveCard(b.accountId, '4242424242424242');
    expect(await billing().card(b.accountId)).toMatchObject({ last4: '4242' });
    expect((await t.gw.ledger.creditLine(b.accountId)).limit_micros).toBe(0);
    expect((await paidCall(b.key)).status).toBe(402);
    // The 402 points to the dashboard, where the account can top up.
    const r = await paidCall(b.key);
    expect(r.body.error.message).toContain(`Top up or add a card at ${t.url}/account/top-up.`);
  });
});

describe('settlement: the card settles only actual usage', () => {
  it('[billing:settle-actual-usage] usage beyond the prepaid balance draws on the line; the threshold charges exactly what was drawn', async () => {
    const { accountId, key } = await t.account('0.50');
    await saveCard(accountId, '4000056655665556');
    // 0.50 prepaid + 2.00 line = 7 calls at 0.35 (2.45), the 8th would pass the line.
    expect(await callsUntilRefused(key)).toBe(7);
    expect(await t.gw.ledger.creditLine(accountId)).toMatchObject({ drawn_micros: 1_950_000 });
    await billing().scheduler.tick();
    const [pi] = settlementsOf(accountId);
    expect(pi?.params).toMatchObject({
      amount: '195',
      currency: 'usd',
      off_session: 'true',
      confirm: 'true',
    });
    expect(pi?.headers['idempotency-key']).toMatch(/^tollgate-settlement-mv_/);
    expect(await t.gw.ledger.creditLine(accountId)).toMatchObject({
      drawn_micros: 0,
      frozen: null,
      settling: null,
    });
    expect((await t.gw.ledger.balance(accountId)).balance_micros).toBe(0);
    // The line is back: calls run again.
    expect((await paidCall(key)).status).toBe(200);
    // Below the threshold nothing is charged until the period ends.
    await billing().scheduler.tick();
    expect(settlementsOf(accountId)).toHaveLength(1);
    const [settlement] = (await t.gw.ledger.movements(accountId, 10)).filter((m) => m.kind === 'settlement');
    expect(settlement).toMatchObject({
      status: 'succeeded',
      amount_micros: 1_950_000,
      external_ref: expect.stringMatching(/^pi_/),
    });
  });

  it('[billing:settle-actual-usage] at the end of each period every drawn amount from 0.50 up is settled', async () => {
    const { accountId, key } = await t.account('0');
    await saveCard(accountId, '5200828282828210');
    for (let i = 0; i < 2; i++) expect((await paidCall(key)).status).toBe(200);
    await billing().scheduler.tick();
    expect(settlementsOf(accountId)).toHaveLength(0); // 0.70 is below the 1.00 threshold
    const day = 86_400_000;
    offset.ms += day - ((Date.now() + offset.ms) % day) + 1_000; // just past the next 00:00 UTC
    fake.clockOffsetMs = offset.ms;
    await billing().scheduler.tick();
    expect(settlementsOf(accountId).map((r) => r.params.amount)).toEqual(['70']);
    expect((await t.gw.ledger.creditLine(accountId)).drawn_micros).toBe(0);
  });

  it('[billing:declined-freezes-line] [billing:line-frozen] a declined settlement freezes the line (402 saying why and where); a new card fixes it', async () => {
    const { accountId, key } = await t.account('0');
    await saveCard(accountId, '4000000000000341');
    expect((await t.gw.ledger.creditLine(accountId)).limit_micros).toBe(2_000_000);
    for (let i = 0; i < 3; i++) expect((await paidCall(key)).status).toBe(200);
    await billing().scheduler.tick();
    const line = await t.gw.ledger.creditLine(accountId);
    expect(line).toMatchObject({
      drawn_micros: 1_050_000,
      frozen: {
        reason: 'the visa card ending 0341 was declined (generic_decline) when charging $1.05 of usage',
      },
    });
    const refused = await paidCall(key);
    expect(refused.status).toBe(402);
    expect(refused.body.error.code).toBe('insufficient_credit');
    expect(refused.body.error.message).toContain(
      'Your credit line is frozen: the visa card ending 0341 was declined (generic_decline)',
    );
    expect(refused.body.error.message).toContain(`Update your card or top up at ${t.url}/account/card.`);
    expect(refused.body.error.details).toMatchObject({ credit_line: 'frozen' });
    // The scheduler does not retry a declined card by itself.
    await billing().scheduler.tick();
    expect(settlementsOf(accountId)).toHaveLength(1);
    // A new card: the drawn amount is charged to it at once, and the line comes back.
    await saveCard(accountId, '5105105105105100');
    expect(
      settlementsOf(accountId).map((r) => [
        r.params.amount,
        r.params.payment_method === settlementsOf(accountId)[0]?.params.payment_method,
      ]),
    ).toEqual([
      ['105', true],
      ['105', false],
    ]);
    expect(await t.gw.ledger.creditLine(accountId)).toMatchObject({ drawn_micros: 0, frozen: null });
    expect((await paidCall(key)).status).toBe(200);
  });

  it('[billing:settle-actual-usage] an answer lost on the way back is asked again with the same key: one charge', async () => {
    const { accountId, key } = await t.account('0');
    await saveCard(accountId, '378282246310005');
    for (let i = 0; i < 3; i++) expect((await paidCall(key)).status).toBe(200);
    fake.holdWebhooks = true; // only the request's own answer could tell
    // The client retries a lost answer twice itself (same key); all three are lost.
    fake.loseNextAnswer('/v1/payment_intents', 3);
    const outcome = await billing().settleNow(accountId);
    expect(outcome).toBe('unknown');
    expect(settlementsOf(accountId)).toHaveLength(3);
    const pending = await t.gw.ledger.creditLine(accountId);
    expect(pending.settling).toMatchObject({ micros: 1_050_000 });
    // The next pass (a minute later) sends the very same request; Stripe replays its answer.
    offset.ms += 61_000;
    fake.clockOffsetMs = offset.ms;
    await billing().scheduler.tick();
    const sent = settlementsOf(accountId);
    expect(sent).toHaveLength(4);
    expect(new Set(sent.map((r) => r.headers['idempotency-key'])).size).toBe(1);
    const intents = [...fake.objects.values()].filter(
      (o) =>
        o.object === 'payment_intent' &&
        (o.metadata as Record<string, string>).tollgate_account === accountId,
    );
    expect(intents).toHaveLength(1);
    expect(await t.gw.ledger.creditLine(accountId)).toMatchObject({ drawn_micros: 0, settling: null });
    // The held webhooks arrive late: nothing changes.
    const before = await t.gw.ledger.balance(accountId);
    await fake.flush();
    expect(await t.gw.ledger.balance(accountId)).toEqual(before);
  });
});

describe('top-ups and webhooks', () => {
  it('[billing:topup-once] a top-up webhook replayed 10 times credits once', async () => {
    const { accountId } = await t.account('0');
    const session = await topUp(accountId, 5);
    expect((await t.gw.ledger.balance(accountId)).balance_micros).toBe(5_000_000);
    const completed = fake.events.find(
      (e) =>
        e.type === 'checkout.session.completed' &&
        (e.data as { object: { id: string } }).object.id === session,
    );
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) statuses.push(await fake.resend(completed?.id as string));
    expect(statuses).toEqual(Array(10).fill(200));
    expect((await t.gw.ledger.balance(accountId)).balance_micros).toBe(5_000_000);
    expect(await t.gw.ledger.movements(accountId, 10)).toMatchObject([
      { kind: 'topup', amount_micros: 5_000_000, external_ref: session },
    ]);
    // The top-up limits are the operator's.
    await expect(billing().startTopUp(accountId, 4_990_000)).rejects.toMatchObject({ code: 'invalid_input' });
    await expect(billing().startTopUp(accountId, 501_000_000)).rejects.toMatchObject({
      code: 'invalid_input',
    });
    await expect(billing().startTopUp(accountId, 5_000_001)).rejects.toMatchObject({ code: 'invalid_input' });
  });

  it('[billing:webhook-verified] a forged, altered, stale or unsigned event changes nothing', async () => {
    const { accountId } = await t.account('0');
    fake.holdWebhooks = true;
    const session = await topUp(accountId, 7);
    const event = fake.events.find(
      (e) =>
        e.type === 'checkout.session.completed' &&
        (e.data as { object: { id: string } }).object.id === session,
    );
    const payload = JSON.stringify(event);
    const now = Math.floor((Date.now() + offset.ms) / 1000);
    expect(await fake.post(payload, signPayload(payload, 'whsec_not_the_secret', now))).toBe(400);
    const altered = payload.replace('"amount_total":700', '"amount_total":70000');
    expect(altered).not.toBe(payload);
    expect(await fake.post(altered, signPayload(payload, FAKE_WEBHOOK_SECRET, now))).toBe(400);
    expect(await fake.post(payload, signPayload(payload, FAKE_WEBHOOK_SECRET, now - 600))).toBe(400);
    expect(await fake.post(payload, undefined)).toBe(400);
    expect((await t.gw.ledger.balance(accountId)).balance_micros).toBe(0);
    // Signed with the secret and fresh: accepted once; a replay of the same delivery is a duplicate.
    const sig = signPayload(payload, FAKE_WEBHOOK_SECRET, now);
    expect(await fake.post(payload, sig)).toBe(200);
    expect(await fake.post(payload, sig)).toBe(200);
    expect((await t.gw.ledger.balance(accountId)).balance_micros).toBe(7_000_000);
    // Out of order and duplicated: the rest of the queue (payment_intent.succeeded, charge.succeeded, the same
    // checkout.session.completed) changes nothing more.
    await fake.flush();
    expect((await t.gw.ledger.balance(accountId)).balance_micros).toBe(7_000_000);
  });

  it('[billing:refund-dispute-debit] refunds and disputes debit the account, a won dispute gives back, all in the history', async () => {
    const { accountId, key } = await t.account('0');
    await saveCard(accountId, '6011111111111117');
    await topUp(accountId, 10);
    const intents = [...fake.objects.values()].filter(
      (o) =>
        o.object === 'payment_intent' &&
        (o.metadata as Record<string, string>).tollgate_account === accountId,
    );
    const pi = intents[0]?.id as string;
    await fake.refund(pi, 300);
    expect((await t.gw.ledger.balance(accountId)).balance_micros).toBe(7_000_000);
    const dispute = await fake.dispute(pi);
    // 10.00 was disputed; 7.00 was left to take back.
    expect(await t.gw.ledger.balance(accountId)).toMatchObject({ balance_micros: 0 });
    expect(await t.gw.ledger.creditLine(accountId)).toMatchObject({
      frozen: { reason: 'a card payment was disputed' },
    });
    expect((await paidCall(key)).status).toBe(402);
    await fake.closeDispute(dispute.id as string, 'won');
    expect((await t.gw.ledger.balance(accountId)).balance_micros).toBe(7_000_000);
    // Replays of every event of this story change nothing.
    for (const e of fake.events.filter((e) => JSON.stringify(e).includes(pi)))
      await fake.resend(e.id as string);
    expect((await t.gw.ledger.balance(accountId)).balance_micros).toBe(7_000_000);
    const r = await t.post('/api/run/platform/transactions', { limit: 10 }, { key });
    expect(r.status).toBe(200);
    const kinds = (r.body.data.transactions as Array<{ kind: string; amount_micros: number }>).map((x) => [
      x.kind,
      x.amount_micros,
    ]);
    expect(kinds).toEqual([
      ['dispute_reversal', 7_000_000],
      ['dispute', -7_000_000],
      ['refund', -3_000_000],
      ['topup', 10_000_000],
      ['line', 0],
    ]);
    expect(formatUsd(-3_000_000)).toBe('-$3.00');
  });
});
