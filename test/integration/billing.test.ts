import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors.js';
import type { HandlerContext } from '../../tools/context.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

// The money rules through the real HTTP door, with handlers replaced so each test controls what "upstream"
// does. scraperC/scrape costs 1 cent (10,000 micro-USD).

type Behaviour = (input: { url: string }, ctx: HandlerContext) => Promise<{ raw: string }>;
let behaviour: Behaviour = async () => ({ raw: '<html>ok</html>' });
let calls = 0;

let t: TestGateway;
beforeAll(async () => {
  t = await startGateway({
    handlers: {
      'scraperC/scrape': async (input, ctx) => {
        calls++;
        return behaviour(input, ctx);
      },
    },
  });
});
afterAll(() => t.close());

const body = { url: 'https://example.com/', browser: false };

async function balanceOf(accountId: string) {
  return t.gw.ledger.balance(accountId);
}

describe('charge only on success', () => {
  it('[billing:charge-only-on-success] [http:envelope] success is charged exactly the price and recorded', async () => {
    behaviour = async () => ({ raw: '<html>ok</html>' });
    const { accountId, key } = await t.account('1');
    const r = await t.post('/api/run/scraperC/scrape', body, { key });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      ok: true,
      data: { raw: '<html>ok</html>' },
      charged_cents: 1,
      transaction_id: expect.stringMatching(/^txn_/),
    });
    expect(await balanceOf(accountId)).toEqual({
      balance_micros: 990_000,
      held_micros: 0,
      available_micros: 990_000,
    });
    const [tx] = await t.gw.ledger.transactions(accountId, 1);
    // [billing:recorded-to-the-cent]
    expect(tx).toMatchObject({
      id: r.body.transaction_id,
      action: 'scraperC/scrape',
      status: 'succeeded',
      price_micros: 10_000,
      charged_micros: 10_000,
      payment_method: 'api_key',
    });
    expect(tx?.duration_ms).toBeGreaterThanOrEqual(0);
  });

  const failures: Array<[string, () => Promise<never>, number, string]> = [
    [
      'upstream 4xx',
      async () => Promise.reject(new GatewayError('upstream_rejected', 'bad')),
      422,
      'upstream_rejected',
    ],
    [
      'upstream 5xx',
      async () => Promise.reject(new GatewayError('upstream_error', 'boom')),
      502,
      'upstream_error',
    ],
    [
      'upstream timeout',
      async () => Promise.reject(new GatewayError('upstream_timeout', 'slow')),
      504,
      'upstream_timeout',
    ],
    [
      'vendor out of credit',
      async () => Promise.reject(new GatewayError('upstream_unavailable', 'x')),
      503,
      'upstream_unavailable',
    ],
    [
      'a bug in a handler',
      async () => Promise.reject(new TypeError('undefined is not a function')),
      500,
      'internal',
    ],
  ];
  for (const [name, fail, status, code] of failures) {
    it(`[billing:charge-only-on-success] ${name} → ${status} ${code}, nothing charged, hold voided`, async () => {
      behaviour = fail;
      const { accountId, key } = await t.account('1');
      const r = await t.post('/api/run/scraperC/scrape', body, { key });
      expect(r.status).toBe(status);
      expect(r.body).toMatchObject({ ok: false, error: { code }, charged_cents: 0 });
      expect(r.text).not.toContain('undefined is not a function');
      expect(await balanceOf(accountId)).toEqual({
        balance_micros: 1_000_000,
        held_micros: 0,
        available_micros: 1_000_000,
      });
      const [tx] = await t.gw.ledger.transactions(accountId, 1);
      expect(tx).toMatchObject({ status: 'failed', charged_micros: 0, error_code: code });
    });
  }

  it('[billing:charge-only-on-success] output that fails its schema is a bad_response, not charged', async () => {
    behaviour = async () => ({ nope: 1 }) as never;
    const { accountId, key } = await t.account('1');
    const r = await t.post('/api/run/scraperC/scrape', body, { key });
    expect(r.status).toBe(502);
    expect(r.body.error.code).toBe('bad_response');
    expect((await balanceOf(accountId)).balance_micros).toBe(1_000_000);
  });

  it('[billing:charge-only-on-success] invalid input never reaches the ledger', async () => {
    const before = calls;
    const { accountId, key } = await t.account('1');
    const r = await t.post('/api/run/scraperC/scrape', { url: 'not a url', timeout: 99 }, { key });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('invalid_input');
    expect(r.body.error.details.issues.map((i: { path: string }) => i.path).sort()).toEqual([
      'timeout',
      'url',
    ]);
    expect(calls).toBe(before);
    expect(await t.gw.ledger.transactions(accountId, 5)).toHaveLength(0);
  });

  it('[billing:charge-only-on-success] a client that hangs up cancels the call: upstream aborted, nothing charged', async () => {
    let aborted = false;
    let started!: () => void;
    const running = new Promise<void>((r) => {
      started = r;
    });
    behaviour = (_input, ctx) =>
      new Promise((_resolve, reject) => {
        started();
        ctx.signal.addEventListener('abort', () => {
          aborted = true;
          reject(ctx.signal.reason);
        });
      });
    const { accountId, key } = await t.account('1');
    const ac = new AbortController();
    const pending = request(`${t.url}/api/run/scraperC/scrape`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: ac.signal,
    }).catch(() => undefined);
    await running;
    expect((await balanceOf(accountId)).held_micros).toBe(10_000);
    ac.abort();
    await pending;
    await expect.poll(async () => (await t.gw.ledger.transactions(accountId, 1))[0]?.status).toBe('failed');
    expect(aborted).toBe(true);
    const [tx] = await t.gw.ledger.transactions(accountId, 1);
    expect(tx?.error_code).toBe('cancelled');
    expect(await balanceOf(accountId)).toEqual({
      balance_micros: 1_000_000,
      held_micros: 0,
      available_micros: 1_000_000,
    });
  });
});

