import { x402Client } from '@x402/core/client';
import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from '@x402/core/http';
import { UptoEvmScheme } from '@x402/evm/upto/client';
import { wrapFetchWithPayment } from '@x402/fetch';
import { createLocalJWKSet, jwtVerify } from 'jose';
import OpenAI from 'openai';
import { request } from 'undici';
import type { PrivateKeyAccount } from 'viem/accounts';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type FakeOpenRouter, llmEnv, startFakeOpenRouter, TEST_MODELS } from '../fakes/openrouter.js';
import { startChain, type TestChain } from '../helpers/anvil.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { encodePayment, newPayer, startFacilitatorProcess, x402Env } from '../helpers/x402.js';

// The model router paid per token with x402 `upto`, on a real chain (anvil, chain id 8453) with the official
// clients: the `openai` SDK whose fetch is @x402/fetch's wrapFetchWithPayment over an x402Client with
// @x402/evm's upto scheme; the gateway's built-in facilitator runs @x402/evm's upto facilitator. The payer
// authorizes the call's worst case; exactly the actual cost moves on chain, never more; a failure moves nothing.

const CHAT = '/api/llm/v1/chat/completions';
let chain: TestChain;
let fake: FakeOpenRouter;
let t: TestGateway;
const merchant = newPayer().address;
const hi = [{ role: 'user', content: 'hi' }];

beforeAll(async () => {
  chain = await startChain();
  fake = await startFakeOpenRouter(TEST_MODELS);
  t = await startGateway({ env: { ...llmEnv(fake), ...x402Env(chain, merchant) } });
});
afterAll(async () => {
  await t?.close();
  await fake?.close();
  await chain?.close();
});
afterEach(() => fake.reset());

async function fundedPayer(): Promise<PrivateKeyAccount> {
  const payer = newPayer();
  await chain.mint(payer.address, 1_000_000n);
  await chain.approvePermit2(payer); // the payer's one-time Permit2 approval (the wallet pays its gas)
  return payer;
}

/** The official x402 fetch, without the OpenAI client's (dummy) bearer: an accountless caller sends none. */
function payingFetch(payer: PrivateKeyAccount): typeof fetch {
  const paid = wrapFetchWithPayment(
    fetch,
    new x402Client().register('eip155:8453', new UptoEvmScheme(payer)),
  );
  return (input, init) => {
    const headers = new Headers(init?.headers);
    headers.delete('authorization');
    return paid(input, { ...init, headers });
  };
}

function openai(payer: PrivateKeyAccount, seen?: Response[]): OpenAI {
  const f = payingFetch(payer);
  return new OpenAI({
    baseURL: `${t.url}/api/llm/v1`,
    apiKey: 'x402',
    maxRetries: 0,
    fetch: async (input, init) => {
      const r = await f(input as never, init as never);
      seen?.push(r.clone());
      return r;
    },
  });
}

async function verifyReceipt(jws: string) {
  const jwks = await (await fetch(`${t.url}/.well-known/tollgate-receipts.json`)).json();
  return (await jwtVerify(jws, createLocalJWKSet(jwks), { issuer: t.url })).payload as Record<
    string,
    unknown
  >;
}

