import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type pg from 'pg';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeOpenRouter, llmEnv, startFakeOpenRouter, TEST_MODELS } from '../fakes/openrouter.js';
import { startChain, type TestChain } from '../helpers/anvil.js';
import { runCli, type ServeProcess, serveCli } from '../helpers/cli.js';
import type { Reply } from '../helpers/gateway.js';
import { mcp2025Headers } from '../helpers/mcp-raw.js';
import { createTestDatabase, type TestDatabase, testPool } from '../helpers/pg.js';
import { freePort } from '../helpers/ports.js';
import { type S3Server, startS3Server } from '../helpers/s3.js';
import { html, startSite, type TestSite } from '../helpers/site.js';
import { challengeOf, encodePayment, newPayer, signPayment, x402Env } from '../helpers/x402.js';
import { CookieJar, nativeClient, pkce, register, signInAndConsent, tokenRequest } from './oauth-helpers.js';

// [scale:two-replicas] Issue 11's acceptance test, end to end: two `tollgate serve` processes on different
// ports, one PostgreSQL database, one S3 bucket, one chain. They must behave as one gateway: k of N parallel
// calls across both, one charge per idempotency key, one settlement per x402 payment, a file uploaded through
// one and downloaded through the other, the OAuth daily limit and the model router's daily cap across both,
// and a replica killed with SIGKILL mid-call whose holds the survivor voids once its lease expires.

const LEASE_S = 5;
let db: TestDatabase;
let s3: S3Server;
let chain: TestChain;
let site: TestSite;
let llm: FakeOpenRouter;
let work: string;
let a: ServeProcess;
let b: ServeProcess;
let urlA: string;
let urlB: string;
let env: NodeJS.ProcessEnv;
let sql: pg.Pool;
const merchant = newPayer().address;
// Many connections at once: the 1,000 parallel calls go out together.
const agent = new Agent({ connections: 600, pipelining: 0 });
let releaseSlow: () => void = () => {};
let slowStarted = 0;

