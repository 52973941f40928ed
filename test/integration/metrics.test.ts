import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors.js';
import { type FakeOpenRouter, llmEnv, startFakeOpenRouter, TEST_MODELS } from '../fakes/openrouter.js';
import { type FakeServer, RENTCAST_KEY, startFakeRentCast } from '../fakes/rentcast.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { mcp2025Headers } from '../helpers/mcp-raw.js';

// GET /metrics through a real gateway: the bearer token, the admin port, and what the counters say after real
// calls through every door — and that no account id, key or caller-chosen string ever becomes a label.

const TOKEN = 'metrics-token-0123456789abcdef-0123456789';
let failNext = false;
let rentcast: FakeServer;
let openrouter: FakeOpenRouter;
let t: TestGateway;

beforeAll(async () => {
  rentcast = await startFakeRentCast({ perSecond: 1000 });
  openrouter = await startFakeOpenRouter(TEST_MODELS);
  t = await startGateway({
    env: {
      TOLLGATE_METRICS_TOKEN: TOKEN,
      TOLLGATE_RENTCAST_API_KEY: RENTCAST_KEY,
      TOLLGATE_RENTCAST_BASE_URL: rentcast.url,
      ...llmEnv(openrouter),
    },
    handlers: {
      'scraperC/scrape': async () => {
        if (failNext) {
          failNext = false;
          throw new GatewayError('upstream_error', 'the fake vendor failed');
        }
        return { raw: '<html>ok</html>' };
      },
    },
  });
});
afterAll(async () => {
  await t?.close();
  await rentcast?.close();
  await openrouter?.close();
});

