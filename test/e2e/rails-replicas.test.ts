import { x402Client } from '@x402/core/client';
import { BatchSettlementEvmScheme } from '@x402/evm/batch-settlement/client';
import { wrapFetchWithPayment } from '@x402/fetch';
import { evm, Mppx, stripe } from 'mppx/client';
import { Assets } from 'mppx/evm';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAKE_SECRET_KEY, type FakeStripe, startFakeStripe, stripeEnv } from '../fakes/stripe.js';
import { startChain, type TestChain } from '../helpers/anvil.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { createTestDatabase, type TestDatabase, testPool } from '../helpers/pg.js';
import { challengeOf, encodePayment, newPayer, sessionsOf, x402Env } from '../helpers/x402.js';

// The race per rail (issue 23): one MPP credential, or one session voucher, presented at the same moment to two
// gateway replicas sharing one PostgreSQL database pays once: the action runs once, one transfer or capture, one
// charge. And a session's vouchers, served by a replica that is then gone, are claimed by the survivor, once.

const PRICE = 10_000n;
let db: TestDatabase;
let sql: pg.Pool;
let chain: TestChain;
let stripeFake: FakeStripe;
let a: TestGateway;
let b: TestGateway;
const merchant = newPayer().address;
let scrapes = 0;
let renders = 0;

const SCRAPE = '/api/run/scraperC/scrape';
const RENDER = '/api/run/videoasm/render';
const scrapeBody = { url: 'https://example.com/', browser: false };
const renderBody = { project_id: 'prj_0mdx3k2a1b2c3d4e5f6g7h8i9j', intent: 'preview' };
const handlers = {
  'scraperC/scrape': async () => {
    scrapes++;
    // Long enough for the other replica's presentation to arrive while this one runs.
    await new Promise((r) => setTimeout(r, 150));
    return { raw: '<html>once</html>' };
  },
  'videoasm/render': async () => {
    renders++;
    await new Promise((r) => setTimeout(r, 150));
    return { job_id: `job_${renders}`, status: 'queued' };
  },
};

function replica() {
  return startGateway({
    env: {
      ...x402Env(chain, merchant),
      ...stripeEnv(stripeFake),
      TOLLGATE_DATABASE_URL: db.url,
      TOLLGATE_REPLICA_LEASE_SECONDS: '5',
      TOLLGATE_MPP_METHODS: 'evm,stripe',
      TOLLGATE_MPP_SECRET_KEY: 'replicas-share-this-mpp-secret-0123456789',
      TOLLGATE_MPP_STRIPE_NETWORK_ID: 'profile_test_tollgate',
      // Both answer as one gateway would behind a load balancer: one realm.
      TOLLGATE_MPP_REALM: 'gateway.test',
      TOLLGATE_X402_SESSIONS: 'on',
      TOLLGATE_X402_SESSION_CLAIM_SECONDS: '3600',
    },
    handlers,
  });
}

beforeAll(async () => {
  db = await createTestDatabase('tg_rails');
  sql = testPool(db.url);
  chain = await startChain();
  stripeFake = await startFakeStripe();
  a = await replica();
  b = await replica();
}, 120_000);
afterAll(async () => {
  await a?.close();
  await b?.close();
  await sql?.end();
  await stripeFake?.close();
  await chain?.close();
  await db?.drop();
});

const post = (body: unknown, headers: Record<string, string> = {}) => ({
  method: 'POST',
  headers: { 'content-type': 'application/json', ...headers },
  body: JSON.stringify(body),
});

async function chargesOf(account: string): Promise<number> {
  const r = await sql.query(
    "SELECT count(*)::int AS n FROM calls WHERE account_id = $1 AND status = 'succeeded'",
    [account],
  );
  return r.rows[0].n;
}

/** Both replicas at once with the same request; their statuses. */
async function both(path: string, body: unknown, headers: Record<string, string>): Promise<number[]> {
  const [x, y] = await Promise.all([
    fetch(`${a.url}${path}`, post(body, headers)),
    fetch(`${b.url}${path}`, post(body, headers)),
  ]);
  await Promise.all([x.text(), y.text()]);
  return [x.status, y.status].sort();
}

