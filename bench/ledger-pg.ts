import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { migrate } from '../src/db/migrate.js';
import { PgLedger } from '../src/ledger/pg/pg-ledger.js';
import type { Ledger } from '../src/ledger/types.js';
import { systemClock } from '../src/lib/clock.js';
import { openPgPool, type PgPool } from '../src/pg/pool.js';
import { openLedger } from '../test/helpers/sqlite-ledger.js';
import { load } from './stats.js';
import type { BenchModule } from './types.js';

// Ledger hold+capture pairs per second on PostgreSQL (synchronous_commit=on: every commit waits for its WAL
// flush), against the SQLite ledger in the same run, and PostgreSQL's CPU per pair (the robust figure on a
// shared machine), with holds committed without and with their own flush. A fresh database is created on the
// server at TOLLGATE_BENCH_DATABASE_URL (default: the local one) and dropped afterwards.

const ADMIN_URL = process.env.TOLLGATE_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
/** Customers the pairs are spread over: each pair locks its account's row until commit, as in production. */
const ACCOUNTS = 500;
const POOL = 32;

/** CPU ms a process has used so far (utime + stime), or undefined when it has ended. */
function cpuOfPid(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) * 10; // USER_HZ = 100 on Linux
  } catch {
    return undefined;
  }
}

/**
 * The PostgreSQL processes that work for this bench: the backends connected to its database and the server's
 * WAL writer, checkpointer and background writer (the last three also serve anyone else on a shared server,
 * but do little for others' reads). Other databases' backends are left out, so that tests or benches of other
 * work on the same server do not count. Empty when the server runs on another machine.
 */
async function serverPids(pool: PgPool, database: string): Promise<number[]> {
  const r = await pool.query<{ pid: number }>(
    `SELECT pid FROM pg_stat_activity
      WHERE datname = $1 OR backend_type IN ('walwriter', 'checkpointer', 'background writer')`,
    [database],
  );
  return r.rows.map((x) => x.pid).filter((pid) => cpuOfPid(pid) !== undefined);
}

/** Server CPU (ms) and WAL (bytes) spent by `work`, from its processes' counters before and after. */
async function serverCost(
  pool: PgPool,
  database: string,
  work: () => Promise<unknown>,
): Promise<{ cpuMs: number; walBytes: number }> {
  const lsn = async () =>
    (await pool.query<{ l: string }>('SELECT pg_current_wal_lsn()::text AS l')).rows[0]?.l as string;
  const pids = await serverPids(pool, database);
  const before = new Map(pids.map((pid) => [pid, cpuOfPid(pid) ?? 0]));
  const lsn0 = await lsn();
  await work();
  const lsn1 = await lsn();
  let cpuMs = 0;
  // Backends that started during the run count whole (the pool may have opened connections).
  for (const pid of await serverPids(pool, database)) cpuMs += (cpuOfPid(pid) ?? 0) - (before.get(pid) ?? 0);
  const wal = await pool.query<{ b: string }>('SELECT pg_wal_lsn_diff($1, $2)::text AS b', [lsn1, lsn0]);
  return { cpuMs, walBytes: Number(wal.rows[0]?.b ?? 0) };
}

function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

async function admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: ADMIN_URL });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

async function accounts(ledger: Ledger): Promise<string[]> {
  return Promise.all(
    Array.from({ length: ACCOUNTS }, async (_, i) => {
      const a = await ledger.createAccount({ name: `bench ${i}` });
      await ledger.credit(a.id, 1_000_000_000_000, 'bench');
      return a.id;
    }),
  );
}

function pairs(ledger: Ledger, ids: string[], total: number, concurrency: number) {
  return load(total, concurrency, async (i) => {
    const r = await ledger.begin({
      accountId: ids[i % ids.length] as string,
      action: 'bench/pair',
      priceMicros: 10_000,
      holdMicros: 10_000,
      paymentMethod: 'api_key',
      principal: 'bench',
      holdTtlMs: 60_000,
    });
    if (r.kind !== 'started') throw new Error(`begin: ${r.kind}`);
    await ledger.capture(r.callId, { amountMicros: 10_000, provider: null, durationMs: 0 });
  });
}

const CONCURRENCY = [1, 32, 128];

