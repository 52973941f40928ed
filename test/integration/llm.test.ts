import { request } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { CallRow } from '../../src/ledger/types.js';
import { type FakeOpenRouter, llmEnv, startFakeOpenRouter, TEST_MODELS } from '../fakes/openrouter.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

// The model router through a real gateway on 127.0.0.1 against the fake OpenRouter: wire format, tiers and
// fallback, per-token billing to the micro-dollar. Streams: llm-stream.test.ts; the daily cap: llm-cap.test.ts.

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

const promptBytes = (messages: unknown) => Buffer.byteLength(JSON.stringify({ messages }));

describe('model router: public views', () => {
  it('[llm:pricing-free] GET /pricing needs no key: tiers with their ordered models within ceilings, USD per million', async () => {
    const r = await gw.get('/api/llm/v1/pricing');
    expect(r.status).toBe(200);
    const cheap = r.body.tiers.find((t: { id: string }) => t.id === 'platform/cheap');
    expect(cheap.ceiling).toEqual({ prompt_usd_per_m: '0.30', completion_usd_per_m: '1.20' });
    expect(cheap.models).toEqual([
      { id: 'test/cheap-a', prompt_usd_per_m: '0.10', completion_usd_per_m: '0.40' },
      { id: 'test/cheap-b', prompt_usd_per_m: '0.20', completion_usd_per_m: '0.80' },
    ]);
    expect(cheap.excluded).toEqual([
      { id: 'test/cheap-pricey', reason: 'above_ceiling' },
      { id: 'test/missing', reason: 'unknown_model' },
    ]);
    const ids = r.body.models.map((m: { id: string }) => m.id);
    expect(ids).toContain('test/best-a');
    expect(ids).not.toContain('test/unpriced');
    expect(ids).not.toContain('test/image-gen');
    expect(r.body.models.find((m: { id: string }) => m.id === 'test/fee').request_usd).toBe('0.001');
    expect(r.body.daily_cap_usd).toBe('10.00');
    expect(r.body.max_tokens).toEqual({ default: 4096, cap: 16384 });
  });

  it('[llm:models] GET /models lists the tiers and the servable models in OpenAI list format', async () => {
    const r = await gw.get('/api/llm/v1/models');
    expect(r.status).toBe(200);
    expect(r.body.object).toBe('list');
    const ids = r.body.data.map((m: { id: string }) => m.id);
    expect(ids.slice(0, 3)).toEqual(['platform/cheap', 'platform/mid', 'platform/best']);
    expect(ids).toContain('test/cheap-a');
    expect(ids).not.toContain('test/unpriced');
  });

  it('[llm:openai-errors] unknown paths and methods answer OpenAI-style bodies', async () => {
    const r = await gw.get('/api/llm/v1/nope');
    expect(r.status).toBe(404);
    expect(r.body.error).toMatchObject({ type: 'not_found_error', code: 'not_found' });
    const m = await gw.get(CHAT);
    expect(m.status).toBe(405);
    expect(m.headers.allow).toBe('POST');
  });

  it('[llm:openai-errors] hostile bodies: wrong type 415, malformed 400, too large 413, too deep 400', async () => {
    const { key } = await gw.account('1');
    const type = await gw.post(CHAT, 'model=x', { key, headers: { 'content-type': 'text/plain' } });
    expect(type.status).toBe(415);
    expect(type.body.error.code).toBe('unsupported_media_type');
    const bad = await gw.post(CHAT, '{"model":', { key });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('invalid_json');
    const big = await gw.post(
      CHAT,
      { model: 'm', messages: [{ role: 'user', content: 'x'.repeat(5 * 1024 * 1024) }] },
      { key },
    );
    expect(big.status).toBe(413);
    let deep: unknown = 'x';
    for (let i = 0; i < 40; i++) deep = [deep];
    const nested = await gw.post(CHAT, { model: 'm', messages: deep }, { key });
    expect(nested.status).toBe(400);
    expect(nested.body.error.type).toBe('invalid_request_error');
    expect(fake.requests).toHaveLength(0);
  });
});