describe('x402 upto on the model router', () => {
  it('[x402:upto-metered] an unpaid call gets an upto challenge for its worst case (after validation)', async () => {
    const bad = await t.post(CHAT, { model: 'test/best-a' });
    expect(bad.status).toBe(400);
    const r = await t.post(CHAT, { model: 'test/best-a', messages: hi, max_tokens: 1000 });
    expect(r.status).toBe(402);
    const challenge = decodePaymentRequiredHeader(String(r.headers['payment-required']));
    expect(r.body).toEqual(challenge);
    const req = challenge.accepts[0];
    expect(req).toMatchObject({
      scheme: 'upto',
      network: 'eip155:8453',
      asset: chain.usdc,
      payTo: merchant,
      extra: { name: 'USD Coin', version: '2', assetTransferMethod: 'permit2' },
    });
    // 1000 completion tokens at 15 micro-USD each, plus the prompt's bytes at 3 micro-USD each.
    expect(Number(req?.amount)).toBeGreaterThan(15_000);
    expect(Number(req?.amount)).toBeLessThan(16_000);
    expect(challenge.resource.url).toBe(`${t.url}${CHAT}`);
  });

  it('[x402:upto-metered] [receipt:signed] the openai client pays: the actual cost moves on chain, not the worst case', async () => {
    const payer = await fundedPayer();
    fake.scenario('test/best-a', { text: 'Hello.', promptTokens: 10, completionTokens: 3, cost: 0.002 });
    const seen: Response[] = [];
    const r = await openai(payer, seen).chat.completions.create({
      model: 'test/best-a',
      messages: hi as never,
      max_tokens: 1000,
    });
    expect(r.choices[0]?.message.content).toBe('Hello.');
    const res = seen.at(-1) as Response;
    const settled = decodePaymentResponseHeader(res.headers.get('payment-response') ?? '');
    expect(settled).toMatchObject({ success: true, amount: '2000' });
    expect(await chain.balanceOf(payer.address)).toBe(1_000_000n - 2_000n);
    expect(await chain.balanceOf(merchant)).toBeGreaterThanOrEqual(2_000n);
    expect(res.headers.get('x-tollgate-charged-micros')).toBe('2000');
    const claims = await verifyReceipt(res.headers.get('tollgate-receipt') ?? '');
    expect(claims).toMatchObject({
      action: 'llm/chat.completions',
      amount_micros: 2000,
      payment_method: 'x402',
      x402: { scheme: 'upto', amount: '2000', transaction: settled.transaction, payer: payer.address },
    });
    const row = await t.gw.ledger.getCall(res.headers.get('x-tollgate-transaction-id') as string);
    expect(row).toMatchObject({ status: 'succeeded', charged_micros: 2000 });
    expect(row?.meta?.x402).toMatchObject({
      scheme: 'upto',
      amount: '2000',
      transaction: settled.transaction,
    });
  });

  it('[x402:upto-metered] a stream is settled after it ends; the receipt and settlement close the stream', async () => {
    const payer = await fundedPayer();
    fake.scenario('test/best-a', {
      text: 'one two three',
      chunks: 3,
      promptTokens: 10,
      completionTokens: 3,
      cost: 0.0015,
    });
    let text = '';
    const stream = await openai(payer).chat.completions.create({
      model: 'test/best-a',
      messages: hi as never,
      max_tokens: 1000,
      stream: true,
    });
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    expect(text).toBe('one two three');
    expect(await chain.balanceOf(payer.address)).toBe(1_000_000n - 1_500n);

    // The raw stream: the receipt and the x402 settlement are SSE comments just before [DONE].
    const raw = await rawPaidStream(await fundedPayer());
    const events = raw.split('\n\n').filter(Boolean);
    expect(events.at(-1)).toBe('data: [DONE]');
    const receipt = events
      .find((e) => e.startsWith(': tollgate-receipt '))
      ?.slice(': tollgate-receipt '.length);
    const settlement = events.find((e) => e.startsWith(': x402-payment-response '));
    expect(
      decodePaymentResponseHeader(settlement?.slice(': x402-payment-response '.length) ?? ''),
    ).toMatchObject({
      success: true,
      amount: '1500',
    });
    expect(await verifyReceipt(receipt ?? '')).toMatchObject({ amount_micros: 1500, payment_method: 'x402' });
  });

  it('[x402:upto-metered] a failed call settles nothing, and the same payment is not spent', async () => {
    const payer = await fundedPayer();
    fake.scenario('test/best-a', { status: 500 });
    const err = await openai(payer)
      .chat.completions.create({ model: 'test/best-a', messages: hi as never, max_tokens: 1000 })
      .catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect(err.status).toBeGreaterThanOrEqual(500);
    expect(await chain.transfersFrom(payer.address)).toBe(0);
    expect(await chain.balanceOf(payer.address)).toBe(1_000_000n);
  });

  it('[x402:upto-metered] a payment pays for one call: presented again it is refused, nothing moves twice', async () => {
    const payer = await fundedPayer();
    fake.scenario('test/best-a', { text: 'once', cost: 0.001 });
    const body = { model: 'test/best-a', messages: hi, max_tokens: 1000 };
    const first = await t.post(CHAT, body);
    const challenge = decodePaymentRequiredHeader(String(first.headers['payment-required']));
    const client = new x402Client().register('eip155:8453', new UptoEvmScheme(payer));
    const header = encodePayment(await client.createPaymentPayload(challenge));
    const paid = await t.post(CHAT, body, { headers: { 'payment-signature': header } });
    expect(paid.status).toBe(200);
    const again = await t.post(CHAT, body, { headers: { 'payment-signature': header } });
    expect(again.status).toBe(402);
    expect(decodePaymentRequiredHeader(String(again.headers['payment-required'])).error).toBe(
      'payment_already_used',
    );
    expect(await chain.transfersFrom(payer.address)).toBe(1);
    // Another request (a different worst case) cannot reuse the signature either.
    const other = await t.post(
      CHAT,
      { ...body, max_tokens: 500 },
      { headers: { 'payment-signature': header } },
    );
    expect(other.status).toBe(402);
    expect(await chain.transfersFrom(payer.address)).toBe(1);
  });
});