interface Cost {
  /** ms of PostgreSQL CPU per pair. */
  server: number;
  /** ms of this process's CPU per pair. */
  client: number;
  /** WAL bytes per pair. */
  wal: number;
}
const NO_COST: Cost = { server: 0, client: 0, wal: 0 };

/** The round with the median server CPU. */
function median(rounds: Cost[]): Cost {
  return [...rounds].sort((x, y) => x.server - y.server)[Math.floor(rounds.length / 2)] ?? NO_COST;
}

const bench: BenchModule = async () => {
  const name = `tg_bench_${randomBytes(4).toString('hex')}`;
  await admin((c) => c.query(`CREATE DATABASE ${name} TEMPLATE template0`));
  const pool = openPgPool(withDatabase(ADMIN_URL, name), { max: POOL, applicationName: 'tollgate-bench' });
  const rows: string[] = [];
  let best = 0;
  let sync = '';
  let version = '';
  let cost = { async: NO_COST, durable: NO_COST };
  try {
    await migrate(pool);
    sync = (await pool.query<{ synchronous_commit: string }>('SHOW synchronous_commit')).rows[0]
      ?.synchronous_commit as string;
    version = (await pool.query<{ server_version: string }>('SHOW server_version')).rows[0]
      ?.server_version as string;
    process.stderr.write(`PostgreSQL ${version}: synchronous_commit = ${sync}\n`);
    if (sync !== 'on')
      throw new Error(`synchronous_commit is ${sync}, not on: the figure would not be durable`);
    const opts = { clock: systemClock, idempotencyTtlMs: 86_400_000, replicaId: 'bench' };
    const ledger = new PgLedger(pool, opts);
    const durable = new PgLedger(pool, { ...opts, durableHolds: true });
    const ids = await accounts(ledger);
    await pairs(ledger, ids, 2000, 32); // warm-up: connections, prepared statements, plan caches

    const dir = mkdtempSync(join(tmpdir(), 'tollgate-ledger-pg-bench-'));
    const sqlite = openLedger(dir, { clock: systemClock, idempotencyTtlMs: 86_400_000 });
    const sqliteIds = await accounts(sqlite.ledger);
    await pairs(sqlite.ledger, sqliteIds, 2000, 32);

    // CPU per pair at 64 in flight: the server's processes (./serverCost) and this process (the gateway's share
    // of the work), holds committed without and with their own flush, rounds alternated, the median kept.
    const measured = 5_000;
    const costs = { async: [] as Cost[], durable: [] as Cost[] };
    for (let round = 0; round < 3; round++) {
      for (const [kind, l] of [
        ['async', ledger],
        ['durable', durable],
      ] as const) {
        const cpu0 = process.cpuUsage();
        const srv = await serverCost(pool, name, () => pairs(l, ids, measured, 64));
        const own = process.cpuUsage(cpu0);
        costs[kind].push({
          server: srv.cpuMs / measured,
          client: (own.user + own.system) / 1000 / measured,
          wal: srv.walBytes / measured,
        });
      }
    }
    cost = { async: median(costs.async), durable: median(costs.durable) };
    process.stderr.write(
      `  CPU per pair: server ${cost.async.server.toFixed(3)} ms (durable holds ${cost.durable.server.toFixed(3)}), client ${cost.async.client.toFixed(3)} ms; WAL ${Math.round(cost.async.wal)} B\n`,
    );

    for (const c of CONCURRENCY) {
      const total = c === 1 ? 1000 : 20_000;
      const p = await pairs(ledger, ids, total, c);
      const d = await pairs(durable, ids, total, c);
      const s = await pairs(sqlite.ledger, sqliteIds, total, c);
      best = Math.max(best, p.perSecond);
      const f = (n: number) => Math.round(n).toLocaleString('en');
      rows.push(`| ${c} | ${f(p.perSecond)} | ${f(d.perSecond)} | ${f(s.perSecond)} |`);
      process.stderr.write(
        `  ${c} in flight: postgres ${f(p.perSecond)}/s (every commit flushed: ${f(d.perSecond)}/s), sqlite ${f(s.perSecond)}/s, load ${loadavg()[0]?.toFixed(1)}\n`,
      );
    }
    await ledger.close();
    await sqlite.ledger.close();
    sqlite.db.close();
    rmSync(dir, { recursive: true, force: true });
  } finally {
    await pool.end();
    await admin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
  }
  const [l1] = loadavg();
  return {
    id: 'ledger-pg',
    title: 'Ledger on PostgreSQL: hold + capture pairs per second',
    body: [
      `PostgreSQL ${version} on this machine (loopback), \`SHOW synchronous_commit\` = **${sync}** (each commit waits`,
      `for its WAL flush), a pool of ${POOL} connections, pairs spread over ${ACCOUNTS} funded accounts. One pair =`,
      '`begin` + `capture` of a plain call (no idempotency key, daily cap or funding): one statement each, sent as',
      'a named prepared statement (`src/ledger/pg/pg-pair.ts`; the hold is a row of `pending_holds`, the capture',
      "deletes it and, in the same statement, posts the charge, its two entries and revenue's credit). While two",
      'statements of a kind run, the holds (or captures) that arrive wait and go out together as one statement',
      'and one commit (`src/ledger/pg/pg-batch.ts`, `pg-plain-calls.ts`); a lone call goes out at once, alone. A hold',
      '(it moves no money) commits without waiting for its WAL flush and is made durable by the flush of its',
      'capture, which waits; the "durable holds" column makes every commit wait (`durableHolds`). The SQLite',
      'ledger (synchronous=FULL for captures, group commit) runs the same load in the same run.',
      '',
      '| pairs in flight | PostgreSQL pairs/s | PostgreSQL, durable holds | SQLite pairs/s |',
      '|---|---|---|---|',
      ...rows,
      '',
      `CPU per pair at 64 in flight (median of 3 rounds of ${(5000).toLocaleString('en')}; the backends of the bench's database and`,
      "the server's WAL writer, checkpointer and background writer, read from /proc; robust to other load on the",
      'machine, unlike pairs/s):',
      '',
      '| holds | PostgreSQL CPU per pair | gateway (this process) CPU per pair | WAL per pair |',
      '|---|---|---|---|',
      `| committed without their own flush (default) | ${cost.async.server.toFixed(3)} ms | ${cost.async.client.toFixed(3)} ms | ${Math.round(cost.async.wal).toLocaleString('en')} B |`,
      `| durable (every commit flushed) | ${cost.durable.server.toFixed(3)} ms | ${cost.durable.client.toFixed(3)} ms | ${Math.round(cost.durable.wal).toLocaleString('en')} B |`,
      '',
      `Target: ≥ 3,000 pairs/s or ≤ 0.4 ms of PostgreSQL CPU per pair — best measured **${Math.round(best).toLocaleString('en')}/s**,`,
      `**${cost.async.server.toFixed(3)} ms** of PostgreSQL CPU per pair (${best >= 3000 || cost.async.server <= 0.4 ? 'met' : 'not met'}). Load average at the end of the run:`,
      `${l1?.toFixed(1)} on ${cpus().length} cores (the bench process, the server and anything else on the machine share`,
      'them). The pairs are CPU-bound: on this machine with nothing else running, its cores would carry at most',
      `about ${Math.round((cpus().length * 1000) / (cost.async.server + cost.async.client || 1)).toLocaleString('en')} pairs/s. PostgreSQL groups the WAL flushes of concurrent commits; pairs of one account serialize`,
      'on its row lock, so one account alone is bounded by two commit latencies per pair. Where the CPU goes:',
      '`npx tsx bench/ledger-pg-profile.ts` against a server with pg_stat_statements (docs/decisions.md).',
    ].join('\n'),
    targets: [
      {
        target: '#19 PostgreSQL ≥ 3,000 hold+capture pairs/s, or ≤ 0.4 ms of PostgreSQL CPU per pair',
        measured: `${Math.round(best).toLocaleString('en')} pairs/s; PostgreSQL ${cost.async.server.toFixed(3)} ms of CPU per pair`,
        verdict: best >= 3000 || cost.async.server <= 0.4 ? 'met' : 'not met',
        why: `CPU-bound: PostgreSQL ${cost.async.server.toFixed(2)} ms and the gateway ${cost.async.client.toFixed(2)} ms of CPU per pair on ${cpus().length} shared cores`,
      },
    ],
  };
};

export default bench;
