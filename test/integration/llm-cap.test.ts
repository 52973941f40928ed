import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type FakeOpenRouter, llmEnv, startFakeOpenRouter, TEST_MODELS } from '../fakes/openrouter.js';
import { ManualClock } from '../helpers/clock.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

// The model router's daily inference cap (docs/spec.md §8: 10 USD per account per UTC day, here 0.01 USD): checked at
// admission together with the hold, in one serialized write. `test/flat` costs 1 micro-USD per completion
// token and nothing per prompt token, so a call's hold is exactly its max_tokens in micro-USD.

const CHAT = '/api/llm/v1/chat/completions';
const hi = [{ role: 'user', content: 'hi' }];
const CAP = 10_000;

let fake: FakeOpenRouter;
let gw: TestGateway;
const clock = new ManualClock(Date.UTC(2026, 2, 1, 23, 59, 0));

beforeAll(async () => {
  fake = await startFakeOpenRouter(TEST_MODELS);
  gw = await startGateway({ clock, env: llmEnv(fake, { TOLLGATE_LLM_DAILY_CAP_USD: '0.01' }) });
});
afterAll(async () => {
  await gw?.close();
  await fake?.close();
});
afterEach(() => fake.reset());

const ask = (key: string, maxTokens: number) =>
  gw.post(CHAT, { model: 'test/flat', messages: hi, max_tokens: maxTokens }, { key });

describe('model router: daily inference cap', () => {
  it('[llm:daily-cap-429] beyond the cap: 429, Retry-After to the next UTC midnight, OpenAI body, nothing charged', async () => {
    clock.set(Date.UTC(2026, 2, 1, 23, 59, 0));
    const { accountId, key } = await gw.account('1');
    fake.scenario('test/flat', { cost: 0.000005 });
    const first = await ask(key, 6000);
    expect(first.status).toBe(200);
    expect(first.headers['x-tollgate-charged-micros']).toBe('5');

    // 5 spent + a hold of 9996 = 10001 > cap.
    const over = await ask(key, 9996);
    expect(over.status).toBe(429);
    expect(over.headers['retry-after']).toBe('60');
    expect(over.headers['x-should-retry']).toBe('false');
    expect(over.body.error).toMatchObject({ type: 'rate_limit_error', code: 'daily_cap_exceeded' });
    expect(over.body.error.message).toMatch(/Daily inference cap of \$0\.01 reached/);
    expect(fake.requests).toHaveLength(1);
    expect(await gw.gw.ledger.balance(accountId)).toMatchObject({
      balance_micros: 1_000_000 - 5,
      held_micros: 0,
    });

    // Exactly up to the cap is admitted.
    expect((await ask(key, 9995)).status).toBe(200);
    // The next UTC day starts afresh.
    clock.set(Date.UTC(2026, 2, 2, 0, 0, 1));
    expect((await ask(key, 9996)).status).toBe(200);
  });

  it('[llm:daily-cap-429] a call whose worst case alone exceeds the cap is a 400, not a 429 to wait out', async () => {
    const { key } = await gw.account('1');
    const r = await ask(key, CAP + 1);
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ code: 'invalid_input', param: 'max_tokens' });
    expect(r.headers['retry-after']).toBeUndefined();
  });

  it('[llm:daily-cap-concurrency] N parallel requests near the cap never overshoot it', async () => {
    clock.set(Date.UTC(2026, 2, 3, 12, 0, 0));
    const { accountId, key } = await gw.account('1');
    // Every call is slow, so all 20 are admitted or refused while the first ones still run; each costs its hold.
    fake.scenario('test/flat', { headersDelayMs: 500, cost: 0.002 });
    const replies = await Promise.all(Array.from({ length: 20 }, () => ask(key, 2000)));
    const statuses = replies.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 200)).toHaveLength(CAP / 2000);
    expect(statuses.filter((s) => s === 429)).toHaveLength(20 - CAP / 2000);
    const charged = (await gw.gw.ledger.transactions(accountId, 50)).reduce(
      (s, c) => s + c.charged_micros,
      0,
    );
    expect(charged).toBe(CAP);
    // The day's counter, read through the store layer (either database).
    const spent = await sql<{ spent_micros: number | string }>`SELECT spent_micros FROM spend_counters
      WHERE account_id = ${accountId} AND counter = ${'2026-03-03'}`.execute(gw.gw.state.stores);
    expect(Number(spent.rows[0]?.spent_micros)).toBe(CAP);
    expect(await gw.gw.ledger.balance(accountId)).toMatchObject({
      balance_micros: 1_000_000 - CAP,
      held_micros: 0,
    });
  });

  it('[llm:daily-cap-concurrency] what a capture does not use goes back to the day', async () => {
    clock.set(Date.UTC(2026, 2, 4, 12, 0, 0));
    const { key } = await gw.account('1');
    fake.scenario('test/flat', { cost: 0.000001 });
    // Each call holds 9000 but posts 1: twenty in a row all fit under a cap of 10,000.
    for (let i = 0; i < 20; i++) expect((await ask(key, 9000)).status).toBe(200);
  });
});