describe('x402 upto: the limits', () => {
  async function payFor(payer: PrivateKeyAccount, body: Record<string, unknown>) {
    const unpaid = await t.post(CHAT, body);
    const challenge = decodePaymentRequiredHeader(String(unpaid.headers['payment-required']));
    const client = new x402Client().register('eip155:8453', new UptoEvmScheme(payer));
    const payload = await client.createPaymentPayload(challenge);
    return { authorized: BigInt(challenge.accepts[0]?.amount ?? 0), header: encodePayment(payload) };
  }
  const body = { model: 'test/best-a', messages: hi, max_tokens: 1000 };

  it('[x402:upto-metered] a cost reported above the authorization settles the authorization, never more', async () => {
    const payer = await fundedPayer();
    fake.scenario('test/best-a', { text: 'dear', cost: 1.5 });
    const { authorized, header } = await payFor(payer, body);
    const r = await t.post(CHAT, body, { headers: { 'payment-signature': header } });
    expect(r.status).toBe(200);
    expect(decodePaymentResponseHeader(String(r.headers['payment-response'])).amount).toBe(
      String(authorized),
    );
    expect(await chain.balanceOf(payer.address)).toBe(1_000_000n - authorized);
  });

  it('[x402:upto-metered] an answer with no output settles nothing', async () => {
    const payer = await fundedPayer();
    fake.scenario('test/best-a', { text: '', completionTokens: 0 });
    const { header } = await payFor(payer, body);
    const r = await t.post(CHAT, body, { headers: { 'payment-signature': header } });
    expect(r.status).toBe(200);
    expect(r.headers['payment-response']).toBeUndefined();
    expect(await chain.transfersFrom(payer.address)).toBe(0);
  });

  it('[x402:upto-metered] a payer without the Permit2 approval is refused before the model runs', async () => {
    const payer = newPayer();
    await chain.mint(payer.address, 1_000_000n);
    fake.scenario('test/best-a', { text: 'never' });
    const { header } = await payFor(payer, body);
    const r = await t.post(CHAT, body, { headers: { 'payment-signature': header } });
    expect(r.status).toBe(402);
    expect(decodePaymentRequiredHeader(String(r.headers['payment-required'])).error).toMatch(/allowance/);
    expect(fake.requests).toHaveLength(0);
  });
});