describe('model router: configuration', () => {
  it('[llm:internal-service] [http:not-configured] [llm:pricing-free] without TOLLGATE_LLM_API_KEY: chat is 503 not_configured after auth, pricing still free', async () => {
    const bare = await startGateway();
    try {
      const { key } = await bare.account('1');
      const r = await bare.post(CHAT, { model: 'platform/cheap', messages: hi }, { key });
      expect(r.status).toBe(503);
      expect(r.body.error).toMatchObject({ code: 'not_configured', type: 'server_error' });
      // A bad key is refused as such, not hidden behind the 503.
      const bogus = await bare.post(CHAT, { model: 'platform/cheap', messages: hi }, { key: 'tg_sk_bogus' });
      expect(bogus.status).toBe(401);
      expect(bogus.body.error).toMatchObject({ code: 'unauthorized', type: 'authentication_error' });
      // The free listings answer (docs/spec.md §4.9: GET /pricing is free): nothing is servable, and they say why.
      const pricing = await bare.get('/api/llm/v1/pricing', { key: 'tg_sk_bogus' });
      expect(pricing.status).toBe(200);
      expect(pricing.body).toMatchObject({
        object: 'pricing',
        available: false,
        message: expect.stringContaining('TOLLGATE_LLM_API_KEY'),
        tiers: [],
        models: [],
      });
      expect((await bare.get('/api/llm/v1/models')).body).toEqual({ object: 'list', data: [] });
      expect(bare.gw.run.services.llm).toBeUndefined();
      expect(gw.gw.run.services.llm).toBeDefined();
    } finally {
      await bare.close();
    }
  });
});

