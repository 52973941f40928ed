import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { challengeOf, encodePayment, newPayer, signPayment } from '../helpers/x402.js';

// x402 at the HTTP door without a chain: what is asked for and when, and what is never touched. The
// facilitator URL points at a closed port, so any facilitator call fails loudly.

let t: TestGateway;
let bare: TestGateway;
const payTo = newPayer().address;

beforeAll(async () => {
  t = await startGateway({
    env: { TOLLGATE_X402_PAY_TO: payTo, TOLLGATE_X402_FACILITATOR_URL: 'http://127.0.0.1:9' },
  });
  bare = await startGateway();
});
afterAll(async () => {
  await t?.close();
  await bare?.close();
});

const body = { intent: 'fetch https://example.com as markdown' };

describe('x402 at the HTTP door', () => {
  it('[x402:api-keys-only-without-pay-to] without a pay-to address the 402 names API keys only', async () => {
    const r = await bare.post('/api/run/platform/consult', body);
    expect(r.status).toBe(402);
    expect(r.headers['payment-required']).toBeUndefined();
    expect(r.body.error.code).toBe('payment_required');
    expect(r.body.error.message).toContain('accepts only API keys');
    expect(r.body.error.details.accepts).toEqual([
      { method: 'api_key', header: 'Authorization: Bearer tg_sk_…' },
    ]);
  });

  it('[x402:unpaid-call-gets-402] an invalid request is a 400, not an invitation to pay', async () => {
    const r = await t.post('/api/run/platform/consult', { intent: '' });
    expect(r.status).toBe(400);
    expect(r.headers['payment-required']).toBeUndefined();
    const unknown = await t.post('/api/run/nope/nothing', body);
    expect(unknown.status).toBe(404);
  });

  it('[x402:accounts-pay-from-balance] an API key caller pays from its balance; a payment sent along is ignored', async () => {
    const { accountId, key } = await t.account('1');
    const challenge = challengeOf(await t.post('/api/run/platform/consult', body));
    const payment = encodePayment(await signPayment(newPayer(), challenge.accepts[0] as never));
    const r = await t.post('/api/run/platform/consult', body, {
      key,
      headers: { 'payment-signature': payment },
    });
    expect(r.status).toBe(200);
    expect(r.headers['payment-response']).toBeUndefined();
    expect(await t.gw.ledger.balance(accountId)).toMatchObject({ balance_micros: 990_000 });
    // Free actions stay free, with or without a payment.
    const free = await t.post(
      '/api/run/platform/discover',
      { query: 'scrape' },
      { headers: { 'payment-signature': payment } },
    );
    expect(free.status).toBe(200);
    expect(free.body.charged_cents).toBe(0);
  });

  it('[x402:facilitator-outcomes] a facilitator that cannot be reached: 503, the payment is not used, nothing runs', async () => {
    const challenge = challengeOf(await t.post('/api/run/platform/consult', body));
    const payer = newPayer();
    const payment = encodePayment(await signPayment(payer, challenge.accepts[0] as never));
    const r = await t.post('/api/run/platform/consult', body, { headers: { 'payment-signature': payment } });
    expect(r.status).toBe(503);
    expect(r.headers['retry-after']).toBe('2');
    expect(r.body.error).toMatchObject({ code: 'upstream_unavailable', retryable: true });
    const row = await t.gw.x402?.payments.get(
      `eip155:8453:0x833589fcd6edb6e08f4c7c32d4f71b54bda02913:${payer.address.toLowerCase()}:${
        JSON.parse(Buffer.from(payment, 'base64').toString()).payload.authorization.nonce
      }`,
    );
    expect(row?.status).toBe('released');
    // No account was opened for a payment that was never verified.
    expect(await t.gw.ledger.getAccount(`x402_${payer.address.toLowerCase()}`)).toBeUndefined();
  });
});
