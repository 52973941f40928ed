import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { Challenge, Receipt } from 'mppx';
import { evm, Mppx, stripe } from 'mppx/client';
import { Assets } from 'mppx/evm';
import { McpClient } from 'mppx/mcp/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors.js';
import { FAKE_SECRET_KEY, type FakeStripe, startFakeStripe, stripeEnv } from '../fakes/stripe.js';
import { cardFingerprint } from '../fakes/stripe-wire.js';
import { startChain, type TestChain } from '../helpers/anvil.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { challengeOf, newPayer, x402Env } from '../helpers/x402.js';

// The Machine Payments Protocol end to end, through mppx's own client: the `evm` method (an EIP-3009
// authorization) settled on a real local chain by the gateway's x402 facilitator, and the `stripe` method (a
// shared payment token) against the fake Stripe speaking Stripe's wire format. Balances are read from the chain,
// payment intents from the fake, charges from the ledger.

const SECRET = 'mpp-test-secret-0123456789abcdefghijklmnop';
const PRICE = 10_000n; // scraperC/scrape: 1 cent in USDC atomic units
let chain: TestChain;
let stripeFake: FakeStripe;
let t: TestGateway;
const merchant = newPayer().address;
let renderFails = false;
/** Set: the capture after the next render finds Stripe down (every retry of the client too). */
let stripeDownAfterRender = false;
let renders = 0;
let scrapes = 0;

beforeAll(async () => {
  chain = await startChain();
  stripeFake = await startFakeStripe();
  t = await startGateway({
    env: {
      ...x402Env(chain, merchant),
      ...stripeEnv(stripeFake),
      TOLLGATE_MPP_METHODS: 'evm,stripe',
      TOLLGATE_MPP_SECRET_KEY: SECRET,
      TOLLGATE_MPP_STRIPE_NETWORK_ID: 'profile_test_tollgate',
      // videoasm/render's handler is replaced below; a key makes it available (and listed) as configured.
      TOLLGATE_CUEFRAME_API_KEY: 'test',
      TOLLGATE_CUEFRAME_BASE_URL: 'http://127.0.0.1:9',
    },
    handlers: {
      'scraperC/scrape': async () => {
        scrapes++;
        return { raw: '<html>paid</html>' };
      },
      'videoasm/render': async () => {
        renders++;
        if (renderFails) throw new GatewayError('upstream_error', 'the renderer failed');
        if (stripeDownAfterRender) stripeFake.failNext(3);
        return { job_id: `job_${renders}`, status: 'queued' };
      },
    },
  });
}, 60_000);
afterAll(async () => {
  await t?.close();
  await stripeFake?.close();
  await chain?.close();
});

const scrapeBody = { url: 'https://example.com/', browser: false };
const SCRAPE = '/api/run/scraperC/scrape';
const renderBody = { project_id: 'prj_0mdx3k2a1b2c3d4e5f6g7h8i9j', intent: 'preview' };

/** A fetch that records the request headers it sends (to replay a credential by hand). */
function recording(): { fetch: typeof fetch; sent: Headers[] } {
  const sent: Headers[] = [];
  return {
    sent,
    fetch: (input, init) => {
      sent.push(new Headers(init?.headers));
      return fetch(input, init);
    },
  };
}

async function fundedPayer(amount = 1_000_000n) {
  const payer = newPayer();
  await chain.mint(payer.address, amount);
  return payer;
}

