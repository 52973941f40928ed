import { x402Client } from '@x402/core/client';
import { decodePaymentResponseHeader } from '@x402/core/http';
import { BatchSettlementEvmScheme } from '@x402/evm/batch-settlement/client';
import { wrapFetchWithPayment } from '@x402/fetch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors.js';
import { BATCH_SETTLEMENT, startChain, type TestChain } from '../helpers/anvil.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { challengeOf, encodePayment, newPayer, x402Env } from '../helpers/x402.js';

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
  return { client, fetch: wrapFetchWithPayment(fetch, client) };
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

    const sessions = t.gw.run.rails?.sessions;
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
    await t.gw.run.rails?.sessions?.claimAndSettle();
    expect(await chain.balanceOf(merchant)).toBe(settledBefore + 8n * PRICE);
    await t.gw.run.rails?.sessions?.claimAndSettle();
    expect(await chain.balanceOf(merchant)).toBe(settledBefore + 8n * PRICE);
  });
});
