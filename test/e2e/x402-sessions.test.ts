import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { x402Client } from '@x402/core/client';
import { decodePaymentResponseHeader } from '@x402/core/http';
import type { PaymentRequired } from '@x402/core/types';
import { BatchSettlementEvmScheme } from '@x402/evm/batch-settlement/client';
import {
  extractReceiptFromResponse,
  type JWSSignedReceipt,
  verifyReceiptSignatureJWS,
} from '@x402/extensions/offer-receipt';
import { wrapFetchWithPayment } from '@x402/fetch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors.js';
import { BATCH_SETTLEMENT, startChain, type TestChain } from '../helpers/anvil.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { challengeOf, encodePayment, newPayer, paidFetch, sessionsOf, x402Env } from '../helpers/x402.js';

// x402 sessions (the batch-settlement scheme) end to end on a real local chain, through the official client
// (@x402/fetch with @x402/evm's batch-settlement client scheme): the first call opens a channel with a deposit
// (one on-chain transaction, made only once the call succeeded), every later call is paid with a signed voucher
// and no transaction, and the gateway claims the vouchers in one batch and sweeps them to its pay-to address,
// exactly once, even across a restart.

const PRICE = 10_000n; // scraperC/scrape: 1 cent in USDC atomic units
const SESSION_ENV = { TOLLGATE_X402_SESSIONS: 'on', TOLLGATE_X402_SESSION_CLAIM_SECONDS: '3600' };
let chain: TestChain;
let t: TestGateway;
const merchant = newPayer().address;
let scrapes = 0;
let failScrape = false;
const handlers = {
  'scraperC/scrape': async () => {
    scrapes++;
    if (failScrape) throw new GatewayError('upstream_error', 'the page failed');
    return { raw: '<html>session</html>' };
  },
};

beforeAll(async () => {
  chain = await startChain();
  t = await startGateway({ env: { ...x402Env(chain, merchant), ...SESSION_ENV }, handlers, keepData: true });
}, 60_000);
afterAll(async () => {
  await t?.close();
  await chain?.close();
});

const scrapeBody = { url: 'https://example.com/', browser: false };
const SCRAPE = '/api/run/scraperC/scrape';

function sessionClient(payer: ReturnType<typeof newPayer>) {
  const scheme = new BatchSettlementEvmScheme(payer, { depositPolicy: { depositMultiplier: 10 } });
  const client = new x402Client().register('eip155:8453', scheme);
  return { client, scheme, fetch: wrapFetchWithPayment(fetch, client) };
}

async function fundedPayer(amount = 1_000_000n) {
  const payer = newPayer();
  await chain.mint(payer.address, amount);
  return payer;
}

