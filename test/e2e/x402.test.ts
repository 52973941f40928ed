import type { PaymentPayload, PaymentRequired } from '@x402/core/types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANONYMOUS } from '../../auth/principal.js';
import { GatewayError } from '../../src/errors.js';
import { execute } from '../../src/run/execute.js';
import { DEV_KEY, startChain, type TestChain } from '../helpers/anvil.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { html, startSite } from '../helpers/site.js';
import {
  capturingLogger,
  challengeOf,
  encodePayment,
  newPayer,
  officialPayment,
  paidFetch,
  receiptOf,
  signPayment,
  x402Env,
} from '../helpers/x402.js';

// x402 end to end on a real chain: anvil (chain id 8453) with a USDC look-alike at Base's USDC address, the
// gateway's built-in facilitator (the official @x402/core + @x402/evm code) settling on it, and the official
// @x402/fetch client paying. Balances are read from the chain; the ledger from the gateway.

const PRICE = 10_000n; // 1 cent = 10,000 USDC atomic units

let chain: TestChain;
let t: TestGateway;
const merchant = newPayer().address;
let scrapeCalls = 0;
let scrapeBehaviour: () => Promise<{ raw: string }> = async () => ({ raw: '<html>ok</html>' });

beforeAll(async () => {
  chain = await startChain();
  t = await startGateway({
    env: x402Env(chain, merchant),
    handlers: {
      'scraperC/scrape': async () => {
        scrapeCalls++;
        return scrapeBehaviour();
      },
    },
  });
});
afterAll(async () => {
  await t?.close();
  await chain?.close();
});

const scrapeBody = { url: 'https://example.com/', browser: false };

async function fundedPayer(amount = 1_000_000n) {
  const payer = newPayer();
  await chain.mint(payer.address, amount);
  return payer;
}

async function challengeFor(path: string, body: unknown) {
  const r = await t.post(path, body);
  expect(r.status).toBe(402);
  return challengeOf(r);
}

function payWith(path: string, body: unknown, payment: PaymentPayload | string) {
  const header = typeof payment === 'string' ? payment : encodePayment(payment);
  return t.post(path, body, { headers: { 'payment-signature': header } });
}

describe('x402 over HTTP on a local chain', () => {
  it('[x402:unpaid-call-gets-402] a call without credentials gets the v2 challenge, header and body', async () => {
    const r = await t.post('/api/run/platform/consult', { intent: 'scrape https://example.com' });
    expect(r.status).toBe(402);
    expect(r.headers['cache-control']).toBe('no-store');
    const challenge = challengeOf(r);
    expect(r.body).toEqual(challenge);
    expect(challenge).toEqual({
      x402Version: 2,
      error: 'Payment required',
      resource: {
        url: `${t.url}/api/run/platform/consult`,
        description: expect.stringContaining('$0.01 USDC per successful call'),
        mimeType: 'application/json',
      },
      accepts: [
        {
          scheme: 'exact',
          network: 'eip155:8453',
          amount: '10000',
          asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
          payTo: merchant,
          maxTimeoutSeconds: 300,
          extra: { name: 'USD Coin', version: '2' },
        },
      ],
      // Discovery and idempotency declarations: test/e2e/x402-discovery.test.ts.
      extensions: { bazaar: expect.any(Object), 'payment-identifier': expect.any(Object) },
    });
  });

  it('[x402:official-client-pays] [x402:consult-without-key] the official client pays; exactly the price moves and is recorded', async () => {
    const payer = await fundedPayer();
    const before = await chain.balanceOf(merchant);
    const res = await paidFetch(payer)(`${t.url}/api/run/platform/consult`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ intent: 'read https://example.com/docs as markdown' }),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { ok: boolean; charged_cents: number; transaction_id: string };
    expect(body).toMatchObject({
      ok: true,
      charged_cents: 1,
      transaction_id: expect.stringMatching(/^txn_/),
    });
    const receipt = receiptOf({
      headers: { 'payment-response': res.headers.get('payment-response') ?? '' },
    } as never);
    expect(receipt).toMatchObject({
      success: true,
      network: 'eip155:8453',
      transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/),
    });

    expect(await chain.balanceOf(payer.address)).toBe(1_000_000n - PRICE);
    expect(await chain.balanceOf(merchant)).toBe(before + PRICE);

    const accountId = `x402_${payer.address.toLowerCase()}`;
    const [tx] = await t.gw.ledger.transactions(accountId, 5);
    expect(tx).toMatchObject({
      id: body.transaction_id,
      action: 'platform/consult',
      status: 'succeeded',
      charged_micros: 10_000,
      payment_method: 'x402',
      principal: `x402:${payer.address}`,
      meta: {
        x402: {
          payer: payer.address,
          network: 'eip155:8453',
          amount: '10000',
          transaction: receipt.transaction,
        },
      },
    });
    // Credited with the payment, charged the price: the per-payer account nets to zero.
    expect(await t.gw.ledger.balance(accountId)).toEqual({
      balance_micros: 0,
      held_micros: 0,
      available_micros: 0,
    });
  });
});

