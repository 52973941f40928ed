import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAKE_SECRET_KEY, type TestCard } from '../fakes/stripe.js';
import type { Json } from '../fakes/stripe-wire.js';
import { BACKEND_NAMES, type BillingRig, startBillingRig } from './billing-stripe-rig.js';

// The settlement's PaymentIntent as Stripe accepts it at the client's pinned API version (the fake applies that
// version's rules: payment_method_types is refused, automatic payment methods want a return_url unless the payer
// is away or redirects are ruled out), and what an idempotency conflict or a card refused without a decline code
// does to the credit line, on SQLite and on PostgreSQL.

describe.each(BACKEND_NAMES)('settlements as Stripe accepts them ($name)', ({ name }) => {
  let rig: BillingRig;
  beforeAll(async () => {
    rig = await startBillingRig(name);
  });
  afterAll(async () => {
    await rig?.close();
  });

  const settlementsOf = (accountId: string) =>
    rig.fake.requests.filter(
      (r) =>
        r.method === 'POST' &&
        r.path === '/v1/payment_intents' &&
        (r.params.metadata as Record<string, string>)?.tollgate_account === accountId,
    );
  const intentsOf = (accountId: string) =>
    [...rig.fake.objects.values()].filter(
      (o) =>
        o.object === 'payment_intent' &&
        (o.metadata as Record<string, string>).tollgate_settlement !== undefined &&
        (o.metadata as Record<string, string>).tollgate_account === accountId,
    );

  /** An account with a card (its own: one line per card) that drew 1.05 USD on its line (3 calls at 0.35). */
  async function drawn(card: TestCard) {
    const a = await rig.account({ card });
    for (let i = 0; i < 3; i++) expect(await rig.paidCall(a.key)).toBe(200);
    expect((await rig.t.gw.ledger.creditLine(a.accountId)).drawn_micros).toBe(1_050_000);
    return a;
  }

  it('[billing:settlement-off-session] the settlement is a card PaymentIntent confirmed off-session, at the pinned API version', async () => {
    const { accountId } = await drawn('4000056655665556');
    expect(await rig.billing().settleNow(accountId)).toBe('settled');
    const [sent] = settlementsOf(accountId);
    const card = await rig.billing().card(accountId);
    expect(sent?.headers['stripe-version']).toBe(Stripe.API_VERSION);
    expect(sent?.status).toBe(200);
    expect(sent?.params).toEqual({
      amount: '105',
      currency: 'usd',
      customer: expect.stringMatching(/^cus_/),
      payment_method: card?.payment_method,
      allowed_payment_method_types: ['card'],
      off_session: 'true',
      confirm: 'true',
      description: 'tollgate: usage beyond the prepaid balance',
      metadata: { tollgate_account: accountId, tollgate_settlement: expect.stringMatching(/^mv_/) },
    });
    expect(intentsOf(accountId)).toMatchObject([{ status: 'succeeded', payment_method_types: ['card'] }]);
    expect(await rig.ledgerOf(accountId)).toEqual({
      balance: 0,
      moves: [['settlement', 1_050_000]],
      frozen: null,
    });
  });

  it('[billing:settlement-off-session] the fake refuses what Stripe refuses at this version, and takes the two accepted forms', async () => {
    const { accountId } = await rig.account({ card: '5200828282828210' });
    const pm = (await rig.billing().card(accountId))?.payment_method as string;
    const customer = rig.fake.objects.get(pm)?.customer as string;
    const u = new URL(rig.fake.url);
    const stripe = new Stripe(FAKE_SECRET_KEY, { host: u.hostname, port: Number(u.port), protocol: 'http' });
    const base = { amount: 100, currency: 'usd', customer, payment_method: pm, confirm: true };
    await expect(
      stripe.paymentIntents.create({ ...base, off_session: true, payment_method_types: ['card'] } as never),
    ).rejects.toMatchObject({ code: 'payment_method_types_no_longer_supported' });
    await expect(stripe.paymentIntents.create(base)).rejects.toMatchObject({ param: 'return_url' });
    await expect(
      stripe.paymentIntents.create({
        ...base,
        allowed_payment_method_types: ['card'],
        automatic_payment_methods: { enabled: true },
      }),
    ).rejects.toMatchObject({ param: 'automatic_payment_methods' });
    await expect(
      stripe.paymentIntents.create({
        ...base,
        automatic_payment_methods: { enabled: true, allow_redirects: 'never' },
      }),
    ).resolves.toMatchObject({ status: 'succeeded' });
    await expect(
      stripe.paymentIntents.create({ ...base, off_session: true, allowed_payment_method_types: ['card'] }),
    ).resolves.toMatchObject({ status: 'succeeded', payment_method_types: ['card'] });
  });

  const CONFLICTS: Array<{ label: string; card: TestCard; status: number; error: Json; times: number }> = [
    {
      label: '409 idempotency_key_in_use',
      card: '5105105105105100',
      status: 409,
      error: {
        type: 'idempotency_error',
        code: 'idempotency_key_in_use',
        message: 'There is currently another in-progress request using this Idempotent Key.',
      },
      // The client retries a 409 twice itself.
      times: 3,
    },
    {
      label: 'idempotency_key_in_use as a card error',
      card: '378282246310005',
      status: 402,
      error: {
        type: 'card_error',
        code: 'idempotency_key_in_use',
        decline_code: '',
        message: 'There is currently another in-progress request using this Idempotent Key.',
      },
      times: 1,
    },
    {
      label: 'idempotency_error: the key was used with other parameters',
      card: '6011111111111117',
      status: 400,
      error: {
        type: 'idempotency_error',
        message:
          'Keys for idempotent requests can only be used with the same parameters they were first used with.',
      },
      times: 1,
    },
  ];

  it.each(CONFLICTS)(
    '[billing:settlement-off-session] an idempotency conflict ($label) is an unknown outcome: no freeze, the same request again later, one charge',
    async ({ card, status, error, times }) => {
      const { accountId, key } = await drawn(card);
      rig.fake.failNextWith('/v1/payment_intents', status, error, times);
      expect(await rig.billing().settleNow(accountId)).toBe('unknown');
      expect(settlementsOf(accountId).map((r) => r.status)).toEqual(Array(times).fill(status));
      expect(await rig.t.gw.ledger.creditLine(accountId)).toMatchObject({
        frozen: null,
        settling: { micros: 1_050_000 },
      });
      expect(intentsOf(accountId)).toEqual([]);
      // The line is still usable: 0.95 left of it.
      expect(await rig.paidCall(key)).toBe(200);
      rig.advance(61_000);
      await rig.billing().scheduler.tick();
      const sent = settlementsOf(accountId);
      expect(sent.at(-1)?.status).toBe(200);
      expect(new Set(sent.map((r) => r.headers['idempotency-key'])).size).toBe(1);
      expect(intentsOf(accountId)).toHaveLength(1);
      expect(await rig.ledgerOf(accountId)).toEqual({
        balance: -350_000,
        moves: [['settlement', 1_050_000]],
        frozen: null,
      });
    },
  );

  it('[billing:settlement-off-session] two settlements of one account at once: the second meets the first in flight (409) and shares its one charge', async () => {
    const { accountId } = await drawn('3566002020360505');
    // The first charge stays in flight until the second attempt has come (a slow machine could otherwise finish
    // the first before the second starts, which then finds nothing due).
    rig.fake.holdUntilRepeated('/v1/payment_intents');
    const outcomes = await Promise.all([
      rig.billing().settleNow(accountId),
      rig.billing().settleNow(accountId),
    ]);
    expect(outcomes).toEqual(['settled', 'settled']);
    const sent = settlementsOf(accountId);
    expect(sent.map((r) => r.status)).toContain(409);
    expect(new Set(sent.map((r) => r.headers['idempotency-key'])).size).toBe(1);
    expect(intentsOf(accountId)).toHaveLength(1);
    expect(await rig.ledgerOf(accountId)).toEqual({
      balance: 0,
      moves: [['settlement', 1_050_000]],
      frozen: null,
    });
  });

  it('[billing:declined-freezes-line] a card refused without a decline code is named by its error code (expired_card)', async () => {
    const { accountId } = await drawn('5555555555554444');
    rig.fake.expireCard((await rig.billing().card(accountId))?.payment_method as string);
    // Only the request's answer tells (stripe-node gives its error decline_code ''); the webhook comes later.
    rig.fake.holdWebhooks = true;
    expect(await rig.billing().settleNow(accountId)).toBe('declined');
    const reason = 'the mastercard card ending 4444 was declined (expired_card) when charging $1.05 of usage';
    expect((await rig.ledgerOf(accountId)).frozen).toBe(reason);
    // payment_intent.payment_failed, read back from Stripe, says the same.
    rig.fake.holdWebhooks = false;
    await rig.fake.flush();
    expect(await rig.ledgerOf(accountId)).toEqual({
      balance: -1_050_000,
      moves: [['settlement', 1_050_000]],
      frozen: reason,
    });
  });
});
