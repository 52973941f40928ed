import pino from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createModelRouter } from '../../src/llm/index.js';
import { type FakeOpenRouter, llmEnv, startFakeOpenRouter, TEST_MODELS } from '../fakes/openrouter.js';
import { ManualClock } from '../helpers/clock.js';
import { testConfig } from '../helpers/gateway.js';

// The internal LlmService (tools/context.ts) on the router's upstream client, against the fake OpenRouter.

let fake: FakeOpenRouter;
let llm: ReturnType<typeof createModelRouter>;

beforeAll(async () => {
  fake = await startFakeOpenRouter(TEST_MODELS);
  const config = testConfig(llmEnv(fake)).llm;
  llm = createModelRouter(
    { ...config, apiKey: fake.apiKey },
    { clock: new ManualClock(), log: pino({ level: 'silent' }) },
  );
});
afterAll(async () => {
  await llm?.close();
  await fake?.close();
});
afterEach(() => fake.reset());

const signal = () => new AbortController().signal;
const schema = {
  type: 'object',
  properties: { name: { type: 'string' } },
  required: ['name'],
  additionalProperties: false,
};

describe('[llm:internal-service] LlmService', () => {
  it('falls back within the tier and reports the model, usage and its own cost', async () => {
    fake.scenario('test/cheap-a', { status: 503 });
    fake.scenario('test/cheap-b', { text: 'summary', promptTokens: 7, completionTokens: 2, cost: 0.000004 });
    const r = await llm.service.complete({
      tier: 'platform/cheap',
      messages: [{ role: 'user', content: 'Summarize' }],
      signal: signal(),
    });
    expect(r).toEqual({
      text: 'summary',
      model: 'test/cheap-b',
      usage: { prompt_tokens: 7, completion_tokens: 2 },
      costMicros: 4,
    });
    expect(fake.requests.map((q) => q.model)).toEqual(['test/cheap-a', 'test/cheap-b']);
    expect(fake.requests[1]?.body.max_tokens).toBe(4096);
  });

  it('asks for a JSON schema, validates the answer, and tries the next model when it does not comply', async () => {
    fake.scenario('test/cheap-a', { text: 'not json', cost: 0.000002 });
    fake.scenario('test/cheap-b', { text: '```json\n{"name":"Ada"}\n```', cost: 0.000003 });
    const r = await llm.service.complete({
      tier: 'platform/cheap',
      messages: [{ role: 'user', content: 'Extract' }],
      jsonSchema: schema,
      maxTokens: 99_999,
      signal: signal(),
    });
    expect(r.json).toEqual({ name: 'Ada' });
    expect(r.costMicros).toBe(5); // both attempts cost the gateway
    expect(fake.requests[0]?.body.response_format).toMatchObject({
      type: 'json_schema',
      json_schema: { schema },
    });
    expect(fake.requests[0]?.body.max_tokens).toBe(16384);
  });

  it('fails with bad_response when no model complies, and stops at a non-retryable upstream error', async () => {
    fake.scenario('test/cheap-a', { text: '{"nom":"x"}' });
    fake.scenario('test/cheap-b', { text: '{"name":1}' });
    const bad = await llm.service
      .complete({
        tier: 'platform/cheap',
        messages: [{ role: 'user', content: 'x' }],
        jsonSchema: schema,
        signal: signal(),
      })
      .catch((e) => e);
    expect(bad).toMatchObject({ code: 'bad_response' });

    fake.requests.length = 0;
    fake.scenario('test/cheap-a', { status: 400 });
    const rejected = await llm.service
      .complete({ tier: 'platform/cheap', messages: [{ role: 'user', content: 'x' }], signal: signal() })
      .catch((e) => e);
    expect(rejected).toMatchObject({ code: 'upstream_rejected' });
    expect(fake.requests).toHaveLength(1);
  });
});