describe('x402: charge only after success, once', () => {
  it('[polls:x402-bearer] [polls:free-unpriced] an accountless payer polls its crawl anonymously and free', async () => {
    const site = await startSite({
      '/': (_q, res) => {
        res.writeHead(200, { 'content-type': 'text/html' }).end(html('<h1>Home</h1><a href="/b">b</a>'));
      },
      '/b': (_q, res) => {
        res.writeHead(200, { 'content-type': 'text/html' }).end(html('<h1>B</h1>'));
      },
    });
    try {
      const payer = await fundedPayer();
      const res = await paidFetch(payer)(`${t.url}/api/run/scraperA/crawl`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ url: `${site.url}/`, limit: 2 }),
      });
      expect(res.status).toBe(200);
      const { data } = (await res.json()) as { data: { id: string } };
      // No credentials, no payment: the handle itself is the capability of an accountless payer.
      let poll = await t.post('/api/run/scraperA/crawl_status', { id: data.id });
      for (let i = 0; i < 50 && poll.body.data?.finished === false; i++) {
        await new Promise((r) => setTimeout(r, 1_100));
        poll = await t.post('/api/run/scraperA/crawl_status', { id: data.id });
      }
      expect(poll.status).toBe(200);
      expect(poll.body).toMatchObject({ ok: true, charged_cents: 0, data: { finished: true } });
      expect(poll.body.transaction_id).toBeUndefined();
      // An account's crawl is not a bearer handle: anonymously it is not found.
      const { key } = await t.account('1');
      const own = await t.post('/api/run/scraperA/crawl', { url: `${site.url}/`, limit: 1 }, { key });
      const stolen = await t.post('/api/run/scraperA/crawl_status', { id: own.body.data.id });
      expect(stolen.status).toBe(404);
      expect((await t.post('/api/run/scraperA/crawl_status', { id: own.body.data.id }, { key })).status).toBe(
        200,
      );
    } finally {
      await site.close();
    }
  });

  it('[x402:no-settle-on-failure] a failing action settles nothing and records no charge; the payment stays usable', async () => {
    const payer = await fundedPayer();
    const path = '/api/run/scraperC/scrape';
    const payment = await officialPayment(payer, await challengeFor(path, scrapeBody));
    scrapeBehaviour = async () => {
      throw new GatewayError('upstream_error', 'The upstream failed; nothing was charged.');
    };
    const calls = scrapeCalls;
    const failed = await payWith(path, scrapeBody, payment);
    expect(failed.status).toBe(502);
    expect(failed.headers['payment-response']).toBeUndefined();
    expect(scrapeCalls).toBe(calls + 1);
    expect(await chain.balanceOf(payer.address)).toBe(1_000_000n);
    expect(await chain.transfersFrom(payer.address)).toBe(0);
    const accountId = `x402_${payer.address.toLowerCase()}`;
    const [tx] = await t.gw.ledger.transactions(accountId, 5);
    expect(tx).toMatchObject({ status: 'failed', charged_micros: 0, error_code: 'upstream_error' });
    expect(await t.gw.ledger.balance(accountId)).toEqual({
      balance_micros: 0,
      held_micros: 0,
      available_micros: 0,
    });

    // Nothing was collected, so the same signed payment may pay for a retry that succeeds.
    scrapeBehaviour = async () => ({ raw: '<html>ok</html>' });
    const ok = await payWith(path, scrapeBody, payment);
    expect(ok.status).toBe(200);
    expect(await chain.balanceOf(payer.address)).toBe(1_000_000n - PRICE);
  });

  it('[x402:replay-runs-once] the same payment replayed sequentially and 10 times concurrently runs once and moves money once', async () => {
    scrapeBehaviour = async () => {
      await new Promise((r) => setTimeout(r, 50));
      return { raw: '<html>once</html>' };
    };
    const path = '/api/run/scraperC/scrape';
    const payer = await fundedPayer();
    const challenge = await challengeFor(path, scrapeBody);

    // Sequential: the replay gets the stored result and receipt, nothing runs or moves again.
    const first = await officialPayment(payer, challenge);
    let calls = scrapeCalls;
    const a = await payWith(path, scrapeBody, first);
    const b = await payWith(path, scrapeBody, first);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(b.body).toEqual(a.body);
    expect(b.headers['idempotent-replayed']).toBe('true');
    expect(receiptOf(b)).toEqual(receiptOf(a));
    expect(scrapeCalls).toBe(calls + 1);
    expect(await chain.transfersFrom(payer.address)).toBe(1);

    // Concurrent: one call runs; the others wait their turn (409, retry) or get its replay.
    const second = await officialPayment(payer, challenge);
    calls = scrapeCalls;
    const replies = await Promise.all(Array.from({ length: 10 }, () => payWith(path, scrapeBody, second)));
    const statuses = replies.map((r) => r.status);
    expect(statuses.every((s) => s === 200 || s === 409)).toBe(true);
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThanOrEqual(1);
    expect(scrapeCalls).toBe(calls + 1);
    expect(await chain.transfersFrom(payer.address)).toBe(2);
    expect(await chain.balanceOf(payer.address)).toBe(1_000_000n - 2n * PRICE);
    const again = await payWith(path, scrapeBody, second);
    expect(again.status).toBe(200);
    expect(scrapeCalls).toBe(calls + 1);

    // The same payment for another call is refused.
    const other = await payWith(path, { ...scrapeBody, url: 'https://example.org/' }, second);
    expect(other.status).toBe(402);
    expect(other.body.error).toBe('payment_already_used');
    const accountId = `x402_${payer.address.toLowerCase()}`;
    const txs = await t.gw.ledger.transactions(accountId, 10);
    expect(txs.filter((x) => x.status === 'succeeded')).toHaveLength(2);
  });

  it('[x402:parallel-settlements] parallel payments from many payers all settle (nonce manager)', async () => {
    scrapeBehaviour = async () => ({ raw: '<html>ok</html>' });
    const payers = await Promise.all(Array.from({ length: 8 }, () => fundedPayer()));
    const before = await chain.balanceOf(merchant);
    const statuses = await Promise.all(
      payers.map(async (p) => {
        const res = await paidFetch(p)(`${t.url}/api/run/scraperC/scrape`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(scrapeBody),
        });
        await res.arrayBuffer();
        return res.status;
      }),
    );
    expect(statuses).toEqual(Array(8).fill(200));
    expect(await chain.balanceOf(merchant)).toBe(before + 8n * PRICE);
  });
});

