import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChain, type TestChain } from '../helpers/anvil.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import {
  capturingLogger,
  challengeOf,
  encodePayment,
  type FacilitatorProcess,
  newPayer,
  officialPayment,
  paidFetch,
  receiptOf,
  startFacilitatorProcess,
} from '../helpers/x402.js';

// Remote-facilitator mode: the gateway verifies and settles through a facilitator *process* on loopback (the
// official x402 facilitator code, test/fakes/evm/facilitator-process.ts) that settles on a local anvil chain
// and wants a bearer token, sent from TOLLGATE_X402_FACILITATOR_AUTH_HEADER.

const TOKEN = 'test-facilitator-token';
let chain: TestChain;
let facilitator: FacilitatorProcess;
let t: TestGateway;
const merchant = newPayer().address;

function remoteEnv(authHeader: string) {
  return {
    TOLLGATE_X402_PAY_TO: merchant,
    TOLLGATE_X402_FACILITATOR_URL: facilitator.url,
    TOLLGATE_X402_FACILITATOR_AUTH_HEADER: authHeader,
  };
}

beforeAll(async () => {
  chain = await startChain();
  facilitator = await startFacilitatorProcess(chain, TOKEN);
  t = await startGateway({ env: remoteEnv(`Authorization: Bearer ${TOKEN}`) });
});
afterAll(async () => {
  await t?.close();
  await facilitator?.close();
  await chain?.close();
});

const body = { intent: 'scrape https://example.com as markdown' };

describe('x402 with a remote facilitator', () => {
  it('[x402:remote-facilitator] the official client pays through the remote facilitator, which settles on chain', async () => {
    const payer = newPayer();
    await chain.mint(payer.address, 1_000_000n);
    const before = await facilitator.stats();
    const res = await paidFetch(payer)(`${t.url}/api/run/platform/consult`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    expect(await chain.balanceOf(payer.address)).toBe(990_000n);
    expect(await chain.balanceOf(merchant)).toBe(10_000n);
    const after = await facilitator.stats();
    expect(after.verify - before.verify).toBe(1);
    expect(after.settle - before.settle).toBe(1);
    expect(after.unauthorized).toBe(0);
    const [tx] = await t.gw.ledger.transactions(`x402_${payer.address.toLowerCase()}`, 1);
    expect(tx).toMatchObject({ status: 'succeeded', charged_micros: 10_000, payment_method: 'x402' });
  });

  it('[x402:remote-facilitator] a facilitator that cannot be used leaves the payment unused (503, retry with it)', async () => {
    const logs = capturingLogger();
    const wrong = await startGateway({
      env: remoteEnv('Authorization: Bearer not-the-token'),
      log: logs.log,
    });
    try {
      const payer = newPayer();
      await chain.mint(payer.address, 1_000_000n);
      const challenge = challengeOf(await wrong.post('/api/run/platform/consult', body));
      const payment = encodePayment(await officialPayment(payer, challenge));
      const refused = await wrong.post('/api/run/platform/consult', body, {
        headers: { 'payment-signature': payment },
      });
      expect(refused.status).toBe(503);
      expect(refused.body.error.code).toBe('upstream_unavailable');
      expect((await facilitator.stats()).unauthorized).toBeGreaterThan(0);
      // Logged as a facilitator failure, but the auth header is never logged nor echoed.
      expect(logs.text()).toContain('x402 facilitator verify failed');
      expect(logs.text()).not.toContain('not-the-token');
      expect(refused.text).not.toContain('not-the-token');
      expect(await chain.transfersFrom(payer.address)).toBe(0);

      // The same payment still pays where the facilitator works.
      const ok = await t.post('/api/run/platform/consult', body, {
        headers: { 'payment-signature': payment },
      });
      expect(ok.status).toBe(200);
      expect(receiptOf(ok)).toMatchObject({ success: true });
      expect(await chain.transfersFrom(payer.address)).toBe(1);
    } finally {
      await wrong.close();
    }
  });
});
