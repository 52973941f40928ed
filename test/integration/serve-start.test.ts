import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { checkBind } from '../../src/cli/start-checks.js';
import { createLogger } from '../../src/log.js';
import { createGateway } from '../../src/main.js';
import { ownStderr, readKeyFile, runCli, serveCli } from '../helpers/cli.js';
import { startGateway, testConfig } from '../helpers/gateway.js';
import { createTestDatabase, type TestDatabase } from '../helpers/pg.js';
import { freePort } from '../helpers/ports.js';
import { startS3Server } from '../helpers/s3.js';

// Safe defaults at start (docs/decisions.md "The first start's operator key", "Warnings at start", "Readiness",
// "Which database the CLI uses"): the operator key never enters the log stream, the log is JSON lines only, a
// bind beyond loopback without a public URL is warned about (and /mcp answers there), /readyz follows the
// database and draining, a database that is down is one line, and the CLI says which database it used.

const work = mkdtempSync(join(tmpdir(), 'tollgate-start-'));
let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase('tg_start');
});
afterAll(async () => {
  await db?.drop();
  rmSync(work, { recursive: true, force: true });
});

function logLines(stdout: string): Array<Record<string, unknown>> {
  return stdout
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('serve at start', () => {
  it('[ops:key-not-logged] [ops:json-logs] without a terminal the first key goes to a 0600 file the log names; stdout is JSON lines only', async () => {
    const dataDir = join(work, 'first');
    const gw = await serveCli({ cwd: work, env: { TOLLGATE_DATA_DIR: dataDir, TOLLGATE_LOG_LEVEL: 'info' } });
    const keyFile = join(dataDir, 'operator-key.txt');
    expect(gw.started.operator).toMatchObject({ account_id: 'acct_operator', api_key_file: keyFile });
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    const key = readKeyFile(keyFile);
    expect(key).toMatch(/^tg_sk_/);
    const res = await request(`${gw.started.url}/api/run/platform/balance`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(res.statusCode).toBe(200);
    await res.body.dump();
    await gw.stop();
    const stdout = gw.stdout.join('\n');
    expect(stdout).not.toContain(key);
    // Every line JSON (the result object of --json included), each log line with its process id.
    const logs = logLines(stdout).filter((l) => l.level !== undefined);
    expect(logs.length).toBeGreaterThan(2);
    for (const l of logs) expect(l).toMatchObject({ svc: 'tollgate', pid: gw.proc.pid });
    expect(logs.find((l) => l.operator_key_file === keyFile)?.msg).toContain(keyFile);
    expect(logs.some((l) => String(l.msg).startsWith('tollgate listening on'))).toBe(true);
    expect(logs.some((l) => String(l.msg).startsWith('shutting down'))).toBe(true);
  }, 90_000);

  it('[ops:bind-warning] every address without TOLLGATE_PUBLIC_URL: a warning, and /mcp takes the machine’s own address as Host', async () => {
    const lines: string[] = [];
    const log = createLogger('warn', { write: (l: string) => void lines.push(l) });
    const config = checkBind(testConfig({ TOLLGATE_HOST: '0.0.0.0' }), log, () => ['192.0.2.77']);
    const warning = JSON.parse(lines[0] as string);
    expect(warning).toMatchObject({ level: 40, host: '0.0.0.0', accepted_hosts: ['192.0.2.77'] });
    expect(warning.msg).toContain('without TOLLGATE_PUBLIC_URL');
    expect(warning.msg).toContain('Set TOLLGATE_PUBLIC_URL');

    const gw = await createGateway(config, { log: createLogger('silent') });
    const url = await gw.listen();
    const port = new URL(url).port;
    try {
      // Only loopback is connected to; the Host header is what a client on the LAN sends.
      const probe = async (host: string) => {
        const r = await request(`http://127.0.0.1:${port}/mcp`, {
          method: 'POST',
          headers: {
            host,
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
          },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
        });
        await r.body.dump();
        return r.statusCode;
      };
      expect(await probe(`192.0.2.77:${port}`)).toBe(401);
      expect(await probe(`evil.example:${port}`)).toBe(403);
    } finally {
      await gw.close();
    }
    // A loopback bind, or a public URL, says nothing.
    const quiet: string[] = [];
    const q = createLogger('warn', { write: (l: string) => void quiet.push(l) });
    checkBind(testConfig({}), q);
    checkBind(testConfig({ TOLLGATE_HOST: '0.0.0.0', TOLLGATE_PUBLIC_URL: 'https://gw.example.com' }), q);
    expect(quiet).toEqual([]);
  });

  it('[ops:database-down] a PostgreSQL that does not answer at start is one line naming TOLLGATE_DATABASE_URL', async () => {
    const port = await freePort();
    const url = `postgres://tollgate:s3cret@127.0.0.1:${port}/tollgate`;
    const r = runCli(['serve'], {
      cwd: work,
      env: { TOLLGATE_DATABASE_URL: url, TOLLGATE_DATA_DIR: join(work, 'down') },
    });
    expect(r.code).toBe(1);
    expect(ownStderr(r.stderr)).toBe(
      `tollgate: cannot use the PostgreSQL database of TOLLGATE_DATABASE_URL (postgres://tollgate:***@127.0.0.1:${port}/tollgate): the connection was refused (is PostgreSQL running there?)\n`,
    );
    const cli = runCli(['balance', 'x', '--json'], { cwd: work, env: { TOLLGATE_DATABASE_URL: url } });
    expect(JSON.parse(cli.stdout)).toMatchObject({ ok: false, error: { code: 'database_unavailable' } });
  }, 60_000);
});

describe('/readyz', () => {
  it('[ops:readyz] 200 while the database answers, 503 when it stops answering and while draining; /healthz stays 200', async () => {
    const t = await startGateway({ env: { TOLLGATE_DATABASE_URL: db.url } });
    const admin = new pg.Client({ connectionString: new URL('/postgres', db.url).toString() });
    await admin.connect();
    const name = new URL(db.url).pathname.slice(1);
    try {
      expect((await t.get('/readyz')).body).toEqual({
        ok: true,
        database: 'ok',
        storage: 'ok',
        draining: false,
      });
      // The database goes away: no new connection, the open ones cut.
      await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`);
      await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [name]);
      const down = await t.get('/readyz');
      expect(down.status).toBe(503);
      expect(down.body).toMatchObject({ ok: false, database: 'unavailable', draining: false });
      expect((await t.get('/healthz')).status).toBe(200);
      await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`);
      // Ready again once the outage's probe (every 500 ms) sees it answer: calls are admitted from then on too.
      await vi.waitFor(async () => expect((await t.get('/readyz')).status).toBe(200), {
        timeout: 10_000,
        interval: 100,
      });
    } finally {
      await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`).catch(() => {});
      await admin.end();
    }
    // Draining (shutdown began: calls are refused while in-flight ones finish): not ready. Here the drain is
    // started without closing the listener, as a load balancer sees it on a connection still open.
    await t.gw.run.inflight.drain(1000);
    const draining = await t.get('/readyz');
    expect(draining.status).toBe(503);
    expect(draining.body).toMatchObject({ ok: false, database: 'ok', draining: true });
    await t.close();
  }, 60_000);
});

describe('/readyz with S3 storage', () => {
  it('[ops:readyz] storage is ready while the bucket answers, unavailable when it does not exist', async () => {
    const s3 = await startS3Server();
    const ok = await startGateway({ env: s3.env('ready/') });
    const env = s3.env('ready/');
    const missing = await startGateway({
      env: {
        ...env,
        TOLLGATE_STORAGE_URL: String(env.TOLLGATE_STORAGE_URL).replace(s3.bucket, 'no-such-bucket'),
      },
    });
    try {
      expect((await ok.get('/readyz')).body).toMatchObject({ ok: true, storage: 'ok' });
      // The probe object was written on the first check; the next only looks at it.
      expect((await ok.get('/readyz')).body).toMatchObject({ ok: true, storage: 'ok' });
      expect(await s3.objectSize('ready/files/.readyz')).toBe(6);
      const r = await missing.get('/readyz');
      expect(r.status).toBe(503);
      expect(r.body).toMatchObject({ ok: false, database: 'ok', storage: 'unavailable' });
    } finally {
      await ok.close();
      await missing.close();
      await s3.close();
    }
  }, 60_000);
});

describe('which database the CLI uses', () => {
  it('[cli:which-database] it says which one, and refuses to guess when the data dir and TOLLGATE_DATABASE_URL disagree', () => {
    const dir = join(work, 'cli');
    mkdirSync(dir, { recursive: true });
    const env = { TOLLGATE_DATA_DIR: join(dir, 'data') };
    expect(runCli(['accounts', 'create', '--name', 'alice'], { cwd: dir, env }).code).toBe(0);
    const said = runCli(['balance', 'alice'], { cwd: dir, env });
    expect(said.code, said.stderr).toBe(0);
    expect(said.stderr).toBe(`tollgate: database: SQLite ${join(dir, 'data', 'tollgate.db')}\n`);

    // A SQLite file here, and PostgreSQL named: which one?
    const both = runCli(['balance', 'alice'], { cwd: dir, env: { ...env, TOLLGATE_DATABASE_URL: db.url } });
    expect(both.code).toBe(1);
    expect(both.stderr).toMatch(
      /^tollgate: TOLLGATE_DATABASE_URL names PostgreSQL \(postgres:\/\/.*\), but .* holds a SQLite database \(tollgate\.db\) too: add --database postgres or --database sqlite/,
    );
    const chosen = runCli(['balance', 'alice', '--database', 'sqlite'], {
      cwd: dir,
      env: { ...env, TOLLGATE_DATABASE_URL: db.url },
    });
    expect(chosen.code, chosen.stderr).toBe(0);

    // A data dir a gateway on PostgreSQL serves from, and no TOLLGATE_DATABASE_URL in this shell.
    const served = join(work, 'served');
    mkdirSync(served, { recursive: true });
    writeFileSync(
      join(served, 'database.json'),
      JSON.stringify({ backend: 'postgres', url: 'postgres://tollgate:***@db/tollgate' }),
    );
    const unset = runCli(['keys', 'list', '--json'], { cwd: work, env: { TOLLGATE_DATA_DIR: served } });
    expect(unset.code).toBe(1);
    expect(JSON.parse(unset.stdout).error).toMatchObject({ code: 'database_ambiguous' });
    expect(JSON.parse(unset.stdout).error.message).toContain('TOLLGATE_DATABASE_URL is not set here');
    expect(existsSync(join(served, 'tollgate.db')), 'no SQLite database made').toBe(false);
  }, 120_000);
});