describe('model router: chat completions', () => {
  it('[llm:api-key-auth] needs the catalog API key; missing or bad keys get 401 OpenAI-style', async () => {
    const none = await gw.post(CHAT, { model: 'test/cheap-a', messages: hi });
    expect(none.status).toBe(401);
    expect(none.body.error).toMatchObject({ type: 'authentication_error', code: 'unauthorized' });
    const bad = await gw.post(
      CHAT,
      { model: 'test/cheap-a', messages: hi },
      { key: `tg_sk_${'x'.repeat(43)}` },
    );
    expect(bad.status).toBe(401);
    expect(fake.requests).toHaveLength(0);
  });

  it('[llm:openai-compatible] [llm:exact-slug] [llm:itemized] non-stream: the body passes through, billed the upstream cost to the micro-dollar, itemized', async () => {
    const { accountId, key } = await gw.account('1');
    fake.scenario('test/cheap-a', {
      text: 'Bonjour',
      promptTokens: 12,
      completionTokens: 3,
      cost: 0.0001234,
    });
    const r = await gw.post(CHAT, { model: 'test/cheap-a', messages: hi, temperature: 0.2 }, { key });
    expect(r.status).toBe(200);
    expect(r.body.choices[0].message.content).toBe('Bonjour');
    expect(r.body.model).toBe('test/cheap-a');
    expect(fake.requests[0]?.model).toBe('test/cheap-a');
    expect(fake.requests[0]?.body.temperature).toBe(0.2);
    // 0.0001234 USD = 123.4 micro-USD, rounded up once per call.
    expect(r.headers['x-tollgate-charged-micros']).toBe('124');
    const c = await call(r.headers['x-tollgate-transaction-id'] as string);
    expect(c).toMatchObject({ action: 'llm/chat.completions', status: 'succeeded', charged_micros: 124 });
    expect(c.provider).toBe('test/cheap-a');
    expect(c.meta).toMatchObject({
      model: 'test/cheap-a',
      prompt_tokens: 12,
      completion_tokens: 3,
      cost_micros: 124,
      usage_source: 'upstream_cost',
    });
    expect((await gw.gw.ledger.balance(accountId)).balance_micros).toBe(1_000_000 - 124);
  });

  it('[llm:capture-actual] usage without cost bills tokens × listed price (+ request fee), rounded up once', async () => {
    const { key } = await gw.account('1');
    fake.scenario('test/fee', { promptTokens: 1000, completionTokens: 333, cost: null });
    const r = await gw.post(CHAT, { model: 'test/fee', messages: hi }, { key });
    // 1000 × 0.10/M + 333 × 0.40/M = 233.2 micro-USD → 234, plus the 0.001 USD request fee.
    expect(r.headers['x-tollgate-charged-micros']).toBe(String(234 + 1000));
    const c = await call(r.headers['x-tollgate-transaction-id'] as string);
    expect(c.meta).toMatchObject({ usage_source: 'tokens_x_price', cost_micros: 1234 });
  });

  it('[llm:price-override] a model the operator priced bills tokens × those prices, whatever the upstream reports', async () => {
    const { key } = await gw.account('1');
    fake.scenario('test/override', { promptTokens: 1000, completionTokens: 500, cost: 0.000001 });
    const r = await gw.post(CHAT, { model: 'test/override', messages: hi }, { key });
    // 1000 × 2 USD/M + 500 × 4 USD/M = 4000 micro-USD.
    expect(r.headers['x-tollgate-charged-micros']).toBe('4000');
    const p = await gw.get('/api/llm/v1/pricing');
    expect(p.body.models.find((m: { id: string }) => m.id === 'test/override')).toEqual({
      id: 'test/override',
      prompt_usd_per_m: '2.00',
      completion_usd_per_m: '4.00',
      source: 'override',
    });
  });

  it('[llm:capture-actual] [llm:hold-worst-case] a reported cost above the hold is capped at the hold', async () => {
    const { key } = await gw.account('1');
    fake.scenario('test/best-a', { cost: 0.5 });
    const r = await gw.post(CHAT, { model: 'test/best-a', messages: hi, max_tokens: 100 }, { key });
    // Hold: prompt bytes × 3 USD/M + 100 × 15 USD/M.
    const hold = promptBytes(hi) * 3 + 1500;
    expect(r.headers['x-tollgate-charged-micros']).toBe(String(hold));
    const c = await call(r.headers['x-tollgate-transaction-id'] as string);
    expect(c.hold_micros).toBe(hold);
    expect(c.meta).toMatchObject({ cost_micros: 500_000, hold_micros: hold });
  });

  it('[llm:hold-worst-case] the hold is measured against the available credit before the upstream is called', async () => {
    const { key } = await gw.account('0.01');
    const big = await gw.post(CHAT, { model: 'test/best-a', messages: hi, max_tokens: 1000 }, { key });
    expect(big.status).toBe(402);
    expect(big.body.error).toMatchObject({ type: 'insufficient_quota', code: 'insufficient_credit' });
    expect(fake.requests).toHaveLength(0);
    const small = await gw.post(CHAT, { model: 'test/best-a', messages: hi, max_tokens: 100 }, { key });
    expect(small.status).toBe(200);
  });

  it('[llm:max-tokens] max_tokens defaults to 4096 and is clamped to 16384', async () => {
    const { key } = await gw.account('1');
    await gw.post(CHAT, { model: 'test/cheap-a', messages: hi }, { key });
    await gw.post(CHAT, { model: 'test/cheap-a', messages: hi, max_tokens: 50_000 }, { key });
    await gw.post(CHAT, { model: 'test/cheap-a', messages: hi, max_completion_tokens: 77 }, { key });
    expect(fake.requests.map((q) => q.body.max_tokens)).toEqual([4096, 16384, 77]);
    expect(fake.requests[2]?.body.max_completion_tokens).toBeUndefined();
  });

  it('[llm:void-no-output] a completion with no tokens produced is voided: nothing charged', async () => {
    const { accountId, key } = await gw.account('1');
    fake.scenario('test/cheap-a', { text: '', completionTokens: 0, cost: 0.00002 });
    const r = await gw.post(CHAT, { model: 'test/cheap-a', messages: hi }, { key });
    expect(r.status).toBe(200);
    expect(r.headers['x-tollgate-charged-micros']).toBe('0');
    const c = await call(r.headers['x-tollgate-transaction-id'] as string);
    expect(c).toMatchObject({ status: 'failed', error_code: 'no_output', charged_micros: 0 });
    expect(await gw.gw.ledger.balance(accountId)).toMatchObject({
      balance_micros: 1_000_000,
      held_micros: 0,
    });
  });

  it('[llm:no-media-generation] image, audio or video generation is refused with a clear 400', async () => {
    const { key } = await gw.account('1');
    const mod = await gw.post(
      CHAT,
      { model: 'test/cheap-a', messages: hi, modalities: ['image', 'text'] },
      { key },
    );
    expect(mod.status).toBe(400);
    expect(mod.body.error).toMatchObject({
      type: 'invalid_request_error',
      code: 'invalid_input',
      param: 'modalities',
    });
    expect(mod.body.error.message).toMatch(/generation are not supported/);
    const audio = await gw.post(
      CHAT,
      { model: 'test/cheap-a', messages: hi, audio: { voice: 'x' } },
      { key },
    );
    expect(audio.status).toBe(400);
    const gen = await gw.post(CHAT, { model: 'test/image-gen', messages: hi }, { key });
    expect(gen.status).toBe(400);
    expect(gen.body.error.message).toMatch(/generates images, audio or video/);
    expect(fake.requests).toHaveLength(0);
  });

  it('[llm:unknown-price-refused] a model with no known price, or unknown, is refused, never billed at a guess', async () => {
    const { key } = await gw.account('1');
    const unpriced = await gw.post(CHAT, { model: 'test/unpriced', messages: hi }, { key });
    expect(unpriced.status).toBe(404);
    expect(unpriced.body.error.message).toMatch(/no known price/);
    const unknown = await gw.post(CHAT, { model: 'test/nope', messages: hi }, { key });
    expect(unknown.status).toBe(404);
    const tier = await gw.post(CHAT, { model: 'platform/huge', messages: hi }, { key });
    expect(tier.status).toBe(404);
    expect(fake.requests).toHaveLength(0);
  });

  it('[llm:openai-compatible] messages are required (stateless calls)', async () => {
    const { key } = await gw.account('1');
    const r = await gw.post(CHAT, { model: 'test/cheap-a' }, { key });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ param: 'messages' });
    expect(r.body.error.message).toMatch(/full conversation/);
  });
});

