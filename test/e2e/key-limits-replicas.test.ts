import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type pg from 'pg';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeOpenRouter, llmEnv, startFakeOpenRouter, TEST_MODELS } from '../fakes/openrouter.js';
import { runCli, type ServeProcess, serveCli } from '../helpers/cli.js';
import type { Reply } from '../helpers/gateway.js';
import { createTestDatabase, type TestDatabase, testPool } from '../helpers/pg.js';
import { freePort } from '../helpers/ports.js';
import { html, startSite, type TestSite } from '../helpers/site.js';

// [keys:race] Limits per API key across two `tollgate serve` replicas sharing one PostgreSQL database: 1,000
// parallel calls split across both, against a key's daily limit, its monthly limit, and its maximum per call
// (metered calls of the model router), never pass it by a cent; a limit changed with the CLI applies on both
// within TOLLGATE_KEY_CACHE_SECONDS.

let db: TestDatabase;
let site: TestSite;
let llm: FakeOpenRouter;
let work: string;
let a: ServeProcess;
let b: ServeProcess;
let urlA: string;
let urlB: string;
let env: NodeJS.ProcessEnv;
let sql: pg.Pool;
const agent = new Agent({ connections: 600, pipelining: 0 });

async function post(base: string, path: string, body: unknown, key: string): Promise<Reply> {
  const res = await request(`${base}${path}`, {
    method: 'POST',
    dispatcher: agent,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify(body),
  });
  const text = await res.body.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {}
  return { status: res.statusCode, body: parsed, headers: res.headers, text };
}

function cli(args: string[]) {
  const r = runCli([...args, '--json'], { cwd: work, env });
  if (r.code !== 0) throw new Error(`tollgate ${args.join(' ')}: ${r.stdout}${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').at(-1) as string);
}

/** An account with `usd` and a key with these limits (`keys create` flags), made with the CLI. */
function limitedKey(usd: string, flags: string[]): { id: string; key: string; keyId: string } {
  const acct = cli(['accounts', 'create', '--credit-usd', usd]);
  const made = cli(['keys', 'create', acct.account_id, '--name', 'agent', ...flags]);
  return { id: acct.account_id, key: made.api_key, keyId: made.key_id };
}

const scrape = (base: string, key: string) =>
  post(base, '/api/run/scraperC/scrape', { url: `${site.url}/page`, browser: false }, key);

async function charged(accountId: string): Promise<{ n: number; sum: number; maxHold: number }> {
  const r = await sql.query(
    `SELECT count(*)::int AS n, coalesce(sum(charged_micros), 0)::bigint AS sum, coalesce(max(hold_micros), 0)::bigint AS max_hold
       FROM calls WHERE account_id = $1 AND status = 'succeeded'`,
    [accountId],
  );
  return { n: r.rows[0].n, sum: Number(r.rows[0].sum), maxHold: Number(r.rows[0].max_hold) };
}

/** Both replicas did part of the work. */
function bothServed(replies: Reply[], status: number) {
  expect(replies.filter((r, i) => i % 2 === 0 && r.status === status).length).toBeGreaterThan(0);
  expect(replies.filter((r, i) => i % 2 === 1 && r.status === status).length).toBeGreaterThan(0);
}

beforeAll(async () => {
  db = await createTestDatabase('tg_key_limits');
  sql = testPool(db.url);
  llm = await startFakeOpenRouter(TEST_MODELS);
  site = await startSite({
    '/page': (_req, res) =>
      void res.writeHead(200, { 'content-type': 'text/html' }).end(html('<p>hello</p>')),
  });
  work = mkdtempSync(join(tmpdir(), 'tollgate-key-limits-'));
  const [portA, portB] = [await freePort(), await freePort()];
  urlA = `http://127.0.0.1:${portA}`;
  urlB = `http://127.0.0.1:${portB}`;
  env = {
    ...llmEnv(llm),
    TOLLGATE_DATABASE_URL: db.url,
    TOLLGATE_DATABASE_POOL: '20',
    TOLLGATE_FETCH_ALLOW: '127.0.0.1',
    TOLLGATE_RATE_LIMIT_PER_SECOND: '0',
    TOLLGATE_KEY_CACHE_SECONDS: '1',
    TOLLGATE_PUBLIC_URL: urlA,
    TOLLGATE_ALLOWED_HOSTS: `127.0.0.1:${portA},127.0.0.1:${portB}`,
    TOLLGATE_DATA_DIR: join(work, 'data'),
  };
  [a, b] = await Promise.all([
    serveCli({
      cwd: work,
      env: { ...env, TOLLGATE_PORT: String(portA), TOLLGATE_DATA_DIR: join(work, 'data-a') },
      args: ['--workers', '1'],
    }),
    serveCli({
      cwd: work,
      env: { ...env, TOLLGATE_PORT: String(portB), TOLLGATE_DATA_DIR: join(work, 'data-b') },
      args: ['--workers', '1'],
    }),
  ]);
}, 120_000);

afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  await agent.close();
  await sql?.end();
  await Promise.all([llm?.close(), site?.close()]);
  await db?.drop();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('[keys:race] limits per API key across two replicas on PostgreSQL', () => {
  it('1,000 parallel calls against a daily limit of $5.00: exactly 500 charged, $5.00, on both replicas', async () => {
    const { id, key } = limitedKey('50', ['--daily-limit-usd', '5']);
    const replies = await Promise.all(
      Array.from({ length: 1_000 }, (_, i) => scrape(i % 2 === 0 ? urlA : urlB, key)),
    );
    expect(replies.filter((r) => r.status === 200)).toHaveLength(500);
    const refused = replies.filter((r) => r.status === 429);
    expect(refused).toHaveLength(500);
    expect(refused[0]?.body.error).toMatchObject({ code: 'daily_cap_exceeded', details: { scope: 'key' } });
    bothServed(replies, 200);
    expect(await charged(id)).toMatchObject({ n: 500, sum: 5_000_000 });
    const held = await sql.query('SELECT held_micros FROM accounts WHERE id = $1', [id]);
    expect(Number(held.rows[0].held_micros)).toBe(0);
  }, 180_000);

  it('1,000 parallel calls against a monthly limit of $3.00: exactly 300 charged', async () => {
    const { id, key, keyId } = limitedKey('50', ['--monthly-limit-usd', '3']);
    const replies = await Promise.all(
      Array.from({ length: 1_000 }, (_, i) => scrape(i % 2 === 0 ? urlA : urlB, key)),
    );
    expect(replies.filter((r) => r.status === 200)).toHaveLength(300);
    const refused = replies.filter((r) => r.status === 429);
    expect(refused).toHaveLength(700);
    expect(refused[0]?.body.error.code).toBe('monthly_cap_exceeded');
    bothServed(replies, 200);
    expect(await charged(id)).toMatchObject({ n: 300, sum: 3_000_000 });
    const listed = cli(['keys', 'list', id]);
    expect(listed.keys.find((k: { key_id: string }) => k.key_id === keyId).spent).toMatchObject({
      month_micros: 3_000_000,
      today_micros: 3_000_000,
    });
  }, 180_000);

  it('1,000 parallel metered calls against a maximum per call of $0.002: none above it runs, every one below does', async () => {
    const { id, key } = limitedKey('50', ['--max-call-usd', '0.002']);
    llm.scenario('test/flat', { cost: 0.000001 });
    // test/flat: 1 micro-USD per completion token, so a call's worst case is its max_tokens: 1,500 … 2,499.
    const replies = await Promise.all(
      Array.from({ length: 1_000 }, (_, i) =>
        post(
          i % 2 === 0 ? urlA : urlB,
          '/api/llm/v1/chat/completions',
          { model: 'test/flat', messages: [{ role: 'user', content: 'hi' }], max_tokens: 1_500 + i },
          key,
        ),
      ),
    );
    expect(replies.filter((r) => r.status === 200)).toHaveLength(501);
    const refused = replies.filter((r) => r.status === 403);
    expect(refused).toHaveLength(499);
    expect(refused[0]?.body.error).toMatchObject({ code: 'call_limit_exceeded', type: 'permission_error' });
    bothServed(replies, 200);
    const c = await charged(id);
    expect(c.n).toBe(501);
    expect(c.maxHold).toBe(2_000);
  }, 180_000);

  it('[keys:limit-change-cache] a limit set with the CLI applies on both replicas within TOLLGATE_KEY_CACHE_SECONDS', async () => {
    const { key, keyId } = limitedKey('1', ['--max-call-usd', '1']);
    expect((await scrape(urlA, key)).status).toBe(200);
    expect((await scrape(urlB, key)).status).toBe(200);
    cli(['keys', 'limit', keyId, '--daily-limit-usd', '0.02']);
    await new Promise((r) => setTimeout(r, 1_100));
    // The two calls of today count: the limit is reached on both.
    expect((await scrape(urlA, key)).status).toBe(429);
    expect((await scrape(urlB, key)).status).toBe(429);
    cli(['keys', 'limit', keyId, '--daily-limit-usd', 'none']);
    await new Promise((r) => setTimeout(r, 1_100));
    expect((await scrape(urlB, key)).status).toBe(200);
  }, 60_000);
});