const post = (body: unknown) => ({
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

describe('x402 sessions (batch-settlement)', () => {
  it('[x402:session-offered] the challenge offers a session beside exact, at the same price', async () => {
    const r = await t.post(SCRAPE, scrapeBody);
    expect(r.status).toBe(402);
    const accepts = challengeOf(r).accepts;
    expect(accepts.map((a) => a.scheme)).toEqual(['exact', 'batch-settlement']);
    expect(accepts[1]).toMatchObject({
      network: 'eip155:8453',
      amount: String(PRICE),
      asset: chain.usdc,
      payTo: merchant,
      extra: {
        name: 'USD Coin',
        version: '2',
        withdrawDelay: 86_400,
        receiverAuthorizer: expect.any(String),
      },
    });
  });

  it('[x402:session-pays] fund once, call many times, settled in one batch exactly once', async () => {
    const payer = await fundedPayer();
    const { fetch: pay } = sessionClient(payer);
    const before = scrapes;
    const N = 6;
    const receipts = [];
    for (let i = 0; i < N; i++) {
      const res = await pay(`${t.url}${SCRAPE}`, post(scrapeBody));
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ ok: true, charged_cents: 1 });
      receipts.push(decodePaymentResponseHeader(res.headers.get('payment-response') as string));
    }
    expect(scrapes).toBe(before + N);
    // One deposit transaction (the first call), then vouchers only.
    expect(receipts[0]?.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect(receipts.slice(1).map((r) => r.transaction)).toEqual(Array(N - 1).fill(''));
    expect(receipts.at(-1)?.extra?.channelState).toMatchObject({
      chargedCumulativeAmount: String(PRICE * BigInt(N)),
    });
    const deposit = 1_000_000n - (await chain.balanceOf(payer.address));
    expect(deposit).toBeGreaterThanOrEqual(PRICE * BigInt(N));
    expect(await chain.balanceOf(BATCH_SETTLEMENT)).toBeGreaterThanOrEqual(deposit);
    expect(await chain.balanceOf(merchant)).toBe(0n);
    // Every call is in the ledger, on the payer's accountless account.
    const txs = await t.gw.ledger.transactions(`x402_${payer.address.toLowerCase()}`, 20);
    expect(txs.filter((x) => x.status === 'succeeded')).toHaveLength(N);
    expect(txs[0]).toMatchObject({ charged_micros: 10_000, meta: { x402: { scheme: 'batch-settlement' } } });

    const sessions = sessionsOf(t.gw);
    const first = await sessions?.claimAndSettle();
    expect(first?.claimed).toBe(1);
    expect(await chain.balanceOf(merchant)).toBe(PRICE * BigInt(N));
    // Nothing is claimed or swept twice.
    expect((await sessions?.claimAndSettle())?.claimed).toBe(0);
    expect(await chain.balanceOf(merchant)).toBe(PRICE * BigInt(N));
  });

  it('[x402:session-no-charge-on-failure] a failed call commits nothing: the same voucher pays the next call', async () => {
    const payer = await fundedPayer();
    const { fetch: pay } = sessionClient(payer);
    expect((await pay(`${t.url}${SCRAPE}`, post(scrapeBody))).status).toBe(200);
    failScrape = true;
    try {
      const failed = await pay(`${t.url}${SCRAPE}`, post(scrapeBody));
      expect(failed.status).toBe(502);
    } finally {
      failScrape = false;
    }
    const ok = await pay(`${t.url}${SCRAPE}`, post(scrapeBody));
    expect(ok.status).toBe(200);
    const receipt = decodePaymentResponseHeader(ok.headers.get('payment-response') as string);
    // Two successful calls were charged, the failed one not.
    expect(receipt.extra?.channelState).toMatchObject({ chargedCumulativeAmount: String(2n * PRICE) });
  });

  it('[x402:session-replay-pays-once] a voucher presented again is refused with the channel state; no second charge', async () => {
    const payer = await fundedPayer();
    const { client, fetch: pay } = sessionClient(payer);
    expect((await pay(`${t.url}${SCRAPE}`, post(scrapeBody))).status).toBe(200);
    const challenge = challengeOf(await t.post(SCRAPE, scrapeBody));
    const voucher = encodePayment(await client.createPaymentPayload(challenge));
    const first = await t.post(SCRAPE, scrapeBody, { headers: { 'payment-signature': voucher } });
    expect(first.status).toBe(200);
    const again = await t.post(SCRAPE, scrapeBody, { headers: { 'payment-signature': voucher } });
    expect(again.status).toBe(402);
    const corrective = challengeOf(again);
    expect(corrective.error).toBe('invalid_batch_settlement_evm_cumulative_amount_mismatch');
    expect(corrective.accepts[1]?.extra?.channelState).toMatchObject({
      chargedCumulativeAmount: String(2n * PRICE),
    });
    const txs = await t.gw.ledger.transactions(`x402_${payer.address.toLowerCase()}`, 10);
    expect(txs.filter((x) => x.status === 'succeeded')).toHaveLength(2);
  });

  it('[x402:session-survives-restart] channels outlive the process: calls go on after a restart, claimed once', async () => {
    const payer = await fundedPayer();
    const { fetch: pay } = sessionClient(payer);
    for (let i = 0; i < 3; i++) expect((await pay(`${t.url}${SCRAPE}`, post(scrapeBody))).status).toBe(200);
    const settledBefore = await chain.balanceOf(merchant);
    const dataDir = t.dataDir;
    await t.close();
    t = await startGateway({
      env: { ...x402Env(chain, merchant), ...SESSION_ENV },
      handlers,
      dataDir,
      keepData: true,
    });
    // The same payer goes on with vouchers on its channel: no new deposit.
    const balance = await chain.balanceOf(payer.address);
    const res = await pay(`${t.url}${SCRAPE}`, post(scrapeBody));
    expect(res.status).toBe(200);
    expect(decodePaymentResponseHeader(res.headers.get('payment-response') as string).transaction).toBe('');
    expect(await chain.balanceOf(payer.address)).toBe(balance);
    // This payer's 4 calls, and the 2 + 2 of the two tests above, charged before the restart and not yet claimed.
    await sessionsOf(t.gw)?.claimAndSettle();
    expect(await chain.balanceOf(merchant)).toBe(settledBefore + 8n * PRICE);
    await sessionsOf(t.gw)?.claimAndSettle();
    expect(await chain.balanceOf(merchant)).toBe(settledBefore + 8n * PRICE);
  });
});

describe('x402 sessions: refunds', () => {
  it('[x402:session-refund] the payer takes back what is left: the charged vouchers claimed, the rest returned on chain', async () => {
    const payer = await fundedPayer();
    const { scheme, fetch: pay } = sessionClient(payer);
    for (let i = 0; i < 3; i++) expect((await pay(`${t.url}${SCRAPE}`, post(scrapeBody))).status).toBe(200);
    expect(await chain.balanceOf(payer.address)).toBeLessThan(1_000_000n - 3n * PRICE);
    const runs = scrapes;
    // The paid route is a POST: the SDK's refund is given a fetch that posts (the same JSON body).
    const posting: typeof fetch = (url, init) =>
      fetch(url, {
        ...init,
        method: 'POST',
        headers: { ...init?.headers, 'content-type': 'application/json' },
        body: JSON.stringify(scrapeBody),
      });
    const r = await scheme.refund(`${t.url}${SCRAPE}`, { fetch: posting });
    expect(r.success).toBe(true);
    // Everything but the three calls is back with the payer; no action ran for the refund.
    expect(await chain.balanceOf(payer.address)).toBe(1_000_000n - 3n * PRICE);
    expect(scrapes).toBe(runs);
  });
});

describe('standard receipts on x402 calls', () => {
  it("[receipt:x402-offer-receipt] an exact and a session payment carry the offer-and-receipt extension's receipt, verifiable with the published key", async () => {
    const jwks = (await (await fetch(`${t.url}/.well-known/tollgate-receipts.json`)).json()) as {
      keys: Array<{ kty: string }>;
    };
    const jwk = jwks.keys[0] as { kty: string };
    const payer = await fundedPayer();
    const exact = await paidFetch(payer)(`${t.url}${SCRAPE}`, post(scrapeBody));
    expect(exact.status).toBe(200);
    const exactReceipt = extractReceiptFromResponse(exact);
    expect(exactReceipt?.format).toBe('jws');
    const settled = decodePaymentResponseHeader(exact.headers.get('payment-response') as string);
    expect(await verifyReceiptSignatureJWS(exactReceipt as JWSSignedReceipt, jwk)).toEqual({
      version: 1,
      network: 'eip155:8453',
      resourceUrl: `${t.url}${SCRAPE}`,
      payer: payer.address,
      issuedAt: expect.any(Number),
      transaction: settled.transaction,
    });
    // The tollgate receipt stays beside it.
    expect(exact.headers.get('tollgate-receipt')).toMatch(/^ey/);

    const { fetch: pay } = sessionClient(await fundedPayer());
    await pay(`${t.url}${SCRAPE}`, post(scrapeBody));
    const voucherCall = await pay(`${t.url}${SCRAPE}`, post(scrapeBody));
    const sessionReceipt = extractReceiptFromResponse(voucherCall) as JWSSignedReceipt;
    // A voucher moves nothing on chain yet: no transaction in its receipt.
    expect(await verifyReceiptSignatureJWS(sessionReceipt, jwk)).toEqual({
      version: 1,
      network: 'eip155:8453',
      resourceUrl: `${t.url}${SCRAPE}`,
      payer: expect.stringMatching(/^0x/),
      issuedAt: expect.any(Number),
    });
    // A tampered receipt does not verify.
    const [h, p, s] = sessionReceipt.signature.split('.');
    const forged = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(p as string, 'base64url').toString()), payer: '0x0' }),
    ).toString('base64url');
    await expect(
      verifyReceiptSignatureJWS({ format: 'jws', signature: `${h}.${forged}.${s}` }, jwk),
    ).rejects.toThrow();
  });
});