describe('x402: refused payments', () => {
  const path = '/api/run/scraperC/scrape';

  async function expectRefused(payment: PaymentPayload | string, reason: string) {
    const calls = scrapeCalls;
    const r = await payWith(path, scrapeBody, payment);
    expect(r.status).toBe(402);
    expect(r.body.error).toBe(reason);
    expect(challengeOf(r)).toEqual(r.body);
    expect(scrapeCalls).toBe(calls);
  }

  it('[x402:invalid-payment-402] wrong amount, payTo, window, signature, network or encoding: 402 with the reason, nothing runs', async () => {
    scrapeBehaviour = async () => ({ raw: '<html>ok</html>' });
    const payer = await fundedPayer();
    const challenge = await challengeFor(path, scrapeBody);
    const req = challenge.accepts[0] as PaymentPayload['accepted'];
    const now = BigInt(Math.floor(Date.now() / 1000));
    const doctored = (patch: Partial<typeof req>) => ({ ...challenge, accepts: [{ ...req, ...patch }] });

    await expectRefused(
      await officialPayment(payer, doctored({ amount: '5000' })),
      'invalid_exact_evm_payload_authorization_value_mismatch',
    );
    await expectRefused(
      await officialPayment(payer, doctored({ payTo: newPayer().address })),
      'invalid_exact_evm_payload_recipient_mismatch',
    );
    await expectRefused(
      await officialPayment(payer, doctored({ network: 'eip155:84532' }), ['eip155:84532']),
      'invalid_network',
    );
    await expectRefused(
      await signPayment(payer, req, { validBefore: now - 10n }),
      'invalid_exact_evm_payload_authorization_valid_before',
    );
    await expectRefused(
      await signPayment(payer, req, { validAfter: now + 3600n }),
      'invalid_exact_evm_payload_authorization_valid_after',
    );
    await expectRefused(
      await signPayment(payer, req, { signer: newPayer() }),
      'invalid_exact_evm_payload_signature',
    );
    await expectRefused('not base64!', 'invalid_payload');
    await expectRefused(encodePayment({ x402Version: 2, hello: 'world' }), 'invalid_payload');
    // Checked by the facilitator on chain: a payer without the funds.
    await expectRefused(
      await officialPayment(newPayer(), challenge),
      'invalid_exact_evm_insufficient_balance',
    );

    expect(await chain.transfersFrom(payer.address)).toBe(0);
    expect(await chain.balanceOf(payer.address)).toBe(1_000_000n);
  });

  it('[x402:settle-failure-withholds] when settlement fails after the action, the result is withheld and nothing is charged', async () => {
    const payer = await fundedPayer();
    await chain.setEthBalance(payer.address, 10n ** 18n);
    const payment = await officialPayment(payer, await challengeFor(path, scrapeBody));
    // The payer moves its funds away while the action runs (front-running the settlement).
    scrapeBehaviour = async () => {
      await chain.transferAs(payer, newPayer().address, 1_000_000n);
      return { raw: '<html>secret</html>' };
    };
    const before = await chain.balanceOf(merchant);
    const r = await payWith(path, scrapeBody, payment);
    expect(r.status).toBe(402);
    expect(r.text).not.toContain('secret');
    expect(receiptOf(r)).toMatchObject({ success: false, errorReason: expect.any(String) });
    expect(r.body.error).toBe(receiptOf(r).errorReason);
    expect(await chain.balanceOf(merchant)).toBe(before);
    const accountId = `x402_${payer.address.toLowerCase()}`;
    const [tx] = await t.gw.ledger.transactions(accountId, 1);
    expect(tx).toMatchObject({ status: 'failed', charged_micros: 0 });
    expect(await t.gw.ledger.balance(accountId)).toEqual({
      balance_micros: 0,
      held_micros: 0,
      available_micros: 0,
    });
    // Presented again: refused (it cannot be settled), and the action does not run again.
    const calls = scrapeCalls;
    const again = await payWith(path, scrapeBody, payment);
    expect(again.status).toBe(402);
    expect(scrapeCalls).toBe(calls);
    scrapeBehaviour = async () => ({ raw: '<html>ok</html>' });
  });
});

