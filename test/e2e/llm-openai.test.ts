import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type FakeOpenRouter, llmEnv, startFakeOpenRouter, TEST_MODELS } from '../fakes/openrouter.js';
import { ManualClock } from '../helpers/clock.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

// The official `openai` npm client, unmodified (base URL + key), against the gateway's model router.

let fake: FakeOpenRouter;
let gw: TestGateway;
let baseURL: string;

beforeAll(async () => {
  fake = await startFakeOpenRouter(TEST_MODELS);
  // A fixed noon UTC, so the cap's Retry-After is exactly 12 h.
  gw = await startGateway({
    clock: new ManualClock(Date.UTC(2026, 5, 1, 12, 0, 0)),
    env: llmEnv(fake, { TOLLGATE_LLM_DAILY_CAP_USD: '0.05' }),
  });
  baseURL = `${gw.url}/api/llm/v1`;
});
afterAll(async () => {
  await gw?.close();
  await fake?.close();
});
afterEach(() => fake.reset());

async function client(usd = '1'): Promise<OpenAI> {
  const { key } = await gw.account(usd);
  return new OpenAI({ baseURL, apiKey: key });
}

describe('openai client against the model router', () => {
  it('[llm:openai-compatible] [llm:served-model] non-stream completion on a tier', async () => {
    const openai = await client();
    fake.scenario('test/cheap-a', { text: 'Hello, agent.' });
    const r = await openai.chat.completions.create({
      model: 'platform/cheap',
      messages: [{ role: 'user', content: 'Say hello' }],
    });
    expect(r.choices[0]?.message.content).toBe('Hello, agent.');
    expect(r.model).toBe('test/cheap-a');
    expect(r.usage?.completion_tokens).toBeGreaterThan(0);
  });

  it('[llm:openai-compatible] [llm:stream-passthrough] streaming, with and without the usage chunk', async () => {
    const openai = await client();
    fake.scenario('test/cheap-a', { text: 'one two three four', chunks: 4 });
    let text = '';
    const stream = await openai.chat.completions.create({
      model: 'test/cheap-a',
      messages: [{ role: 'user', content: 'Count' }],
      stream: true,
    });
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    expect(text).toBe('one two three four');

    const withUsage = await openai.chat.completions.create({
      model: 'test/cheap-a',
      messages: [{ role: 'user', content: 'Count' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks = [];
    for await (const chunk of withUsage) chunks.push(chunk);
    expect(chunks.at(-1)?.usage?.prompt_tokens).toBe(10);
  });

  it('[llm:models] models.list() pages through the tiers and models', async () => {
    const openai = await client();
    const ids: string[] = [];
    for await (const m of openai.models.list()) ids.push(m.id);
    expect(ids).toContain('platform/best');
    expect(ids).toContain('test/cheap-b');
  });

  it('[llm:openai-errors] errors arrive as the matching OpenAI error classes with our messages', async () => {
    const bad = new OpenAI({ baseURL, apiKey: `tg_sk_${'A'.repeat(43)}`, maxRetries: 0 });
    const auth = await bad.chat.completions.create({ model: 'test/cheap-a', messages: [] }).catch((e) => e);
    expect(auth).toBeInstanceOf(OpenAI.AuthenticationError);
    expect(auth.message).toMatch(/API key was refused/);

    const openai = await client();
    const missing = await openai.chat.completions
      .create({ model: 'test/nope', messages: [{ role: 'user', content: 'x' }] })
      .catch((e) => e);
    expect(missing).toBeInstanceOf(OpenAI.NotFoundError);
    expect(missing.code).toBe('not_found');

    fake.scenario('test/cheap-a', { status: 400 });
    const rejected = await openai.chat.completions
      .create({ model: 'test/cheap-a', messages: [{ role: 'user', content: 'x' }] })
      .catch((e) => e);
    expect(rejected).toBeInstanceOf(OpenAI.UnprocessableEntityError);
    expect(rejected.type).toBe('invalid_request_error');

    const poor = await client('0');
    const broke = await poor.chat.completions
      .create({ model: 'test/cheap-a', messages: [{ role: 'user', content: 'x' }] })
      .catch((e) => e);
    expect(broke).toBeInstanceOf(OpenAI.APIError);
    expect(broke.status).toBe(402);
    expect(broke.code).toBe('insufficient_credit');
  });

  it('[llm:mid-stream-failure] a failure after the stream began surfaces as an APIError while iterating', async () => {
    const openai = await client();
    fake.scenario('test/cheap-a', { chunks: 4, midStreamErrorAfter: 2 });
    const stream = await openai.chat.completions.create({
      model: 'test/cheap-a',
      messages: [{ role: 'user', content: 'x' }],
      stream: true,
    });
    const err = await (async () => {
      for await (const _ of stream) {
        // read until it fails
      }
    })().catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect(err.message).toMatch(/failed while streaming; nothing was charged/);
  });

  it("[llm:daily-cap-429] the cap's 429 reaches the client as RateLimitError with Retry-After, without client retries", async () => {
    const { key } = await gw.account('1');
    let requests = 0;
    const counting: typeof fetch = (input, init) => {
      requests++;
      return fetch(input, init);
    };
    const openai = new OpenAI({ baseURL, apiKey: key, fetch: counting });
    // Each call holds and posts 16,000 micro-USD: three fit under the 0.05 USD cap, the fourth does not.
    fake.scenario('test/flat', { cost: 0.016 });
    const ask = () =>
      openai.chat.completions.create({
        model: 'test/flat',
        messages: [{ role: 'user', content: 'x' }],
        max_tokens: 16_000,
      });
    for (let i = 0; i < 3; i++) await ask();
    requests = 0;
    const err = await ask().catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect(err.code).toBe('daily_cap_exceeded');
    expect(err.headers.get('retry-after')).toBe(String(12 * 3600));
    expect(requests).toBe(1);
  });
});
