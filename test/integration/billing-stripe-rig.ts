import { expect } from 'vitest';
import type { Billing } from '../../src/billing/index.js';
import { type FakeStripe, startFakeStripe, stripeEnv, type TestCard } from '../fakes/stripe.js';
import type { Json } from '../fakes/stripe-wire.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { createTestDatabase, type TestDatabase } from '../helpers/pg.js';

// A gateway with card payments on, wired to the fake Stripe, on SQLite or on a PostgreSQL database of its own,
// for the billing suites that run on both backends. A paid call is propstats/value-estimate at 35 cents, its
// upstream replaced; the settlement scheduler is driven by the tests (no timer in between).

export const BACKEND_NAMES = [{ name: 'sqlite' as const }, { name: 'postgres' as const }];

export interface BillingRig {
  fake: FakeStripe;
  t: TestGateway;
  /** Added to the gateway's clock (and the fake's): tests that wait for a retry move it. */
  offset: { ms: number };
  billing(): Billing;
  /** A customer account with `usd` prepaid through a Checkout top-up (0: none), and a card on file if asked. */
  account(opts?: {
    topUpUsd?: number;
    card?: TestCard | false;
  }): Promise<{ accountId: string; key: string; pi?: string }>;
  paidCall(key: string): Promise<number>;
  /** The ledger's view of an account, to the micro-dollar: balance, movements (kind and amount), frozen line. */
  ledgerOf(accountId: string): Promise<{
    balance: number;
    moves: Array<[string, number]>;
    frozen: string | null;
  }>;
  /** The webhook events about one Stripe object that the fake sent. */
  eventsAbout(objectId: string): Json[];
  advance(ms: number): void;
  close(): Promise<void>;
}

export async function startBillingRig(
  backend: 'sqlite' | 'postgres',
  env: Record<string, string> = {},
): Promise<BillingRig> {
  const fake = await startFakeStripe();
  const db: TestDatabase | undefined =
    backend === 'postgres' ? await createTestDatabase('tg_bill') : undefined;
  const offset = { ms: 0 };
  const t = await startGateway({
    env: {
      ...stripeEnv(fake),
      ...(db ? { TOLLGATE_DATABASE_URL: db.url } : {}),
      TOLLGATE_SETTLE_THRESHOLD_USD: '1',
      TOLLGATE_SETTLE_EVERY_HOURS: '24',
      TOLLGATE_SETTLE_CHECK_SECONDS: '3600',
      ...env,
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
  const billing = () => {
    const b = t.gw.billing;
    if (!b) throw new Error('billing is off');
    return b;
  };
  const sessionOf = (url: string) => new URL(url).pathname.split('/').at(-1) as string;

  return {
    fake,
    t,
    offset,
    billing,
    async account(opts = {}) {
      const { accountId, key } = await t.account('0');
      if (opts.card !== false) {
        const url = await billing().startCardSetup(accountId);
        await fake.completeCheckout(sessionOf(url), opts.card ?? '4242424242424242');
      }
      if (!opts.topUpUsd) return { accountId, key };
      const url = await billing().startTopUp(accountId, opts.topUpUsd * 1_000_000);
      await fake.completeCheckout(sessionOf(url), '4242424242424242');
      const pi = [...fake.objects.values()].find(
        (o) =>
          o.object === 'payment_intent' &&
          (o.metadata as Record<string, string>).tollgate_purpose === 'topup' &&
          (o.metadata as Record<string, string>).tollgate_account === accountId,
      );
      expect(pi?.status).toBe('succeeded');
      return { accountId, key, pi: pi?.id as string };
    },
    async paidCall(key) {
      const r = await t.post(
        '/api/run/propstats/value-estimate',
        { address: '1 Main St, Austin, TX' },
        { key },
      );
      return r.status;
    },
    async ledgerOf(accountId) {
      const moves = (await t.gw.ledger.movements(accountId, 100))
        .filter((m) => m.kind !== 'line')
        .map((m): [string, number] => [m.kind, m.amount_micros])
        .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] - b[1]));
      const line = await t.gw.ledger.creditLine(accountId);
      return {
        balance: (await t.gw.ledger.balance(accountId)).balance_micros,
        moves,
        frozen: line.frozen?.reason ?? null,
      };
    },
    eventsAbout: (id) => fake.events.filter((e) => (e.data as { object: Json }).object.id === id),
    advance(ms) {
      offset.ms += ms;
      fake.clockOffsetMs = offset.ms;
    },
    async close() {
      await t.close();
      await fake.close();
      await db?.drop();
    },
  };
}

/**
 * Delivers events all at once, as Stripe would to several replicas: each again until it is answered 200. A 409
 * (another delivery is handling the same event) is retried; anything else (a handler that failed) fails the test.
 */
export async function deliverUntilAccepted(fake: FakeStripe, events: Json[]): Promise<void> {
  for (let round = 0; round < 20; round++) {
    const statuses = await Promise.all(events.map((e) => fake.deliver(e).then((d) => d.status)));
    expect(statuses.filter((s) => s !== 200 && s !== 409)).toEqual([]);
    events = events.filter((_, i) => statuses[i] !== 200);
    if (events.length === 0) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('events never accepted');
}