describe('one credential, two replicas, one PostgreSQL', () => {
  it('[mpp:race-pays-once] an MPP evm credential sent to both replicas at once pays once', async () => {
    const payer = newPayer();
    await chain.mint(payer.address, 1_000_000n);
    const wallet = Mppx.create({
      polyfill: false,
      methods: [evm.charge({ account: payer, currencies: [Assets.base.USDC] })],
    });
    const before = scrapes;
    const credential = await wallet.createCredential(await fetch(`${a.url}${SCRAPE}`, post(scrapeBody)));
    const statuses = await both(SCRAPE, scrapeBody, { authorization: credential });
    expect(statuses).toContain(200);
    expect(statuses.every((s) => s === 200 || s === 409)).toBe(true);
    expect(scrapes).toBe(before + 1);
    expect(await chain.transfersFrom(payer.address)).toBe(1);
    expect(await chargesOf(`x402_${payer.address.toLowerCase()}`)).toBe(1);
  });

  it('[mpp:race-pays-once] a Stripe shared payment token credential sent to both replicas at once: one capture', async () => {
    const wallet = Mppx.create({
      polyfill: false,
      methods: [
        stripe.charge({
          paymentMethod: 'pm_card_visa',
          createToken: async ({ amount, expiresAt }) => {
            const res = await fetch(`${stripeFake.url}/v1/test_helpers/shared_payment/granted_tokens`, {
              method: 'POST',
              headers: {
                authorization: `Bearer ${FAKE_SECRET_KEY}`,
                'stripe-version': '2026-07-29.preview',
                'content-type': 'application/x-www-form-urlencoded',
              },
              body: new URLSearchParams({
                payment_method: 'pm_card_visa',
                'usage_limits[currency]': 'usd',
                'usage_limits[max_amount]': amount,
                'usage_limits[expires_at]': String(expiresAt),
              }),
            });
            return ((await res.json()) as { id: string }).id;
          },
        }),
      ],
    });
    const before = renders;
    const captures = stripeFake.requests.filter((r) => r.path.endsWith('/capture')).length;
    const credential = await wallet.createCredential(await fetch(`${b.url}${RENDER}`, post(renderBody)));
    const statuses = await both(RENDER, renderBody, { authorization: credential });
    expect(statuses).toContain(200);
    expect(statuses.every((s) => s === 200 || s === 409)).toBe(true);
    expect(renders).toBe(before + 1);
    expect(stripeFake.requests.filter((r) => r.path.endsWith('/capture')).length).toBe(captures + 1);
    // However often it was presented, one PaymentIntent, captured once.
    const intents = [...stripeFake.objects.values()].filter((o) => o.object === 'payment_intent');
    expect(intents).toHaveLength(1);
    expect(intents[0]).toMatchObject({ status: 'succeeded', amount_received: 100 });
  });

  it('[x402:session-race-pays-once] one session voucher sent to both replicas at once pays once', async () => {
    const payer = newPayer();
    await chain.mint(payer.address, 1_000_000n);
    const scheme = new BatchSettlementEvmScheme(payer, { depositPolicy: { depositMultiplier: 10 } });
    const client = new x402Client().register('eip155:8453', scheme);
    // The channel is opened on A (a deposit), then the next voucher goes to A and B together.
    expect((await wrapFetchWithPayment(fetch, client)(`${a.url}${SCRAPE}`, post(scrapeBody))).status).toBe(
      200,
    );
    const voucher = encodePayment(
      await client.createPaymentPayload(challengeOf(await a.post(SCRAPE, scrapeBody))),
    );
    const before = scrapes;
    const statuses = await both(SCRAPE, scrapeBody, { 'payment-signature': voucher });
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.every((s) => s === 200 || s === 409 || s === 402)).toBe(true);
    expect(scrapes).toBe(before + 1);
    expect(await chargesOf(`x402_${payer.address.toLowerCase()}`)).toBe(2);
    // What the channel records is what the ledger charged: two calls.
    const ch = await sql.query('SELECT data FROM x402_channels');
    const charged = ch.rows
      .map((r) => JSON.parse(r.data))
      .find((c) => c.channelConfig.payer.toLowerCase() === payer.address.toLowerCase());
    expect(charged.chargedCumulativeAmount).toBe(String(2n * PRICE));
  });

  it('[x402:session-survives-replica-death] vouchers served by a replica that is gone are claimed by the survivor, once', async () => {
    const payer = newPayer();
    await chain.mint(payer.address, 1_000_000n);
    const client = new x402Client().register(
      'eip155:8453',
      new BatchSettlementEvmScheme(payer, { depositPolicy: { depositMultiplier: 10 } }),
    );
    const pay = wrapFetchWithPayment(fetch, client);
    for (let i = 0; i < 4; i++) expect((await pay(`${a.url}${SCRAPE}`, post(scrapeBody))).status).toBe(200);
    const before = await chain.balanceOf(merchant);
    // Everything charged so far on either replica and not yet claimed (this test's 4, the race test's 2).
    await a.close();
    const first = await sessionsOf(b.gw)?.claimAndSettle();
    expect(first?.claimed).toBeGreaterThanOrEqual(1);
    expect(await chain.balanceOf(merchant)).toBe(before + 6n * PRICE);
    expect((await sessionsOf(b.gw)?.claimAndSettle())?.claimed).toBe(0);
    expect(await chain.balanceOf(merchant)).toBe(before + 6n * PRICE);
    // The payer goes on on B with its channel.
    expect((await pay(`${b.url}${SCRAPE}`, post(scrapeBody))).status).toBe(200);
  });
});