describe('concurrency', () => {
  it('[billing:no-overdraft] N concurrent calls against a balance that covers k: exactly k succeed', async () => {
    behaviour = async () => {
      await new Promise((r) => setTimeout(r, 20));
      return { raw: 'x' };
    };
    const { accountId, key } = await t.account('0.07'); // 7 calls of 1 cent
    let minAvailable = Number.POSITIVE_INFINITY;
    const watcher = setInterval(async () => {
      minAvailable = Math.min(minAvailable, (await balanceOf(accountId)).available_micros);
    }, 2);
    const replies = await Promise.all(
      Array.from({ length: 40 }, () => t.post('/api/run/scraperC/scrape', body, { key })),
    );
    clearInterval(watcher);
    const ok = replies.filter((r) => r.status === 200);
    const refused = replies.filter((r) => r.status === 402);
    expect(ok).toHaveLength(7);
    expect(refused).toHaveLength(33);
    for (const r of refused) {
      expect(r.body.error.code).toBe('insufficient_credit');
      expect(r.body.error.message).toMatch(/tollgate credit/);
    }
    expect(await balanceOf(accountId)).toEqual({ balance_micros: 0, held_micros: 0, available_micros: 0 });
    expect(minAvailable).toBeGreaterThanOrEqual(0);
  });
});