describe('model router: tiers and fallback', () => {
  it('[llm:tier-fallback] [llm:served-model] a 5xx before the first byte falls back in order; `model` names the served one', async () => {
    const { key } = await gw.account('1');
    fake.scenario('test/cheap-a', { status: 503 });
    const r = await gw.post(CHAT, { model: 'platform/cheap', messages: hi }, { key });
    expect(r.status).toBe(200);
    expect(r.body.model).toBe('test/cheap-b');
    expect(fake.requests.map((q) => q.model)).toEqual(['test/cheap-a', 'test/cheap-b']);
    const c = await call(r.headers['x-tollgate-transaction-id'] as string);
    expect(c.meta).toMatchObject({
      requested: 'platform/cheap',
      tier: 'platform/cheap',
      model: 'test/cheap-b',
      failed_attempts: [{ model: 'test/cheap-a', code: 'upstream_error' }],
    });
  });

  it('[llm:fallback-within-ceiling] never falls back to a model above the tier ceiling; all failing voids the call', async () => {
    const { accountId, key } = await gw.account('1');
    fake.scenario('test/cheap-a', { status: 500 });
    fake.scenario('test/cheap-b', { status: 502 });
    const r = await gw.post(CHAT, { model: 'platform/cheap', messages: hi }, { key });
    expect(r.status).toBe(502);
    expect(r.body.error.message).toMatch(/All 2 models of platform\/cheap failed/);
    expect(fake.requests.map((q) => q.model)).toEqual(['test/cheap-a', 'test/cheap-b']);
    expect(await gw.gw.ledger.balance(accountId)).toMatchObject({
      balance_micros: 1_000_000,
      held_micros: 0,
    });
  });

  it('[llm:tier-fallback] a 429, a 404 and a 200 carrying an error also fall back; a 400 does not', async () => {
    const { key } = await gw.account('1');
    fake.scenario('test/cheap-a', { status: 429 });
    expect((await gw.post(CHAT, { model: 'platform/cheap', messages: hi }, { key })).body.model).toBe(
      'test/cheap-b',
    );
    fake.scenario('test/cheap-a', { errorInBody: 404 });
    expect((await gw.post(CHAT, { model: 'platform/cheap', messages: hi }, { key })).body.model).toBe(
      'test/cheap-b',
    );
    fake.requests.length = 0;
    fake.scenario('test/cheap-a', { status: 400 });
    const r = await gw.post(CHAT, { model: 'platform/cheap', messages: hi }, { key });
    expect(r.status).toBe(422);
    expect(r.body.error).toMatchObject({ code: 'upstream_rejected', type: 'invalid_request_error' });
    expect(r.body.error.message).not.toMatch(/scripted/); // vendor text stays in the log
    expect(fake.requests.map((q) => q.model)).toEqual(['test/cheap-a']);
  });

  it('[llm:upstream-429-not-ours] the upstream 429 becomes 503 upstream_busy, never our 429', async () => {
    const { key } = await gw.account('1');
    fake.scenario('test/best-a', { status: 429, retryAfter: '7' });
    const r = await gw.post(CHAT, { model: 'platform/best', messages: hi }, { key });
    expect(r.status).toBe(503);
    expect(r.body.error).toMatchObject({ code: 'upstream_busy' });
    expect(r.headers['retry-after']).toBe('7');
  });

  it('[llm:tier-fallback] streaming: a slow first byte falls back to the next model (the slow one is aborted)', async () => {
    const { key } = await gw.account('1');
    fake.scenario('test/cheap-a', { firstChunkDelayMs: 3000 });
    const aborted = fake.closed('test/cheap-a');
    const r = await sse({ model: 'platform/cheap', messages: hi, stream: true }, key);
    expect(r.status).toBe(200);
    expect(JSON.parse(r.events[0] as string).model).toBe('test/cheap-b');
    expect((await aborted).aborted).toBe(true);
  });

  it('[llm:tier-fallback] streaming: an error event before the first chunk falls back too', async () => {
    const { key } = await gw.account('1');
    fake.scenario('test/cheap-a', { midStreamErrorAfter: 0 });
    const r = await sse({ model: 'platform/cheap', messages: hi, stream: true }, key);
    expect(r.status).toBe(200);
    expect(r.text).not.toMatch(/Provider disconnected/);
    expect(JSON.parse(r.events[0] as string).model).toBe('test/cheap-b');
  });
});