async function scrape(url: string, token?: string) {
  const res = await request(url, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
}

/** The value of one series, by its exact label set in declaration order; undefined when absent. */
function value(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  const l = Object.entries(labels)
    .map(([k, v]) => `${k}="${v}"`)
    .join(',');
  const prefix = l ? `${name}{${l}} ` : `${name} `;
  const line = text.split('\n').find((x) => x.startsWith(prefix));
  return line === undefined ? undefined : Number(line.slice(prefix.length));
}

async function mcpCall(key: string, name: string, args: Record<string, unknown>) {
  const res = await request(`${t.url}/mcp`, {
    method: 'POST',
    headers: mcp2025Headers(key),
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
  });
  return res.body.text();
}

describe('[ops:metrics-auth] /metrics needs the token', () => {
  it('refuses without it, or with a wrong one, and serves Prometheus text with it', async () => {
    const none = await scrape(`${t.url}/metrics`);
    expect(none.status).toBe(401);
    expect(none.headers['www-authenticate']).toContain('Bearer');
    expect(JSON.parse(none.text).error.code).toBe('unauthorized');
    expect(none.text).not.toContain('tollgate_');
    expect((await scrape(`${t.url}/metrics`, `${TOKEN}x`)).status).toBe(401);
    expect((await scrape(`${t.url}/metrics`, TOKEN.slice(0, 20))).status).toBe(401);
    const basic = await request(`${t.url}/metrics`, { headers: { authorization: `Basic ${TOKEN}` } });
    await basic.body.text();
    expect(basic.statusCode).toBe(401);
    const ok = await scrape(`${t.url}/metrics?x=1`, TOKEN);
    expect(ok.status).toBe(200);
    expect(ok.headers['content-type']).toContain('text/plain; version=0.0.4');
    expect(ok.text).toContain('# TYPE tollgate_calls_total counter');
    const post = await t.post('/metrics', {}, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(post.status).toBe(405);
  });

  it('is not served, and nothing is counted, when neither a token nor an admin port is set', async () => {
    const plain = await startGateway();
    try {
      expect(plain.gw.telemetry).toBeUndefined();
      const r = await scrape(`${plain.url}/metrics`, TOKEN);
      expect(r.status).toBe(404);
    } finally {
      await plain.close();
    }
  });

  it('the admin port serves /metrics alone; the public port then does not', async () => {
    const admin = await startGateway({ env: { TOLLGATE_METRICS_PORT: '0' } });
    try {
      const url = admin.gw.adminUrl as string;
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const r = await scrape(`${url}/metrics`);
      expect(r.status).toBe(200);
      expect(r.text).toContain('tollgate_build_info');
      expect((await scrape(`${url}/api/run`)).status).toBe(404);
      expect((await scrape(`${admin.url}/metrics`)).status).toBe(404);
    } finally {
      await admin.close();
    }
  });
});

describe('[ops:metrics] calls, money, upstreams, ledger and the model router', () => {
  let text: string;
  const secrets: string[] = [];

  beforeAll(async () => {
    const rich = await t.account('5');
    const poor = await t.account('0');
    secrets.push(rich.accountId, rich.key, poor.accountId, poor.key);
    const body = { url: 'https://secret-target.example/', browser: false };

    const ok = await t.post('/api/run/scraperC/scrape', body, { key: rich.key });
    expect(ok.status).toBe(200);
    secrets.push(ok.body.transaction_id);
    failNext = true;
    expect((await t.post('/api/run/scraperC/scrape', body, { key: rich.key })).status).toBe(502);
    expect((await t.post('/api/run/scraperC/scrape', body, { key: poor.key })).status).toBe(402);
    expect((await t.post('/api/run/scraperC/scrape', body)).status).toBe(402);
    expect((await t.post('/api/run/hiddenservice/leak', {}, { key: rich.key })).status).toBe(404);
    const prop = await t.post(
      '/api/run/propstats/properties',
      { address: '5500 Grand Lake Dr, San Antonio, TX 78244' },
      { key: rich.key },
    );
    expect(prop.status).toBe(200);
    expect(await mcpCall(rich.key, 'scraperC_scrape', body)).toContain('charged_cents');
    const chat = await t.post(
      '/api/llm/v1/chat/completions',
      { model: 'platform/cheap', messages: [{ role: 'user', content: 'hi' }] },
      { key: rich.key },
    );
    expect(chat.status).toBe(200);

    text = (await scrape(`${t.url}/metrics`, TOKEN)).text;
  });

  it('counts calls by action, door, payment method and outcome, with latency per action and door', () => {
    const calls = (action: string, door: string, payment: string, outcome: string) =>
      value(text, 'tollgate_calls_total', { action, door, payment_method: payment, outcome });
    expect(calls('scraperC/scrape', 'http', 'api_key', 'ok')).toBe(1);
    expect(calls('scraperC/scrape', 'http', 'api_key', 'upstream_error')).toBe(1);
    expect(calls('scraperC/scrape', 'http', 'api_key', 'insufficient_credit')).toBe(1);
    expect(calls('scraperC/scrape', 'http', 'anonymous', 'payment_required')).toBe(1);
    expect(calls('_unknown', 'http', 'api_key', 'not_found')).toBe(1);
    expect(calls('scraperC/scrape', 'mcp', 'api_key', 'ok')).toBe(1);
    expect(calls('propstats/properties', 'http', 'api_key', 'ok')).toBe(1);
    expect(calls('llm/chat.completions', 'llm', 'api_key', 'ok')).toBe(1);
    expect(
      value(text, 'tollgate_call_duration_seconds_count', { action: 'scraperC/scrape', door: 'http' }),
    ).toBe(4);
    expect(
      value(text, 'tollgate_call_duration_seconds_count', { action: 'scraperC/scrape', door: 'mcp' }),
    ).toBe(1);
  });

  it('[ops:money-metrics] counts money captured, holds voided and refused, and nothing pending', () => {
    expect(
      value(text, 'tollgate_charged_micros_total', { action: 'scraperC/scrape', payment_method: 'api_key' }),
    ).toBe(20_000);
    expect(
      value(text, 'tollgate_charged_micros_total', {
        action: 'propstats/properties',
        payment_method: 'api_key',
      }),
    ).toBe(300_000);
    expect(value(text, 'tollgate_holds_voided_total', { reason: 'upstream_error' })).toBe(1);
    expect(
      value(text, 'tollgate_hold_refusals_total', { reason: 'insufficient_credit', scope: 'none' }),
    ).toBe(1);
    expect(value(text, 'tollgate_holds_pending')).toBe(0);
    expect(value(text, 'tollgate_holds_oldest_pending_seconds')).toBe(0);
    expect(value(text, 'tollgate_calls_in_flight')).toBe(0);
    // One group commit's duration: SQLite only (docs/operator.md); PostgreSQL's are the operations' below.
    if (t.gw.state.kind === 'sqlite') {
      expect(value(text, 'tollgate_ledger_commit_duration_seconds_count')).toBeGreaterThan(0);
    } else expect(value(text, 'tollgate_ledger_commit_duration_seconds_count')).toBe(0);
    expect(value(text, 'tollgate_ledger_operation_duration_seconds_count', { op: 'capture' })).toBe(4);
  });

  it('[ops:upstream-metrics] counts vendor calls and the model router tokens and cost per tier', () => {
    expect(value(text, 'tollgate_upstream_calls_total', { vendor: 'rentcast', outcome: 'ok' })).toBe(1);
    expect(value(text, 'tollgate_upstream_duration_seconds_count', { vendor: 'rentcast' })).toBe(1);
    expect(
      value(text, 'tollgate_upstream_calls_total', { vendor: 'llm', outcome: 'ok' }),
    ).toBeGreaterThanOrEqual(1);
    expect(
      value(text, 'tollgate_llm_tokens_total', { tier: 'platform/cheap', kind: 'prompt' }),
    ).toBeGreaterThan(0);
    expect(
      value(text, 'tollgate_llm_tokens_total', { tier: 'platform/cheap', kind: 'completion' }),
    ).toBeGreaterThan(0);
    expect(value(text, 'tollgate_llm_cost_micros_total', { tier: 'platform/cheap' })).toBeGreaterThan(0);
    expect(text).toMatch(/^process_cpu_seconds_total /m);
  });

  it('[ops:metrics-no-secrets] never carries an account id, a key, a transaction id or a caller string', () => {
    expect(secrets.length).toBe(5);
    for (const s of [...secrets, 'secret-target', 'hiddenservice', RENTCAST_KEY, openrouter.apiKey, TOKEN]) {
      expect(text, s).not.toContain(s);
    }
    // Every label value of every tollgate series is from a closed set: action ids, doors, methods, codes…
    const labelValues = [...text.matchAll(/^tollgate_\w+\{([^}]*)\}/gm)].flatMap((m) =>
      [...(m[1] as string).matchAll(/(\w+)="([^"]*)"/g)].map((x) => `${x[1]}=${x[2]}`),
    );
    expect(labelValues.length).toBeGreaterThan(0);
    for (const lv of labelValues) expect(lv).toMatch(/^\w+=[\w./+-]+$/);
    expect(labelValues.filter((lv) => /^(account|key|account_id|key_id|principal|txn)=/.test(lv))).toEqual(
      [],
    );
  });
});
