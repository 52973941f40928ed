import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { request } from 'undici';
import { createApiKey } from '../../auth/api-keys.js';
import { type Config, loadConfig } from '../../src/config/index.js';
import type { Clock } from '../../src/lib/clock.js';
import { parseUsdToMicros } from '../../src/lib/money.js';
import { createGateway, type Gateway, type GatewayOptions } from '../../src/main.js';
import { createTestDatabase, type TestDatabase } from './pg.js';

// A real gateway on 127.0.0.1:0 with its own temporary data dir. Everything a test talks to is local.

export interface TestGateway {
  gw: Gateway;
  url: string;
  config: Config;
  dataDir: string;
  /** Creates an account with `usd` of credit and returns its API key. */
  account(usd?: string): Promise<{ accountId: string; key: string }>;
  post(
    path: string,
    body: unknown,
    opts?: { key?: string; headers?: Record<string, string> },
  ): Promise<Reply>;
  get(path: string, opts?: { key?: string; headers?: Record<string, string> }): Promise<Reply>;
  /** The environment that points the operator CLI at this gateway's database (its data dir; the PostgreSQL URL). */
  cliEnv(): Record<string, string>;
  close(): Promise<void>;
}

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  // biome-ignore lint/suspicious/noExplicitAny: test convenience for reading JSON bodies
  body: any;
  text: string;
}

export interface StartOptions extends GatewayOptions {
  env?: Record<string, string>;
  dataDir?: string;
  clock?: Clock;
  /** Keep the data dir after close (restart tests). */
  keepData?: boolean;
  /**
   * A test about SQLite itself (its file, its disk, its group commit) runs on SQLite whatever
   * TOLLGATE_TEST_BACKEND says; PostgreSQL's counterpart has a test of its own.
   */
  sqliteOnly?: boolean;
}

export function testConfig(env: Record<string, string> = {}, dataDir?: string): Config {
  return loadConfig({
    TOLLGATE_PORT: '0',
    TOLLGATE_HOST: '127.0.0.1',
    TOLLGATE_DATA_DIR: dataDir ?? mkdtempSync(join(tmpdir(), 'tollgate-test-')),
    TOLLGATE_LOG_LEVEL: process.env.TOLLGATE_TEST_LOG_LEVEL ?? 'silent',
    TOLLGATE_FETCH_ALLOW: '127.0.0.1,localhost',
    TOLLGATE_SHUTDOWN_GRACE_SECONDS: '2',
    // Tests hammer one account on purpose; the rate limit has its own test.
    TOLLGATE_RATE_LIMIT_PER_SECOND: '0',
    ...env,
  });
}

/**
 * Everything the gateway's database holds, as text (to prove a secret is not in it): the SQLite files' bytes
 * after a checkpoint, or every row of every PostgreSQL table.
 */
export async function storedText(gw: Gateway): Promise<string> {
  if (gw.state.kind === 'sqlite') {
    gw.state.db.pragma('wal_checkpoint(PASSIVE)');
    return ['tollgate.db', 'tollgate.db-wal', 'web.sqlite', 'web.sqlite-wal']
      .map((f) => {
        try {
          return readFileSync(join(gw.state.dataDir, f)).toString('latin1');
        } catch {
          return '';
        }
      })
      .join('');
  }
  const db = gw.state.stores;
  const tables = await sql<{ name: string }>`SELECT table_name AS name FROM information_schema.tables
    WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`.execute(db);
  const out: string[] = [];
  for (const { name } of tables.rows) {
    const rows = await sql<{ r: string }>`SELECT t::text AS r FROM ${sql.table(name)} t`.execute(db);
    out.push(...rows.rows.map((x) => x.r));
  }
  return out.join('\n');
}

const PG_BY_DATA_DIR = new Map<string, TestDatabase>();

export async function startGateway(opts: StartOptions = {}): Promise<TestGateway> {
  // TOLLGATE_TEST_BACKEND=postgres runs every gateway test on a PostgreSQL database instead of SQLite (a
  // whole-suite check of the second backend; the store suites run on both backends always). A restart on the
  // same data dir finds the same database. Tests about SQLite itself say `sqliteOnly`.
  const pg =
    process.env.TOLLGATE_TEST_BACKEND === 'postgres' && !opts.env?.TOLLGATE_DATABASE_URL && !opts.sqliteOnly;
  const reused = pg && opts.dataDir ? PG_BY_DATA_DIR.get(opts.dataDir) : undefined;
  const pgDb = pg ? (reused ?? (await createTestDatabase('tg_gw'))) : undefined;
  const config = testConfig(pgDb ? { TOLLGATE_DATABASE_URL: pgDb.url, ...opts.env } : opts.env, opts.dataDir);
  if (pgDb) PG_BY_DATA_DIR.set(config.dataDir, pgDb);
  const gw = await createGateway(config, opts);
  const url = await gw.listen();
  // The public URL callers see is the bound one.
  (config as { publicUrl: string }).publicUrl = opts.env?.TOLLGATE_PUBLIC_URL ?? url;
  gw.run.services.publicUrl = config.publicUrl;

  const call = async (
    method: 'GET' | 'POST',
    path: string,
    body: unknown,
    o: { key?: string; headers?: Record<string, string> } = {},
  ) => {
    const headers: Record<string, string> = { ...o.headers };
    if (o.key) headers.authorization = `Bearer ${o.key}`;
    let payload: string | undefined;
    if (body !== undefined) {
      payload = typeof body === 'string' ? body : JSON.stringify(body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await request(`${url}${path}`, { method, headers, body: payload });
    const text = await res.body.text();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    return { status: res.statusCode, headers: res.headers, body: parsed, text };
  };

  return {
    gw,
    url,
    config,
    dataDir: config.dataDir,
    async account(usd = '1') {
      const acct = await gw.ledger.createAccount({ name: 'test' });
      const micros = parseUsdToMicros(usd);
      if (micros > 0) await gw.ledger.credit(acct.id, micros, 'test credit');
      const { key } = await createApiKey(gw.ledger, acct.id);
      return { accountId: acct.id, key };
    },
    post: (path, body, o) => call('POST', path, body, o),
    get: (path, o) => call('GET', path, undefined, o),
    cliEnv: () => ({
      TOLLGATE_DATA_DIR: config.dataDir,
      ...(config.database ? { TOLLGATE_DATABASE_URL: config.database.url } : {}),
    }),
    async close() {
      await gw.close();
      // Kept with its data dir (a restart on it finds both); dropped with it.
      if (!opts.keepData && !opts.dataDir) {
        PG_BY_DATA_DIR.delete(config.dataDir);
        await pgDb?.drop();
      }
      if (!opts.keepData && !opts.dataDir) rmSync(config.dataDir, { recursive: true, force: true });
    },
  };
}