describe('x402 sessions over MCP, declared', () => {
  it('[x402:session-mcp] a voucher in _meta["x402/payment"] pays a tool; the channel state comes back in _meta', async () => {
    const payer = await fundedPayer();
    const { client, fetch: pay } = sessionClient(payer);
    expect((await pay(`${t.url}${SCRAPE}`, post(scrapeBody))).status).toBe(200);
    const mcp = new Client({ name: 'session-wallet', version: '1' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${t.url}/mcp/x402`)));
    try {
      const unpaid = await mcp.callTool({ name: 'scraperC_scrape', arguments: scrapeBody });
      const challenge = unpaid.structuredContent as unknown as PaymentRequired;
      expect(challenge.accepts.map((a) => a.scheme)).toEqual(['exact', 'batch-settlement']);
      const voucher = await client.createPaymentPayload(challenge);
      const paid = await mcp.callTool({
        name: 'scraperC_scrape',
        arguments: scrapeBody,
        _meta: { 'x402/payment': voucher },
      });
      expect(paid.isError).toBeFalsy();
      expect(paid._meta?.['x402/payment-response']).toMatchObject({
        success: true,
        transaction: '',
        extra: { channelState: { chargedCumulativeAmount: String(2n * PRICE) } },
      });
    } finally {
      await mcp.close();
    }
  });

  it('[x402:session-declared] descriptors and the server card declare the session terms beside exact', async () => {
    const d = await t.get(`/api/run/scraperC/scrape`);
    const protocols = d.body.payment.protocols as Array<Record<string, unknown>>;
    expect(protocols.map((p) => [p.protocol, p.scheme])).toEqual([
      ['x402', 'exact'],
      ['x402', 'batch-settlement'],
      ['api_key', undefined],
    ]);
    expect(protocols[1]).toMatchObject({
      amount: String(PRICE),
      pay_to: merchant,
      withdraw_delay_seconds: 86_400,
    });
    const card = (await t.get('/.well-known/mcp/server-card.json')).body;
    expect(card._meta['tollgate/catalog'].payment).toContain('x402-session');
  });
});