describe('x402: unknown settlement outcomes and settle-first actions', () => {
  let t2: TestGateway;
  let residentialCalls = 0;
  let residential: () => Promise<{ raw: string }> = async () => ({ raw: '<html>res</html>' });
  const logs = capturingLogger();
  beforeAll(async () => {
    t2 = await startGateway({
      log: logs.log,
      env: x402Env(chain, merchant, {
        // A settlement whose receipt takes longer than this is "unknown" (and resumable).
        TOLLGATE_X402_FACILITATOR_TIMEOUT_SECONDS: '1',
        // scraperC/scrape_residential (4 cents) settles before it runs.
        TOLLGATE_X402_SETTLE_FIRST_CENTS: '4',
      }),
      handlers: {
        'scraperC/scrape': async () => {
          scrapeCalls++;
          return { raw: '<html>late</html>' };
        },
        'scraperC/scrape_residential': async () => {
          residentialCalls++;
          return residential();
        },
      },
    });
  });
  afterAll(() => t2?.close());

  const post = (path: string, body: unknown, payment?: PaymentPayload) =>
    t2.post(path, body, payment ? { headers: { 'payment-signature': encodePayment(payment) } } : {});

  it('[x402:settlement-unknown-503] an unconfirmed settlement answers 503; the same payment later delivers the result once', async () => {
    const path = '/api/run/scraperC/scrape';
    const payer = await fundedPayer();
    const payment = await officialPayment(payer, challengeOf(await post(path, scrapeBody)));
    const calls = scrapeCalls;
    await chain.setAutomine(false);
    try {
      const first = await post(path, scrapeBody, payment);
      expect(first.status).toBe(503);
      expect(first.headers['retry-after']).toBe('5');
      expect(first.body.error.code).toBe('payment_settlement_unknown');
      expect(first.text).not.toContain('late'); // the result is withheld until the money is known to have moved
      const tx = first.body.error.details.transaction as string;
      expect(tx).toMatch(/^0x[0-9a-f]{64}$/);
      // Still pending: still 503, and the action does not run again.
      expect((await post(path, scrapeBody, payment)).status).toBe(503);
      expect(scrapeCalls).toBe(calls + 1);
      await chain.mine();
    } finally {
      await chain.setAutomine(true);
    }
    const done = await post(path, scrapeBody, payment);
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ ok: true, data: { raw: '<html>late</html>' }, charged_cents: 1 });
    expect(receiptOf(done)).toMatchObject({ success: true });
    expect(scrapeCalls).toBe(calls + 1);
    expect(await chain.transfersFrom(payer.address)).toBe(1);
    expect(await chain.balanceOf(payer.address)).toBe(1_000_000n - PRICE);

    const accountId = `x402_${payer.address.toLowerCase()}`;
    const txs = await t2.gw.ledger.transactions(accountId, 5);
    const failed = txs.find((x) => x.status === 'failed');
    const late = txs.find((x) => x.status === 'succeeded');
    expect(failed).toMatchObject({ error_code: 'payment_settlement_unknown', charged_micros: 0 });
    expect(late).toMatchObject({
      id: done.body.transaction_id,
      charged_micros: 10_000,
      meta: { resumed_from: failed?.id, x402: { transaction: receiptOf(done).transaction } },
    });
    expect(await t2.gw.ledger.balance(accountId)).toEqual({
      balance_micros: 0,
      held_micros: 0,
      available_micros: 0,
    });
    const replay = await post(path, scrapeBody, payment);
    expect(replay.body).toEqual(done.body);
    // The unknown outcome was logged loudly, and the signer key never reached the logs.
    expect(logs.text()).toContain('x402 settlement outcome unknown');
    expect(logs.text()).not.toContain(DEV_KEY.slice(2));
  });

  it('[x402:settle-first] a settle-first action takes the money before running; if it then fails, a refund is owed', async () => {
    const path = '/api/run/scraperC/scrape_residential';
    const challenge = challengeOf(await post(path, scrapeBody));
    expect(challenge.accepts[0]).toMatchObject({
      amount: '40000',
      extra: { name: 'USD Coin', version: '2', paymentFlow: 'upfront' },
    });
    const payer = await fundedPayer();
    const accountId = `x402_${payer.address.toLowerCase()}`;

    residential = async () => ({ raw: '<html>res</html>' });
    const ok = await post(path, scrapeBody, await officialPayment(payer, challenge));
    expect(ok.status).toBe(200);
    expect(await chain.balanceOf(payer.address)).toBe(1_000_000n - 40_000n);
    expect(await t2.gw.ledger.balance(accountId)).toMatchObject({ balance_micros: 0 });

    residential = async () => {
      throw new GatewayError('upstream_error', 'The upstream failed; nothing was charged.');
    };
    const failed = await post(path, scrapeBody, await officialPayment(payer, challenge));
    expect(failed.status).toBe(502);
    expect(failed.body.error.message).toContain('refund owed');
    expect(receiptOf(failed)).toMatchObject({ success: true });
    expect(await chain.balanceOf(payer.address)).toBe(1_000_000n - 80_000n);
    const [tx] = await t2.gw.ledger.transactions(accountId, 1);
    expect(tx).toMatchObject({ status: 'failed', charged_micros: 0 });
    // The settled amount stays on the payer's account: what the operator owes back.
    expect(await t2.gw.ledger.balance(accountId)).toMatchObject({ balance_micros: 40_000, held_micros: 0 });

    // Settle-first with an unknown outcome: nothing runs until the money is known to have moved.
    residential = async () => ({ raw: '<html>res</html>' });
    const payment = await officialPayment(payer, challenge);
    const calls = residentialCalls;
    await chain.setAutomine(false);
    try {
      expect((await post(path, scrapeBody, payment)).status).toBe(503);
      expect(residentialCalls).toBe(calls);
      await chain.mine();
    } finally {
      await chain.setAutomine(true);
    }
    const resumed = await post(path, scrapeBody, payment);
    expect(resumed.status).toBe(200);
    expect(residentialCalls).toBe(calls + 1);
    expect(await chain.balanceOf(payer.address)).toBe(1_000_000n - 120_000n);
  });
});