/** An SPT granted by the fake Stripe, as an agent's wallet (or mppx's example server) asks for one. */
async function grantToken(p: { paymentMethod: string; amount: string; expiresAt: number }): Promise<string> {
  const body = new URLSearchParams({
    payment_method: p.paymentMethod,
    'usage_limits[currency]': 'usd',
    'usage_limits[max_amount]': p.amount,
    'usage_limits[expires_at]': String(p.expiresAt),
  });
  const res = await fetch(`${stripeFake.url}/v1/test_helpers/shared_payment/granted_tokens`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${FAKE_SECRET_KEY}`,
      'stripe-version': '2026-07-29.preview',
      'content-type': 'application/x-www-form-urlencoded',
    },
    body,
  });
  const json = (await res.json()) as { id: string };
  return json.id;
}

function stripeClient(paymentMethod = 'pm_card_visa', f: typeof fetch = fetch) {
  return Mppx.create({
    polyfill: false,
    fetch: f,
    methods: [
      stripe.charge({
        paymentMethod,
        createToken: ({ amount, expiresAt }) => grantToken({ paymentMethod, amount, expiresAt }),
      }),
    ],
  });
}

function evmClient(account: ReturnType<typeof newPayer>, f: typeof fetch = fetch) {
  // A wallet names the tokens it pays with; Base's USDC carries its EIP-712 domain.
  return Mppx.create({
    polyfill: false,
    fetch: f,
    methods: [evm.charge({ account, currencies: [Assets.base.USDC] })],
  });
}

const post = (body: unknown) => ({
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

describe('MPP beside x402', () => {
  it('[mpp:challenge-beside-x402] an unpaid call gets Payment challenges beside PAYMENT-REQUIRED, priced the same', async () => {
    const r = await t.post(SCRAPE, scrapeBody);
    expect(r.status).toBe(402);
    const x402 = challengeOf(r);
    const res = await fetch(`${t.url}${SCRAPE}`, post(scrapeBody));
    const challenges = Challenge.fromResponseList(res);
    expect(challenges.map((c) => `${c.method}/${c.intent}`)).toEqual(['evm/charge']);
    const [evmChallenge] = challenges;
    expect(evmChallenge?.request).toMatchObject({
      amount: x402.accepts[0]?.amount,
      currency: x402.accepts[0]?.asset,
      recipient: merchant,
      methodDetails: { chainId: 8453, decimals: 6, credentialTypes: ['authorization'] },
    });
    expect(evmChallenge?.realm).toBe(new URL(t.url).host);
    // A $1 action is also offered to cards (Stripe's minimum is $0.50), in cents.
    const render = await fetch(`${t.url}/api/run/videoasm/render`, post(renderBody));
    expect(render.status).toBe(402);
    const both = Challenge.fromResponseList(render);
    expect(both.map((c) => c.method)).toEqual(['evm', 'stripe']);
    expect(both[1]?.request).toMatchObject({
      amount: '100',
      currency: 'usd',
      methodDetails: { networkId: 'profile_test_tollgate', paymentMethodTypes: ['card'] },
    });
    expect(render.headers.get('access-control-expose-headers')).toMatch(/WWW-Authenticate/);
  });

  it('[mpp:evm-pays] mppx pays with evm: one settlement on chain, Payment-Receipt, the charge in the ledger', async () => {
    const payer = await fundedPayer();
    const before = await chain.balanceOf(merchant);
    const rec = recording();
    const res = await evmClient(payer, rec.fetch).fetch(`${t.url}${SCRAPE}`, post(scrapeBody));
    expect(res.status).toBe(200);
    const body = (await res.json()) as { ok: boolean; charged_cents: number; transaction_id: string };
    expect(body).toMatchObject({ ok: true, charged_cents: 1 });
    // The paid retry went through MPP (Authorization: Payment), not x402.
    expect(rec.sent.at(-1)?.get('authorization')).toMatch(/^Payment /);
    expect(rec.sent.at(-1)?.get('payment-signature')).toBeNull();
    const receipt = Receipt.fromResponse(res) as Receipt.Receipt & { jws?: string };
    expect(receipt).toMatchObject({
      status: 'success',
      method: 'evm',
      reference: expect.stringMatching(/^0x/),
    });
    expect(await chain.balanceOf(merchant)).toBe(before + PRICE);
    expect(await chain.balanceOf(payer.address)).toBe(1_000_000n - PRICE);
    const [tx] = await t.gw.ledger.transactions(`x402_${payer.address.toLowerCase()}`, 5);
    expect(tx).toMatchObject({
      id: body.transaction_id,
      action: 'scraperC/scrape',
      status: 'succeeded',
      charged_micros: 10_000,
      meta: { x402: { transaction: receipt.reference } },
    });
    await expectSignedReceipt(receipt.jws, {
      jti: body.transaction_id,
      method: 'evm',
      reference: receipt.reference,
    });
    expect(res.headers.get('tollgate-receipt')).toBe(receipt.jws);
  });

  it('[mpp:replay-pays-once] the same credential again: the same result, no second payment; another body: refused', async () => {
    const payer = await fundedPayer();
    const rec = recording();
    const first = await evmClient(payer, rec.fetch).fetch(`${t.url}${SCRAPE}`, post(scrapeBody));
    expect(first.status).toBe(200);
    const firstBody = await first.json();
    const credential = rec.sent.at(-1)?.get('authorization') as string;
    const runs = scrapes;
    const again = await fetch(`${t.url}${SCRAPE}`, {
      ...post(scrapeBody),
      headers: { 'content-type': 'application/json', authorization: credential },
    });
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual(firstBody);
    expect(Receipt.fromResponse(again).reference).toBe(Receipt.fromResponse(first).reference);
    expect(scrapes).toBe(runs);
    expect(await chain.transfersFrom(payer.address)).toBe(1);
    const other = await fetch(`${t.url}${SCRAPE}`, {
      ...post({ url: 'https://example.com/other', browser: false }),
      headers: { 'content-type': 'application/json', authorization: credential },
    });
    expect(other.status).toBe(402);
    expect(other.headers.get('www-authenticate')).toMatch(/^Payment /);
    expect(await chain.transfersFrom(payer.address)).toBe(1);
  });

  it('[mpp:refuses-foreign-challenges] a credential for another action, a forged challenge or a bad payload pays nothing', async () => {
    const payer = await fundedPayer();
    const rec = recording();
    await evmClient(payer, rec.fetch).fetch(`${t.url}${SCRAPE}`, post(scrapeBody));
    const credential = rec.sent.at(-1)?.get('authorization') as string;
    // Issued for scraperC/scrape, presented to videoasm/render.
    const elsewhere = await t.post('/api/run/videoasm/render', renderBody, {
      headers: { authorization: credential },
    });
    expect(elsewhere.status).toBe(402);
    // The 402 body mirrors the x402 challenge, whose `error` names the MPP problem.
    expect(elsewhere.body.error).toBe('invalid-challenge');
    // A challenge whose amount was lowered by the payer: its id no longer matches.
    const decoded = JSON.parse(Buffer.from(credential.slice('Payment '.length), 'base64url').toString());
    const req = JSON.parse(Buffer.from(decoded.challenge.request, 'base64url').toString());
    req.amount = '1';
    decoded.challenge.request = Buffer.from(JSON.stringify(req)).toString('base64url');
    const forged = `Payment ${Buffer.from(JSON.stringify(decoded)).toString('base64url')}`;
    const r = await t.post(
      SCRAPE,
      { url: 'https://example.com/forged', browser: false },
      { headers: { authorization: forged } },
    );
    expect(r.status).toBe(402);
    expect(r.body.error).toBe('invalid-challenge');
    const garbage = await t.post(SCRAPE, scrapeBody, {
      headers: { authorization: 'Payment not-base64-json' },
    });
    expect(garbage.status).toBe(402);
    expect(garbage.body.error).toBe('malformed-credential');
    expect(garbage.headers['www-authenticate']).toBeDefined();
    expect(await chain.transfersFrom(payer.address)).toBe(1);
  });

  it('[mpp:stripe-pays] mppx pays a $1 action with a Stripe shared payment token: held, run, captured once', async () => {
    const before = renders;
    const rec = recording();
    const res = await stripeClient('pm_card_visa', rec.fetch).fetch(
      `${t.url}/api/run/videoasm/render`,
      post(renderBody),
    );
    expect(res.status).toBe(200);
    const body = (await res.json()) as { charged_cents: number; transaction_id: string };
    expect(body.charged_cents).toBe(100);
    expect(renders).toBe(before + 1);
    const receipt = Receipt.fromResponse(res) as Receipt.Receipt & { jws?: string };
    expect(receipt).toMatchObject({
      status: 'success',
      method: 'stripe',
      reference: expect.stringMatching(/^pi_/),
    });
    const pi = stripeFake.objects.get(receipt.reference) as Record<string, unknown>;
    expect(pi).toMatchObject({
      status: 'succeeded',
      amount: 100,
      amount_received: 100,
      capture_method: 'manual',
    });
    // Authorized before the call ran, captured after it succeeded: one create, one capture.
    const calls = stripeFake.requests.filter((r) => r.path.startsWith('/v1/payment_intents'));
    expect(calls.map((r) => `${r.method} ${r.path.replace(/pi_\w+/, 'pi')}`)).toEqual([
      'POST /v1/payment_intents',
      'POST /v1/payment_intents/pi/capture',
    ]);
    await expectSignedReceipt(receipt.jws, {
      jti: body.transaction_id,
      method: 'stripe',
      reference: receipt.reference,
    });
    // Replayed: the stored result, no second capture.
    const again = await fetch(`${t.url}/api/run/videoasm/render`, {
      ...post(renderBody),
      headers: {
        'content-type': 'application/json',
        authorization: rec.sent.at(-1)?.get('authorization') as string,
      },
    });
    expect(again.status).toBe(200);
    expect(renders).toBe(before + 1);
    expect(stripeFake.requests.filter((r) => r.path.endsWith('/capture'))).toHaveLength(1);
  });

  it('[mpp:no-charge-on-failure] a failed action cancels the card hold: nothing captured, the credential spent', async () => {
    renderFails = true;
    try {
      const rec = recording();
      const res = await stripeClient('pm_card_visa', rec.fetch).fetch(
        `${t.url}/api/run/videoasm/render`,
        post(renderBody),
      );
      expect(res.status).toBe(502);
      expect(res.headers.get('payment-receipt')).toBeNull();
      const created = stripeFake.requests.filter(
        (r) => r.method === 'POST' && r.path === '/v1/payment_intents',
      );
      const pi = [...stripeFake.objects.values()].find(
        (o) => o.object === 'payment_intent' && o.status === 'canceled',
      ) as Record<string, unknown>;
      expect(pi).toMatchObject({ amount: 100, amount_received: 0, cancellation_reason: 'abandoned' });
      expect(created.length).toBeGreaterThan(0);
      const again = await t.post('/api/run/videoasm/render', renderBody, {
        headers: { authorization: rec.sent.at(-1)?.get('authorization') as string },
      });
      expect(again.status).toBe(402);
    } finally {
      renderFails = false;
    }
  });

  it('[mpp:settlement-unknown-resumes] a capture whose outcome is unknown: 503, then the same credential captures once and gets the result', async () => {
    const before = renders;
    const rec = recording();
    stripeDownAfterRender = true;
    let first: Response;
    try {
      first = await stripeClient('pm_card_visa', rec.fetch).fetch(
        `${t.url}/api/run/videoasm/render`,
        post(renderBody),
      );
    } finally {
      stripeDownAfterRender = false;
    }
    expect(first.status).toBe(503);
    expect(((await first.json()) as { error: { code: string } }).error.code).toBe(
      'payment_settlement_unknown',
    );
    expect(first.headers.get('retry-after')).toBeTruthy();
    const held = [...stripeFake.objects.values()].filter(
      (o) => o.object === 'payment_intent' && o.status === 'requires_capture',
    );
    expect(held).toHaveLength(1);
    const credential = rec.sent.at(-1)?.get('authorization') as string;
    const again = await t.post('/api/run/videoasm/render', renderBody, {
      headers: { authorization: credential },
    });
    expect(again.status).toBe(200);
    // The action ran once; its stored result is delivered now, paid by the one capture.
    expect(renders).toBe(before + 1);
    expect(again.body.data.job_id).toBe(`job_${before + 1}`);
    expect(Receipt.deserialize(String(again.headers['payment-receipt'])).reference).toBe(held[0]?.id);
    expect(stripeFake.objects.get(held[0]?.id as string)).toMatchObject({ status: 'succeeded' });
    // In the ledger: the first attempt voided, the capture recorded once, as a call of its own.
    const account = `x402_stripe:card:${cardFingerprint('4242424242424242')}`.toLowerCase();
    const paidBy = (await t.gw.ledger.transactions(account, 50)).filter(
      (x) => (x.meta as { mpp?: { reference?: string } } | undefined)?.mpp?.reference === held[0]?.id,
    );
    expect(paidBy.map((x) => [x.status, x.charged_micros])).toEqual([['succeeded', 1_000_000]]);
    const third = await t.post('/api/run/videoasm/render', renderBody, {
      headers: { authorization: credential },
    });
    expect(third.status).toBe(200);
    expect(
      stripeFake.requests.filter(
        (r) => r.path === `/v1/payment_intents/${held[0]?.id}/capture` && r.status === 200,
      ),
    ).toHaveLength(1);
  });

  it('[mpp:no-charge-on-failure] a declined card: 402 with fresh challenges, the action does not run', async () => {
    const before = renders;
    const client = stripeClient('pm_card_chargeDeclined');
    const res = await client.fetch(`${t.url}/api/run/videoasm/render`, post(renderBody));
    expect(res.status).toBe(402);
    expect(Challenge.fromResponseList(res).map((c) => c.method)).toContain('stripe');
    expect(renders).toBe(before);
  });
});

async function expectSignedReceipt(
  jws: string | undefined,
  expected: { jti: string; method: string; reference: string },
): Promise<void> {
  expect(jws).toBeTypeOf('string');
  const jwks = await (await fetch(`${t.url}/.well-known/tollgate-receipts.json`)).json();
  const { payload } = await jwtVerify(jws as string, createLocalJWKSet(jwks), {
    typ: 'tollgate-receipt+jwt',
  });
  expect(payload).toMatchObject({
    jti: expected.jti,
    payment_method: 'mpp',
    mpp: { method: expected.method, reference: expected.reference },
  });
}

describe('MPP over MCP', () => {
  it("[mpp:mcp-pays-through-meta] mppx's MCP client pays a tool on /mcp/x402: challenge and receipt in _meta", async () => {
    const payer = await fundedPayer();
    const before = await chain.balanceOf(merchant);
    const sdk = new V1Client({ name: 'mpp-wallet', version: '1' });
    await sdk.connect(new V1Transport(new URL(`${t.url}/mcp/x402`)));
    try {
      // Unpaid: the x402 challenge as an isError result, the MPP challenges beside it in _meta.
      const unpaid = (await sdk.callTool({ name: 'scraperC_scrape', arguments: scrapeBody })) as {
        isError?: boolean;
        _meta?: Record<string, unknown>;
      };
      expect(unpaid.isError).toBe(true);
      const offered = unpaid._meta?.['org.paymentauth/payment-required'] as {
        challenges: Array<{ method: string }>;
      };
      expect(offered.challenges.map((c) => c.method)).toEqual(['evm']);
      // [mpp:declared] the tool list names MPP in each paid tool's terms.
      const listed = (await sdk.listTools()).tools.find((x) => x.name === 'scraperC_scrape');
      const terms = listed?._meta?.['tollgate/payment'] as { protocols: Array<{ protocol: string }> };
      expect(terms.protocols.map((p) => p.protocol)).toEqual(['x402', 'mpp', 'api_key']);

      const wallet = McpClient.wrap(sdk, {
        methods: [evm.charge({ account: payer, currencies: [Assets.base.USDC] })],
      });
      const paid = await wallet.callTool({ name: 'scraperC_scrape', arguments: scrapeBody });
      expect(paid.isError).toBeFalsy();
      expect(paid.structuredContent).toMatchObject({ raw: '<html>paid</html>', charged_cents: 1 });
      expect(paid.receipt).toMatchObject({
        status: 'success',
        method: 'evm',
        challengeId: expect.any(String),
      });
      expect(await chain.balanceOf(merchant)).toBe(before + PRICE);
    } finally {
      await sdk.close();
    }
  });
});

describe('MPP declared', () => {
  it('[mpp:declared] descriptors, /openapi.json, the MCP tool list and the server card declare MPP beside x402', async () => {
    const d = await t.get('/api/run/videoasm/render');
    const protocols = d.body.payment.protocols as Array<Record<string, unknown>>;
    expect(protocols.map((p) => p.protocol)).toEqual(['x402', 'mpp', 'api_key']);
    expect(protocols[1]).toMatchObject({
      scheme: 'Payment',
      challenge_header: 'WWW-Authenticate',
      methods: [
        { method: 'evm', intent: 'charge', amount: '1000000', recipient: merchant },
        {
          method: 'stripe',
          intent: 'charge',
          currency: 'usd',
          amount: '100',
          network_id: 'profile_test_tollgate',
        },
      ],
    });
    // Below Stripe's minimum only evm is declared.
    const cheap = (await t.get('/api/run/scraperC/scrape')).body.payment.protocols as Array<
      Record<string, unknown>
    >;
    expect(cheap[1]?.methods).toHaveLength(1);
    const openapi = (await t.get('/openapi.json')).body;
    expect(openapi.components.securitySchemes.mpp).toMatchObject({ type: 'http', scheme: 'Payment' });
    expect(openapi.paths['/api/run/videoasm/render'].post.security).toContainEqual({ mpp: [] });
    const card = (await t.get('/.well-known/mcp/server-card.json')).body;
    expect(card._meta['tollgate/catalog'].payment).toContain('mpp');
    // The API key pays as before, with its own receipt and no MPP receipt.
    const { key } = await t.account('1');
    const keyed = await t.post(SCRAPE, scrapeBody, { key });
    expect(keyed.status).toBe(200);
    expect(keyed.headers['tollgate-receipt']).toBeDefined();
    expect(keyed.headers['payment-receipt']).toBeUndefined();
  });
});

describe('MPP without x402 (cards only)', () => {
  it('[mpp:challenge-beside-x402] with x402 off, the 402 carries the Payment challenge alone and names MPP; a card pays', async () => {
    const cards = await startGateway({
      env: {
        ...stripeEnv(stripeFake),
        TOLLGATE_MPP_METHODS: 'stripe',
        TOLLGATE_MPP_SECRET_KEY: SECRET,
        TOLLGATE_MPP_STRIPE_NETWORK_ID: 'profile_test_tollgate',
      },
      handlers: { 'videoasm/render': async () => ({ job_id: 'job_cards', status: 'queued' }) },
    });
    try {
      const unpaid = await cards.post('/api/run/videoasm/render', renderBody);
      expect(unpaid.status).toBe(402);
      expect(unpaid.headers['payment-required']).toBeUndefined();
      expect(String(unpaid.headers['www-authenticate'])).toMatch(/^Payment .*method="stripe"/);
      expect(unpaid.body.error.message).toMatch(/Pay with MPP/);
      // Below Stripe's minimum nothing but the API key can pay: no challenge is offered.
      const cheap = await cards.post(SCRAPE, scrapeBody);
      expect(cheap.status).toBe(402);
      expect(cheap.headers['www-authenticate']).toBeUndefined();
      const res = await stripeClient().fetch(`${cards.url}/api/run/videoasm/render`, post(renderBody));
      expect(res.status).toBe(200);
      expect(Receipt.fromResponse(res)).toMatchObject({ method: 'stripe', status: 'success' });
    } finally {
      await cards.close();
    }
  });
});
