import { ServerResponse } from 'node:http';
import { request } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { CallRow } from '../../src/ledger/types.js';
import { type FakeOpenRouter, llmEnv, startFakeOpenRouter, TEST_MODELS } from '../fakes/openrouter.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

// The model router's streams through a real gateway on 127.0.0.1 against the fake OpenRouter: pass-through,
// usage, failures after the stream began, and callers that hang up.

const CHAT = '/api/llm/v1/chat/completions';
const hi = [{ role: 'user', content: 'hi' }];

let fake: FakeOpenRouter;
let gw: TestGateway;

beforeAll(async () => {
  fake = await startFakeOpenRouter(TEST_MODELS);
  gw = await startGateway({ env: llmEnv(fake, { TOLLGATE_LLM_FIRST_BYTE_TIMEOUT_MS: '400' }) });
});
afterAll(async () => {
  await gw?.close();
  await fake?.close();
});
afterEach(() => fake.reset());

async function call(id: string): Promise<CallRow> {
  for (let i = 0; i < 100; i++) {
    const c = await gw.gw.ledger.getCall(id);
    if (c && c.status !== 'pending') return c;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`call ${id} still pending`);
}

async function sse(body: unknown, key: string) {
  const res = await request(`${gw.url}${CHAT}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await res.body.text();
  const events = text
    .split('\n\n')
    .filter(Boolean)
    .map((e) => e.replace(/^data: /, ''));
  return { status: res.statusCode, headers: res.headers, text, events };
}

describe('model router: streaming', () => {
  it('[llm:stream-passthrough] [llm:stream-usage] events pass through; usage is asked upstream and billed; the usage chunk only if asked', async () => {
    const { key } = await gw.account('1');
    fake.scenario('test/cheap-a', {
      text: 'abcdefgh',
      chunks: 4,
      promptTokens: 20,
      completionTokens: 4,
      cost: 0.00005,
    });
    const plain = await sse({ model: 'test/cheap-a', messages: hi, stream: true }, key);
    expect(plain.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(fake.requests[0]?.body.stream_options).toEqual({ include_usage: true });
    const chunks = plain.events.filter((e) => e.startsWith('{')).map((e) => JSON.parse(e));
    expect(chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('')).toBe('abcdefgh');
    expect(chunks.some((c) => c.usage)).toBe(false);
    expect(plain.events.at(-1)).toBe('[DONE]');
    const c = await call(plain.headers['x-tollgate-transaction-id'] as string);
    expect(c).toMatchObject({ status: 'succeeded', charged_micros: 50 });
    expect(c.meta).toMatchObject({
      prompt_tokens: 20,
      completion_tokens: 4,
      usage_source: 'upstream_cost',
      stream: true,
    });

    const asked = await sse(
      { model: 'test/cheap-a', messages: hi, stream: true, stream_options: { include_usage: true } },
      key,
    );
    // The stream ends with its receipt (an SSE comment, ignored by clients; test/e2e/x402-upto.test.ts) and [DONE].
    expect(asked.events.at(-2)).toMatch(/^: tollgate-receipt ey/);
    const last = JSON.parse(asked.events.filter((e) => e.startsWith('{')).at(-1) as string);
    expect(last.choices).toEqual([]);
    expect(last.usage).toMatchObject({ prompt_tokens: 20, completion_tokens: 4 });
  });

  it('[llm:stream-passthrough] nothing goes out before the first chunk; keep-alive comments after it pass through', async () => {
    const { key } = await gw.account('1');
    fake.scenario('test/cheap-a', { chunks: 2, commentsBetween: true });
    const r = await sse({ model: 'test/cheap-a', messages: hi, stream: true }, key);
    // The comment the fake sends before its first chunk is held back: until then a fallback is still possible.
    expect(r.events[0]?.startsWith('{')).toBe(true);
    expect(r.events.slice(0, 4).map((e) => e.slice(0, 1))).toEqual(['{', ':', '{', ':']);
  });

  it('[llm:stream-passthrough] a stream that arrives in one read has left for the caller before its capture commits', async () => {
    const { key } = await gw.account('1');
    // The fake writes the whole stream at once, so the gateway reads every event and the end in one go and then
    // captures. node:http corks the socket until the end of the tick, and a lone call's capture fsyncs right on
    // the event loop: the events must be on the wire before that, not behind it.
    fake.scenario('test/cheap-a', { text: 'abcd', chunks: 2 });
    let res: ServerResponse | undefined;
    const original = ServerResponse.prototype.writeHead;
    const writeHead = vi.spyOn(ServerResponse.prototype, 'writeHead').mockImplementation(function (
      this: ServerResponse,
      ...args: unknown[]
    ) {
      res = this;
      return (original as (...a: unknown[]) => ServerResponse).apply(this, args);
    });
    const ledger = gw.gw.ledger;
    const capture = ledger.capture.bind(ledger);
    let atCapture: { corked: number; unsent: number } | undefined;
    ledger.capture = (...args: Parameters<typeof capture>) => {
      // What the caller's socket still holds back when the capture starts (synchronously, as the ledger does).
      const socket = res?.socket;
      atCapture = { corked: socket?.writableCorked ?? -1, unsent: socket?.writableLength ?? -1 };
      return capture(...args);
    };
    try {
      const r = await sse({ model: 'test/cheap-a', messages: hi, stream: true }, key);
      expect(r.events.filter((e) => e.startsWith('{')).length).toBeGreaterThan(0);
      expect(atCapture).toEqual({ corked: 0, unsent: 0 });
      expect(r.text).toMatch(/: tollgate-receipt ey/);
      expect(r.events.at(-1)).toBe('[DONE]');
    } finally {
      ledger.capture = capture;
      writeHead.mockRestore();
    }
  });

  it('[llm:mid-stream-failure] an error after streaming began ends the stream with our error event; nothing charged', async () => {
    const { accountId, key } = await gw.account('1');
    fake.scenario('test/cheap-a', { chunks: 5, midStreamErrorAfter: 2 });
    const r = await sse({ model: 'test/cheap-a', messages: hi, stream: true }, key);
    expect(r.status).toBe(200);
    const last = JSON.parse(r.events.at(-1) as string);
    expect(last.error).toMatchObject({ code: 'upstream_error', type: 'server_error' });
    expect(r.text).not.toMatch(/Provider disconnected/);
    const c = await call(r.headers['x-tollgate-transaction-id'] as string);
    expect(c).toMatchObject({ status: 'failed', error_code: 'upstream_error', charged_micros: 0 });
    expect(await gw.gw.ledger.balance(accountId)).toMatchObject({
      balance_micros: 1_000_000,
      held_micros: 0,
    });
  });

  it('[llm:mid-stream-failure] a stream cut before the model finished is not charged; one missing only [DONE] is', async () => {
    const { key } = await gw.account('1');
    fake.scenario('test/cheap-a', { chunks: 5, cutAfter: 2 });
    const cut = await sse({ model: 'test/cheap-a', messages: hi, stream: true }, key);
    expect(JSON.parse(cut.events.at(-1) as string).error).toMatchObject({ code: 'upstream_error' });
    expect(await call(cut.headers['x-tollgate-transaction-id'] as string)).toMatchObject({
      status: 'failed',
      charged_micros: 0,
    });

    fake.scenario('test/cheap-a', { chunks: 2, noDone: true, cost: 0.00001 });
    const whole = await sse({ model: 'test/cheap-a', messages: hi, stream: true }, key);
    expect(whole.text).not.toMatch(/"error"/);
    expect(await call(whole.headers['x-tollgate-transaction-id'] as string)).toMatchObject({
      status: 'succeeded',
      charged_micros: 10,
    });
  });

  it('[llm:stream-usage] a stream without usage is billed from an estimate of what it streamed', async () => {
    const { key } = await gw.account('1');
    fake.scenario('test/flat', { text: 'abcdabcdabcd', chunks: 3, omitUsage: true });
    const r = await sse({ model: 'test/flat', messages: hi, stream: true }, key);
    const c = await call(r.headers['x-tollgate-transaction-id'] as string);
    // flat: prompt free, completion 1 USD/M → 1 micro-USD per token; 12 bytes = 3 tokens at 4 bytes per token.
    expect(c).toMatchObject({ status: 'succeeded', charged_micros: 3 });
    expect(c.meta).toMatchObject({ usage_source: 'estimated', completion_tokens: 3 });
  });
});

describe('model router: client disconnect', () => {
  it('[llm:disconnect-policy] leaving mid-stream aborts the upstream and charges what was streamed (estimated), never more than the hold', async () => {
    const { accountId, key } = await gw.account('1');
    fake.scenario('test/flat', { text: 'abcd'.repeat(40), chunks: 40, chunkDelayMs: 25 });
    const upstreamClosed = fake.closed('test/flat');
    const ac = new AbortController();
    const res = await request(`${gw.url}${CHAT}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'test/flat', messages: hi, stream: true, max_tokens: 1000 }),
      signal: ac.signal,
    });
    const txn = res.headers['x-tollgate-transaction-id'] as string;
    let seen = 0;
    try {
      for await (const chunk of res.body) {
        seen += (String(chunk).match(/"content":"abcd"/g) ?? []).length;
        if (seen >= 3) ac.abort();
      }
    } catch {
      // aborted by us
    }
    expect((await upstreamClosed).aborted).toBe(true);
    const c = await call(txn);
    expect(c.status).toBe('succeeded');
    expect(c.meta).toMatchObject({ client_disconnected: true, usage_source: 'estimated' });
    // 1 micro-USD per completion token; each chunk is 4 bytes = 1 token.
    expect(c.charged_micros).toBe(c.meta?.completion_tokens);
    expect(c.charged_micros).toBeGreaterThanOrEqual(3);
    expect(c.charged_micros).toBeLessThan(40);
    expect(await gw.gw.ledger.balance(accountId)).toMatchObject({
      balance_micros: 1_000_000 - c.charged_micros,
      held_micros: 0,
    });
  });

  it('[llm:disconnect-policy] leaving before the first byte voids the call and aborts the upstream', async () => {
    const { accountId, key } = await gw.account('1');
    fake.scenario('test/cheap-b', { firstChunkDelayMs: 350 });
    const upstreamClosed = fake.closed('test/cheap-b');
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 150);
    await expect(
      request(`${gw.url}${CHAT}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'test/cheap-b', messages: hi, stream: true }),
        signal: ac.signal,
      }),
    ).rejects.toThrow();
    expect((await upstreamClosed).aborted).toBe(true);
    const [c] = await gw.gw.ledger.transactions(accountId, 1);
    const done = await call((c as CallRow).id);
    expect(done).toMatchObject({ status: 'failed', error_code: 'cancelled', charged_micros: 0 });
    expect(await gw.gw.ledger.balance(accountId)).toMatchObject({
      balance_micros: 1_000_000,
      held_micros: 0,
    });
  });

  it('[llm:disconnect-policy] a non-streamed call whose caller leaves is aborted upstream and voided', async () => {
    const { accountId, key } = await gw.account('1');
    fake.scenario('test/cheap-b', { headersDelayMs: 400 });
    const upstreamClosed = fake.closed('test/cheap-b');
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 150);
    await expect(
      request(`${gw.url}${CHAT}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'test/cheap-b', messages: hi }),
        signal: ac.signal,
      }),
    ).rejects.toThrow();
    expect((await upstreamClosed).aborted).toBe(true);
    const [c] = await gw.gw.ledger.transactions(accountId, 1);
    expect(await call((c as CallRow).id)).toMatchObject({ status: 'failed', error_code: 'cancelled' });
    expect(await gw.gw.ledger.balance(accountId)).toMatchObject({
      balance_micros: 1_000_000,
      held_micros: 0,
    });
  });
});