describe('x402 through the API the MCP door calls', () => {
  it('[x402:official-client-pays] execute takes the payment as an object or a base64 string (MCP _meta) and returns the receipt', async () => {
    const payer = await fundedPayer();
    const call = (payment?: unknown) =>
      execute(t.gw.run, 'platform/consult', { intent: 'scrape https://example.com' }, ANONYMOUS, {
        payment,
        transport: 'mcp',
      });
    const unpaid = await call();
    expect(unpaid.ok).toBe(false);
    expect(unpaid.parts?.paymentRequired?.resource.url).toBe('mcp://tool/platform_consult');
    const challenge = unpaid.parts?.paymentRequired as PaymentRequired;

    const asObject = await call(await officialPayment(payer, challenge));
    expect(asObject).toMatchObject({ ok: true, chargedCents: 1 });
    expect(asObject.parts?.paymentResponse).toMatchObject({ success: true, network: 'eip155:8453' });
    const asString = await call(encodePayment(await officialPayment(payer, challenge)));
    expect(asString).toMatchObject({ ok: true, chargedCents: 1 });
    expect(await chain.transfersFrom(payer.address)).toBe(2);

    const refused = await call({ x402Version: 2 });
    expect(refused.parts?.paymentRequired?.error).toBe('invalid_payload');
    expect(refused.ok).toBe(false);
  });
});
