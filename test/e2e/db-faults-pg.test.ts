import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeOpenRouter, llmEnv, startFakeOpenRouter, TEST_MODELS } from '../fakes/openrouter.js';
import { runCli, type ServeProcess, serveCli } from '../helpers/cli.js';
import { type Cluster, startCluster } from '../helpers/pg-cluster.js';
import { freePort } from '../helpers/ports.js';
import { html, startSite, type TestSite } from '../helpers/site.js';

// Issue 21's acceptance test on PostgreSQL: two replicas under paid load while their database is restarted
// (`pg_ctl restart -m fast`) and then killed with SIGKILL (postmaster and backends) and started again 3 s later,
// on a cluster of the test's own. Whatever happens: no 500, every transaction id a caller was given is in the
// ledger as it was told, no hold is left pending 10 s after the database is back, and the account lost exactly
// the sum of the charges its callers were told of.

let cluster: Cluster;
let site: TestSite;
let llm: FakeOpenRouter;
let work: string;
let a: ServeProcess;
let b: ServeProcess;
let sql: pg.Pool;
let env: NodeJS.ProcessEnv;
const agent = new Agent({ connections: 64 });

interface Answer {
  status: number;
  txn?: string;
  cents?: number;
  code?: string;
  retryAfter?: string;
}

async function post(base: string, path: string, body: unknown, key: string): Promise<Answer> {
  const res = await request(`${base}${path}`, {
    method: 'POST',
    dispatcher: agent,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify(body),
  });
  const parsed = (await res.body.json().catch(() => ({}))) as {
    transaction_id?: string;
    charged_cents?: number;
    error?: { code?: string };
  };
  return {
    status: res.statusCode,
    txn: parsed.transaction_id,
    cents: parsed.charged_cents,
    code: parsed.error?.code,
    retryAfter: res.headers['retry-after'] as string | undefined,
  };
}

beforeAll(async () => {
  // synchronous_commit stays the server's default: the ledger itself chooses what to flush (holds are not).
  cluster = await startCluster();
  sql = new pg.Pool({ connectionString: cluster.url, max: 2 });
  sql.on('error', () => {});
  llm = await startFakeOpenRouter(TEST_MODELS);
  site = await startSite({
    '/page': (_req, res) => void res.writeHead(200, { 'content-type': 'text/html' }).end(html('<p>hi</p>')),
  });
  work = mkdtempSync(join(tmpdir(), 'tollgate-faults-'));
  env = {
    ...llmEnv(llm),
    TOLLGATE_DATABASE_URL: cluster.url,
    TOLLGATE_DATABASE_POOL: '10',
    TOLLGATE_REPLICA_LEASE_SECONDS: '5',
    TOLLGATE_SWEEP_INTERVAL_SECONDS: '1',
    TOLLGATE_FETCH_ALLOW: '127.0.0.1',
    TOLLGATE_RATE_LIMIT_PER_SECOND: '0',
    TOLLGATE_DATA_DIR: join(work, 'data'),
    // Warnings and errors on stdout: the test reads them (no crash; the outage said once a replica).
    TOLLGATE_LOG_LEVEL: 'warn',
  };
  const [pa, pb] = [await freePort(), await freePort()];
  [a, b] = await Promise.all([
    serveCli({ cwd: work, env: { ...env, TOLLGATE_PORT: String(pa) }, args: ['--workers', '1'] }),
    serveCli({ cwd: work, env: { ...env, TOLLGATE_PORT: String(pb) }, args: ['--workers', '1'] }),
  ]);
}, 120_000);

afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  await agent.close();
  await sql?.end();
  await Promise.all([site?.close(), llm?.close()]);
  await cluster?.destroy();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('[db:unavailable-503] [db:holds-resolved] [db:ids-vouched] PostgreSQL restarted and killed under load', () => {
  it('no 500, every given id in the ledger as told, no hold left, the balance down by what callers were told', async () => {
    const made = runCli(['accounts', 'create', '--credit-usd', '1000', '--json'], { cwd: work, env });
    expect(made.code, made.stderr).toBe(0);
    const acct = JSON.parse(made.stdout.trim().split('\n').at(-1) as string) as {
      account_id: string;
      api_key: string;
    };
    const before = Number(
      (await sql.query('SELECT balance_micros FROM accounts WHERE id = $1', [acct.account_id])).rows[0]
        .balance_micros,
    );

    const answers: Answer[] = [];
    let stop = false;
    const bases = [a.started.url, b.started.url];
    const worker = async (i: number) => {
      for (let n = 0; !stop; n++) {
        const base = bases[(i + n) % 2] as string;
        answers.push(
          await post(
            base,
            '/api/run/scraperC/scrape',
            { url: `${site.url}/page`, browser: false },
            acct.api_key,
          ),
        );
      }
    };
    const load = Array.from({ length: 16 }, (_, i) => worker(i));
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

    await sleep(1_500);
    await cluster.restartFast();
    await sleep(1_500);
    cluster.kill9();
    await sleep(1_000);
    // While it is down, the other doors refuse cleanly too (the model router; an unknown key's look-up).
    const chat = await request(`${a.started.url}/api/llm/v1/chat/completions`, {
      method: 'POST',
      dispatcher: agent,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${acct.api_key}` },
      body: JSON.stringify({ model: 'platform/cheap', messages: [{ role: 'user', content: 'hi' }] }),
    });
    await chat.body.text();
    const stranger = await post(
      b.started.url,
      '/api/run/scraperC/scrape',
      { url: `${site.url}/page` },
      `tg_sk_${'Z'.repeat(43)}`,
    );
    await sleep(2_000);
    await cluster.start();
    await sleep(3_000);
    stop = true;
    await Promise.all(load);

    expect(chat.statusCode).toBe(503);
    expect(chat.headers['retry-after']).toBeDefined();
    expect(stranger).toMatchObject({ status: 503, code: 'database_unavailable' });

    const byStatus = new Map<number, number>();
    for (const x of answers) byStatus.set(x.status, (byStatus.get(x.status) ?? 0) + 1);
    expect(byStatus.get(500) ?? 0, JSON.stringify([...byStatus])).toBe(0);
    // Every refusal is a retryable 503 that asks to retry later.
    for (const x of answers.filter((y) => y.status !== 200)) {
      expect(x.status, JSON.stringify(x)).toBe(503);
      expect(x.retryAfter, JSON.stringify(x)).toBeDefined();
    }
    // Calls went through before, between and after the faults.
    expect(byStatus.get(200) ?? 0).toBeGreaterThan(50);
    expect(byStatus.get(503) ?? 0).toBeGreaterThan(0);

    // Within 10 s of the database's return, no hold is pending (each replica resolved its own).
    await expect
      .poll(async () => Number((await sql.query('SELECT count(*) AS n FROM pending_holds')).rows[0].n), {
        timeout: 10_000,
        interval: 250,
      })
      .toBe(0);

    // Every transaction id a caller was given is in the ledger, charged what the caller was told.
    const given = answers.filter((x) => x.status === 200 && x.txn !== undefined);
    const rows = await sql.query<{ id: string; status: string; charged_micros: string }>(
      'SELECT id, status, charged_micros FROM calls WHERE id = ANY($1)',
      [given.map((x) => x.txn)],
    );
    const recorded = new Map(rows.rows.map((r) => [r.id, r]));
    for (const x of given) {
      const r = recorded.get(x.txn as string);
      expect(r, `${x.txn} is not in the ledger`).toBeDefined();
      expect(r?.status).toBe('succeeded');
      expect(Number(r?.charged_micros)).toBe((x.cents ?? 0) * 10_000);
    }
    // And the account lost exactly what its callers were told they were charged.
    const told = answers.reduce((s, x) => s + (x.status === 200 ? (x.cents ?? 0) : 0), 0);
    const after = Number(
      (await sql.query('SELECT balance_micros FROM accounts WHERE id = $1', [acct.account_id])).rows[0]
        .balance_micros,
    );
    expect(before - after).toBe(told * 10_000);

    // Both replicas lived through it (no crash, no restart of their worker), and each said the outage once per
    // outage rather than once per round of its background work.
    for (const r of [a, b]) {
      const logs = r.stdout.map((l) => (l.startsWith('{') ? (JSON.parse(l) as { msg?: string }) : {}));
      expect(r.proc.exitCode, r.stdout.slice(-20).join('\n')).toBeNull();
      expect(logs.filter((l) => /worker .*exit|replacing/i.test(l.msg ?? ''))).toEqual([]);
      const said = logs.filter((l) => /not answering/.test(l.msg ?? '')).length;
      expect(said).toBeGreaterThanOrEqual(1);
      expect(said).toBeLessThanOrEqual(3); // the restart, the kill (and, under load, a flap between them)
      expect(logs.filter((l) => /sweep failed/.test(l.msg ?? ''))).toEqual([]);
      expect(logs.filter((l) => /lease renewal failed/.test(l.msg ?? '')).length).toBeLessThanOrEqual(3);
    }
  }, 120_000);
});