describe('x402 upto: a settlement whose outcome is unknown', () => {
  it('[x402:upto-metered] the answer is withheld (503), and the same payment later delivers it, paid once', async () => {
    const g = await startGateway({
      env: {
        ...llmEnv(fake),
        ...x402Env(chain, merchant, { TOLLGATE_X402_FACILITATOR_TIMEOUT_SECONDS: '1' }),
      },
    });
    try {
      const payer = await fundedPayer();
      fake.scenario('test/best-a', { text: 'late answer', cost: 0.003 });
      const body = { model: 'test/best-a', messages: hi, max_tokens: 1000 };
      const unpaid = await g.post(CHAT, body);
      const challenge = decodePaymentRequiredHeader(String(unpaid.headers['payment-required']));
      const client = new x402Client().register('eip155:8453', new UptoEvmScheme(payer));
      const header = encodePayment(await client.createPaymentPayload(challenge));
      await chain.setAutomine(false);
      try {
        const first = await g.post(CHAT, body, { headers: { 'payment-signature': header } });
        expect(first.status).toBe(503);
        expect(first.body.error.code).toBe('payment_settlement_unknown');
        expect(first.text).not.toContain('late answer');
        await chain.mine();
      } finally {
        await chain.setAutomine(true);
      }
      const done = await g.post(CHAT, body, { headers: { 'payment-signature': header } });
      expect(done.status).toBe(200);
      expect(done.body.choices[0].message.content).toBe('late answer');
      expect(decodePaymentResponseHeader(String(done.headers['payment-response']))).toMatchObject({
        success: true,
        amount: '3000',
      });
      const g2Jwks = await (await fetch(`${g.url}/.well-known/tollgate-receipts.json`)).json();
      const { payload } = await jwtVerify(
        String(done.headers['tollgate-receipt']),
        createLocalJWKSet(g2Jwks),
      );
      expect(payload).toMatchObject({ jti: done.headers['x-tollgate-transaction-id'], amount_micros: 3000 });
      expect(fake.requests).toHaveLength(1); // the model ran once
      expect(await chain.transfersFrom(payer.address)).toBe(1);
      expect(await chain.balanceOf(payer.address)).toBe(1_000_000n - 3_000n);
      const again = await g.post(CHAT, body, { headers: { 'payment-signature': header } });
      expect(again.status).toBe(402);
      expect(await chain.transfersFrom(payer.address)).toBe(1);
    } finally {
      await g.close();
    }
  });
});

/** A paid stream read as raw SSE (undici), paid with a payload the official client made for its challenge. */
async function rawPaidStream(payer: PrivateKeyAccount): Promise<string> {
  fake.scenario('test/best-a', {
    text: 'raw',
    chunks: 1,
    promptTokens: 10,
    completionTokens: 1,
    cost: 0.0015,
  });
  const body = { model: 'test/best-a', messages: hi, max_tokens: 1000, stream: true };
  const unpaid = await t.post(CHAT, body);
  const challenge = decodePaymentRequiredHeader(String(unpaid.headers['payment-required']));
  const client = new x402Client().register('eip155:8453', new UptoEvmScheme(payer));
  const res = await request(`${t.url}${CHAT}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'payment-signature': encodePayment(await client.createPaymentPayload(challenge)),
    },
    body: JSON.stringify(body),
  });
  return res.body.text();
}

describe('x402 on the model router without upto', () => {
  it('[x402:upto-metered] a facilitator without upto: a clear 402 that names the API key', async () => {
    const c = await startChain();
    const f = await startFacilitatorProcess(c, 'token');
    const fk = await startFakeOpenRouter(TEST_MODELS);
    const g = await startGateway({
      env: {
        ...llmEnv(fk),
        TOLLGATE_X402_PAY_TO: merchant,
        TOLLGATE_X402_FACILITATOR_URL: f.url,
        TOLLGATE_X402_FACILITATOR_AUTH_HEADER: 'Authorization: Bearer token',
      },
    });
    try {
      const r = await g.post(CHAT, { model: 'test/best-a', messages: hi });
      expect(r.status).toBe(402);
      expect(r.headers['payment-required']).toBeUndefined();
      expect(r.body.error.code).toBe('payment_required');
      expect(r.body.error.message).toMatch(/"upto" scheme/);
      expect(r.body.error.message).toMatch(/Authorization: Bearer tg_sk_/);
    } finally {
      await g.close();
      await fk.close();
      await f.close();
      await c.close();
    }
  });
});