describe('idempotency', () => {
  it('[billing:idempotent-replay] a retry with the same key and body replays without a new charge', async () => {
    let n = 0;
    behaviour = async () => ({ raw: `call ${++n}` });
    const { accountId, key } = await t.account('1');
    const headers = { 'idempotency-key': 'order-1' };
    const first = await t.post('/api/run/scraperC/scrape', body, { key, headers });
    const second = await t.post(
      '/api/run/scraperC/scrape',
      { browser: false, url: 'https://example.com/' },
      { key, headers },
    );
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(second.body).toEqual(first.body);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(n).toBe(1);
    expect((await balanceOf(accountId)).balance_micros).toBe(990_000);
  });

  it('[billing:idempotency-mismatch] the same key with another body → 422, nothing charged', async () => {
    behaviour = async () => ({ raw: 'x' });
    const { accountId, key } = await t.account('1');
    const headers = { 'idempotency-key': 'order-2' };
    await t.post('/api/run/scraperC/scrape', body, { key, headers });
    const other = await t.post(
      '/api/run/scraperC/scrape',
      { ...body, url: 'https://example.org/' },
      { key, headers },
    );
    expect(other.status).toBe(422);
    expect(other.body.error.code).toBe('idempotency_mismatch');
    expect((await balanceOf(accountId)).balance_micros).toBe(990_000);
  });

  it('[billing:idempotency-in-flight] the same key while the first call runs → 409; 10 concurrent copies run once', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    let n = 0;
    behaviour = async () => {
      n++;
      await gate;
      return { raw: 'once' };
    };
    const { accountId, key } = await t.account('1');
    const headers = { 'idempotency-key': 'order-3' };
    let answered = 0;
    const copies = Array.from({ length: 10 }, () =>
      t.post('/api/run/scraperC/scrape', body, { key, headers }).finally(() => answered++),
    );
    await expect.poll(() => n).toBe(1);
    const early = await t.post('/api/run/scraperC/scrape', body, { key, headers });
    expect(early.status).toBe(409);
    expect(early.headers['retry-after']).toBe('1');
    // The other nine are answered while the first still runs (on a loaded machine a copy could otherwise arrive
    // after the first finished, and be a replay).
    await expect.poll(() => answered, { timeout: 10_000 }).toBe(9);
    release();
    const replies = await Promise.all(copies);
    expect(replies.filter((r) => r.status === 200)).toHaveLength(1);
    expect(replies.filter((r) => r.status === 409)).toHaveLength(9);
    expect(n).toBe(1);
    expect((await balanceOf(accountId)).balance_micros).toBe(990_000);
    const replay = await t.post('/api/run/scraperC/scrape', body, { key, headers });
    expect(replay.body.data).toEqual({ raw: 'once' });
  });

  it('a failed call releases its key: the retry runs and is charged once', async () => {
    let n = 0;
    behaviour = async () => {
      n++;
      if (n === 1) throw new GatewayError('upstream_error', 'flaky');
      return { raw: 'second time' };
    };
    const { accountId, key } = await t.account('1');
    const headers = { 'idempotency-key': 'order-4' };
    expect((await t.post('/api/run/scraperC/scrape', body, { key, headers })).status).toBe(502);
    const retry = await t.post('/api/run/scraperC/scrape', body, { key, headers });
    expect(retry.status).toBe(200);
    expect((await balanceOf(accountId)).balance_micros).toBe(990_000);
  });

  it('a malformed Idempotency-Key is a 400 naming the header', async () => {
    const { key } = await t.account('1');
    const r = await t.post('/api/run/scraperC/scrape', body, {
      key,
      headers: { 'idempotency-key': 'x'.repeat(256) },
    });
    expect(r.status).toBe(400);
    expect(r.body.error.details.issues[0].path).toBe('Idempotency-Key');
  });
});

describe('max_cost_cents', () => {
  it('[billing:max-cost-guard] a price above the ceiling is refused and not charged; at or above is fine', async () => {
    behaviour = async () => ({ raw: 'x' });
    const { accountId, key } = await t.account('1');
    const refused = await t.post(
      '/api/run/scraperC/scrape_residential',
      { url: 'https://example.com/', max_cost_cents: 3 },
      { key },
    );
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({
      code: 'max_cost_exceeded',
      details: { price_cents: 4, max_cost_cents: 3 },
    });
    const ok = await t.post('/api/run/scraperC/scrape', { ...body, max_cost_cents: 1 }, { key });
    expect(ok.status).toBe(200);
    expect(ok.body.charged_cents).toBe(1);
    expect((await balanceOf(accountId)).balance_micros).toBe(990_000);
  });

  it('[billing:max-cost-guard] is accepted by strict actions and validated itself', async () => {
    const { key } = await t.account('1');
    // scraperC is strict: max_cost_cents is removed before validation, so it is not an unknown field.
    const ok = await t.post('/api/run/scraperC/scrape', { ...body, max_cost_cents: 5 }, { key });
    expect(ok.status).toBe(200);
    for (const bad of [-1, 1.5, '2', null]) {
      const r = await t.post('/api/run/scraperC/scrape', { ...body, max_cost_cents: bad }, { key });
      expect(r.status).toBe(400);
      expect(r.body.error.details.issues[0].path).toBe('max_cost_cents');
    }
  });
});