async function post(
  base: string,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Reply> {
  const res = await request(`${base}${path}`, {
    method: 'POST',
    dispatcher: agent,
    headers: { 'content-type': 'application/json', ...headers },
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

/** An account with `usd` of credit and its key, made with the CLI on the PostgreSQL state. */
function account(usd: string): { id: string; key: string } {
  const r = cli(['accounts', 'create', '--credit-usd', usd]);
  return { id: r.account_id, key: r.api_key };
}

async function balanceOf(id: string): Promise<{ balance: number; held: number }> {
  const r = await sql.query('SELECT balance_micros, held_micros FROM accounts WHERE id = $1', [id]);
  return { balance: Number(r.rows[0].balance_micros), held: Number(r.rows[0].held_micros) };
}

const scrape = (base: string, key: string, path = '/page', headers: Record<string, string> = {}) =>
  post(
    base,
    '/api/run/scraperC/scrape',
    { url: `${site.url}${path}`, browser: false },
    {
      authorization: `Bearer ${key}`,
      ...headers,
    },
  );

beforeAll(async () => {
  db = await createTestDatabase('tg_replicas');
  sql = testPool(db.url);
  s3 = await startS3Server();
  chain = await startChain();
  llm = await startFakeOpenRouter(TEST_MODELS);
  site = await startSite({
    '/page': (_req, res) =>
      void res.writeHead(200, { 'content-type': 'text/html' }).end(html('<p>hello</p>')),
    '/slow': (_req, res) => {
      slowStarted++;
      const done = () => {
        if (!res.headersSent && !res.destroyed) {
          res.writeHead(200, { 'content-type': 'text/html' }).end(html('<p>late</p>'));
        }
      };
      const prev = releaseSlow;
      releaseSlow = () => {
        prev();
        done();
      };
    },
  });
  work = mkdtempSync(join(tmpdir(), 'tollgate-replicas-'));
  const [portA, portB] = [await freePort(), await freePort()];
  urlA = `http://127.0.0.1:${portA}`;
  urlB = `http://127.0.0.1:${portB}`;
  env = {
    ...llmEnv(llm, { TOLLGATE_LLM_DAILY_CAP_USD: '0.01' }),
    ...x402Env(chain, merchant),
    ...s3.env('replicas'),
    TOLLGATE_DATABASE_URL: db.url,
    TOLLGATE_DATABASE_POOL: '20',
    TOLLGATE_REPLICA_LEASE_SECONDS: String(LEASE_S),
    TOLLGATE_SWEEP_INTERVAL_SECONDS: '1',
    TOLLGATE_FETCH_ALLOW: '127.0.0.1',
    TOLLGATE_RATE_LIMIT_PER_SECOND: '0',
    // Both answer as one gateway would behind a load balancer: one public URL (A's), both hosts allowed.
    TOLLGATE_PUBLIC_URL: urlA,
    TOLLGATE_ALLOWED_HOSTS: `127.0.0.1:${portA},127.0.0.1:${portB}`,
    TOLLGATE_OAUTH_SIGNIN_ATTEMPTS_PER_MINUTE: '1000',
    TOLLGATE_DATA_DIR: join(work, 'data'),
  };
  // Started together: both run the migrations; the advisory lock lets exactly one apply them.
  [a, b] = await Promise.all([
    serveCli({ cwd: work, env: { ...env, TOLLGATE_PORT: String(portA) }, args: ['--workers', '1'] }),
    serveCli({ cwd: work, env: { ...env, TOLLGATE_PORT: String(portB) }, args: ['--workers', '1'] }),
  ]);
}, 120_000);

afterAll(async () => {
  releaseSlow();
  await Promise.all([a?.stop(), b?.stop()]);
  await agent.close();
  await sql?.end();
  await Promise.all([s3?.close(), chain?.close(), llm?.close(), site?.close()]);
  await db?.drop();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('[scale:two-replicas] two replicas, one PostgreSQL, one bucket', () => {
  it('the first start created one operator account, whichever replica got there first', async () => {
    const operators = [a.started.operator, b.started.operator].filter(Boolean);
    expect(operators).toHaveLength(1);
    const r = await sql.query("SELECT count(*)::int AS n FROM accounts WHERE kind = 'customer'");
    expect(r.rows[0].n).toBe(1);
  });

  it('1,000 parallel paid calls split across both, against a balance covering 300: exactly 300 charged', async () => {
    const { id, key } = account('3');
    const replies = await Promise.all(
      Array.from({ length: 1000 }, (_, i) => scrape(i % 2 === 0 ? urlA : urlB, key)),
    );
    const ok = replies.filter((r) => r.status === 200);
    const refused = replies.filter((r) => r.status === 402);
    expect(ok).toHaveLength(300);
    expect(refused).toHaveLength(700);
    // Both replicas did part of the work.
    expect(replies.filter((r, i) => i % 2 === 0 && r.status === 200).length).toBeGreaterThan(0);
    expect(replies.filter((r, i) => i % 2 === 1 && r.status === 200).length).toBeGreaterThan(0);
    expect(await balanceOf(id)).toEqual({ balance: 0, held: 0 });
    const calls = await sql.query(
      "SELECT count(*)::int AS n, coalesce(sum(charged_micros), 0)::int AS s FROM calls WHERE account_id = $1 AND status = 'succeeded'",
      [id],
    );
    expect(calls.rows[0]).toEqual({ n: 300, s: 3_000_000 });
  });

  it('one Idempotency-Key sent to both at once: one charge', async () => {
    const { id, key } = account('1');
    const headers = { 'idempotency-key': 'same-key-both-replicas' };
    const [ra, rb] = await Promise.all([
      scrape(urlA, key, '/page', headers),
      scrape(urlB, key, '/page', headers),
    ]);
    // One ran; the other was told it is in flight (409) or got the replay of the same result.
    const statuses = [ra.status, rb.status].sort();
    expect(statuses[0]).toBe(200);
    expect([200, 409]).toContain(statuses[1]);
    const again = await scrape(urlB, key, '/page', headers);
    expect(again.status).toBe(200);
    const ids = new Set([ra, rb, again].filter((r) => r.status === 200).map((r) => r.body.transaction_id));
    expect(ids.size).toBe(1);
    expect((await balanceOf(id)).balance).toBe(990_000);
  });

  it('one x402 payment presented to both at once: one settlement', async () => {
    const payer = newPayer();
    await chain.mint(payer.address, 1_000_000n);
    const body = { url: `${site.url}/page`, browser: false };
    const challenge = challengeOf(await post(urlA, '/api/run/scraperC/scrape', body));
    const payment = encodePayment(await signPayment(payer, challenge.accepts[0] as never));
    const before = await chain.balanceOf(merchant);
    const both = await Promise.all(
      [urlA, urlB].map((u) => post(u, '/api/run/scraperC/scrape', body, { 'payment-signature': payment })),
    );
    const ok = both.filter((r) => r.status === 200);
    expect(ok.length).toBeGreaterThanOrEqual(1);
    // The same payment answered twice is the same call (a replay), never a second settlement.
    expect(new Set(ok.map((r) => r.body.transaction_id)).size).toBe(1);
    expect((await chain.balanceOf(merchant)) - before).toBe(10_000n);
  });

  it('a file uploaded through one replica is downloaded through the other', async () => {
    const { key } = account('1');
    const auth = { authorization: `Bearer ${key}` };
    const up = await post(urlA, '/api/run/files/upload', { filename: 'shared.bin', size_bytes: 64 }, auth);
    expect(up.status).toBe(200);
    const data = Buffer.alloc(64, 7);
    const put = await request(up.body.data.put_url, { method: 'PUT', body: data });
    await put.body.dump();
    expect(put.statusCode).toBe(200);
    // Listed through B: the metadata is shared, and B sees the object in the shared bucket.
    const listed = await post(urlB, '/api/run/files/list', { filename: 'shared.bin' }, auth);
    expect(listed.status, JSON.stringify(listed.body)).toBe(200);
    const file = listed.body.data.files[0];
    expect(file).toMatchObject({ file_id: up.body.data.file_id, status: 'stored', size_bytes: 64 });
    const dl = await request(file.get_url);
    expect(Buffer.from(await dl.body.arrayBuffer()).equals(data)).toBe(true);
  });

  it('an OAuth token issued through one replica works on both, and its daily limit holds across both', async () => {
    const { id, key } = account('1');
    const redirect = 'http://127.0.0.1:9/callback';
    const client = (await register(urlA, nativeClient(redirect))).client_id as string;
    const { verifier, challenge } = pkce();
    const authUrl = `${urlA}/oauth/authorize?${new URLSearchParams({
      response_type: 'code',
      client_id: client,
      scope: 'mcp offline_access',
      resource: `${urlA}/mcp`,
      redirect_uri: redirect,
      state: 's',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    })}`;
    // A daily limit of 2 cents for this app.
    const { callback } = await signInAndConsent(authUrl, redirect, {
      apiKey: key,
      dailyLimit: 'custom',
      customUsd: '0.02',
      jar: new CookieJar(),
    });
    // The code is redeemed at the other replica.
    const token = await tokenRequest(urlB, {
      grant_type: 'authorization_code',
      code: callback.searchParams.get('code') as string,
      redirect_uri: redirect,
      client_id: client,
      code_verifier: verifier,
      resource: `${urlA}/mcp`,
    });
    expect(token.status, JSON.stringify(token.body)).toBe(200);
    const call = (base: string) =>
      post(
        base,
        '/mcp',
        {
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'scraperC_scrape', arguments: { url: `${site.url}/page`, browser: false } },
        },
        mcp2025Headers(token.body.access_token),
      );
    // The 2025 era answers one SSE message.
    const message = (r: Reply) => JSON.parse(/^data: (.*)$/m.exec(r.text)?.[1] ?? r.text);
    const first = await call(urlA);
    const second = await call(urlB);
    const third = await call(urlA);
    expect(first.status, first.text).toBe(200);
    expect(message(first).result.isError ?? false).toBe(false);
    expect(message(second).result.isError ?? false).toBe(false);
    const refused = message(third);
    expect(refused.result?.isError ?? refused.error).toBeTruthy();
    expect(JSON.stringify(refused)).toMatch(/daily/i);
    expect((await balanceOf(id)).balance).toBe(980_000);
  });

  it("the model router's daily cap holds across both replicas", async () => {
    const { key } = account('1');
    const hi = [{ role: 'user', content: 'hi' }];
    const ask = (base: string, maxTokens: number) =>
      post(
        base,
        '/api/llm/v1/chat/completions',
        { model: 'test/flat', messages: hi, max_tokens: maxTokens },
        {
          authorization: `Bearer ${key}`,
        },
      );
    llm.scenario('test/flat', { cost: 0.000005 });
    expect((await ask(urlA, 6000)).status).toBe(200);
    // 5 spent on A + a hold of 9996 on B = 10001 > the cap of 10,000.
    const over = await ask(urlB, 9996);
    expect(over.status).toBe(429);
    expect(over.body.error.code).toBe('daily_cap_exceeded');
    expect((await ask(urlB, 9995)).status).toBe(200);
  });

  it('a replica killed mid-call: the survivor voids its holds once its lease expires; nothing charged, nothing stuck', async () => {
    const { id, key } = account('1');
    const pending = Array.from({ length: 5 }, () => scrape(urlA, key, '/slow').catch(() => undefined));
    // The calls are in flight on A when their page is being fetched.
    while (slowStarted < 5) await new Promise((r) => setTimeout(r, 50));
    expect((await balanceOf(id)).held).toBe(50_000);
    const killedAt = Date.now();
    a.proc.kill('SIGKILL');
    await Promise.all(pending);
    // Until the lease runs out the holds stay (A might only be slow); then B's sweeper voids them.
    let state = await balanceOf(id);
    while (state.held > 0 && Date.now() - killedAt < (LEASE_S + 10) * 1000) {
      await new Promise((r) => setTimeout(r, 200));
      state = await balanceOf(id);
    }
    expect(state).toEqual({ balance: 1_000_000, held: 0 });
    expect(Date.now() - killedAt).toBeLessThan((LEASE_S + 10) * 1000);
    const calls = await sql.query('SELECT status, error_code FROM calls WHERE account_id = $1', [id]);
    expect(calls.rows).toHaveLength(5);
    for (const c of calls.rows) expect(c.status).toBe('failed');
    releaseSlow();
    // The survivor still serves.
    expect((await scrape(urlB, key)).status).toBe(200);
  }, 60_000);
});
