import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { migrate } from '../src/db/migrate.js';
import { PgLedger } from '../src/ledger/pg/pg-ledger.js';
import { systemClock } from '../src/lib/clock.js';
import { openPgPool, type PgPool } from '../src/pg/pool.js';
import { load } from './stats.js';

// Where PostgreSQL's CPU goes per hold+capture pair: run by hand (`npx tsx bench/ledger-pg-profile.ts`) against
// TOLLGATE_PROFILE_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test), best a server of its own
// started with shared_preload_libraries = 'pg_stat_statements' and pg_stat_statements.track = all (the
// statements' table is printed when the extension is there). Prints PostgreSQL CPU per pair (its backends on
// the run's database, its WAL writer, checkpointer and background writer, from /proc), WAL bytes, rows and
// index blocks touched per pair. Env: PAIRS, CONCURRENCY, DURABLE=1, EXTRA_SQL=<file run after migrating>.
// Not part of `npm run bench`.

const ADMIN_URL = process.env.TOLLGATE_PROFILE_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const ACCOUNTS = 500;
const N = Number(process.env.PAIRS ?? 10_000);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 64);
const DURABLE = process.env.DURABLE === '1';
/** SQL run after the migrations (a variant under test), from this file. */
const EXTRA_SQL = process.env.EXTRA_SQL;

function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

/** CPU ms a process has used so far, or 0 when it has ended. */
function cpuOfPid(pid: number): number {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const x = f.slice(f.lastIndexOf(')') + 2).split(' ');
    return (Number(x[11]) + Number(x[12])) * 10;
  } catch {
    return 0;
  }
}

/** The backends of this database and the server's WAL writer, checkpointer and background writer. */
async function serverPids(pool: PgPool, database: string): Promise<number[]> {
  const r = await pool.query<{ pid: number }>(
    `SELECT pid FROM pg_stat_activity WHERE datname = $1
        OR backend_type IN ('walwriter', 'checkpointer', 'background writer')`,
    [database],
  );
  return r.rows.map((x) => x.pid);
}

async function main() {
  // Piped into `head`, stdout closes early: the run must still drop its database.
  process.stdout.on('error', () => {});
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  const name = `tg_prof_${randomBytes(4).toString('hex')}`;
  await admin.query(`CREATE DATABASE ${name} TEMPLATE template0`);
  const url = withDatabase(ADMIN_URL, name);
  const pool = openPgPool(url, { max: 32 });
  try {
    await migrate(pool);
    if (EXTRA_SQL) await pool.query(readFileSync(EXTRA_SQL, 'utf8'));
    const pgss = await pool
      .query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements')
      .then(() => pool.query('SELECT pg_stat_statements_reset()'))
      .then(
        () => true,
        () => false,
      );
    const ledger = new PgLedger(pool, {
      clock: systemClock,
      idempotencyTtlMs: 86_400_000,
      replicaId: 'prof',
      durableHolds: DURABLE,
    });
    const ids = await Promise.all(
      Array.from({ length: ACCOUNTS }, async (_, i) => {
        const a = await ledger.createAccount({ name: `p ${i}` });
        await ledger.credit(a.id, 1_000_000_000_000, 'p');
        return a.id;
      }),
    );
    const run = (total: number, c: number) =>
      load(total, c, async (i) => {
        const r = await ledger.begin({
          accountId: ids[i % ids.length] as string,
          action: 'bench/pair',
          priceMicros: 10_000,
          holdMicros: 10_000,
          paymentMethod: 'api_key',
          principal: 'bench',
          holdTtlMs: 60_000,
        });
        if (r.kind !== 'started') throw new Error(r.kind);
        await ledger.capture(r.callId, { amountMicros: 10_000, provider: null, durationMs: 0 });
      });
    await run(3000, CONCURRENCY);
    await pool.query('CHECKPOINT');
    if (pgss) await pool.query('SELECT pg_stat_statements_reset()');
    await pool.query('SELECT pg_stat_reset()');
    const lsn0 = (await pool.query<{ l: string }>('SELECT pg_current_wal_lsn()::text AS l')).rows[0]?.l;
    const pids = await serverPids(pool, name);
    const cpu0 = new Map(pids.map((pid) => [pid, cpuOfPid(pid)]));
    const own0 = process.cpuUsage();
    const r = await run(N, CONCURRENCY);
    let cpuMs = 0;
    for (const pid of await serverPids(pool, name)) cpuMs += cpuOfPid(pid) - (cpu0.get(pid) ?? 0);
    const cpu = cpuMs / N;
    const own = process.cpuUsage(own0);
    const wal = (
      await pool.query<{ b: string }>('SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1)::text AS b', [lsn0])
    ).rows[0]?.b;
    console.log(
      `pairs ${N} at ${CONCURRENCY}: ${Math.round(r.perSecond)}/s; server CPU ${cpu.toFixed(3)} ms/pair; client ${((own.user + own.system) / 1000 / N).toFixed(3)} ms/pair; WAL ${(Number(wal) / N).toFixed(0)} B/pair`,
    );
    await new Promise((res) => setTimeout(res, 600)); // stats flush
    const tables = await pool.query(
      `SELECT relname, n_tup_ins, n_tup_upd, n_tup_hot_upd, n_tup_del, seq_scan, idx_scan FROM pg_stat_user_tables
        WHERE n_tup_ins + n_tup_upd + n_tup_del + coalesce(idx_scan,0) > 0 ORDER BY relname`,
    );
    console.log('\nper pair: rows inserted / updated (HOT) / deleted, index scans');
    for (const t of tables.rows)
      console.log(
        `  ${t.relname.padEnd(18)} ins ${(t.n_tup_ins / N).toFixed(2)} upd ${(t.n_tup_upd / N).toFixed(2)} (hot ${(t.n_tup_hot_upd / N).toFixed(2)}) del ${(t.n_tup_del / N).toFixed(2)} idx_scan ${((t.idx_scan ?? 0) / N).toFixed(2)} seq ${(t.seq_scan / N).toFixed(2)}`,
      );
    const idx = await pool.query(
      `SELECT s.indexrelname, s.idx_scan, i.idx_blks_hit + i.idx_blks_read AS blks FROM pg_stat_user_indexes s JOIN pg_statio_user_indexes i USING (indexrelid)
        ORDER BY blks DESC`,
    );
    console.log('\nindex blocks touched per pair');
    for (const t of idx.rows)
      if (Number(t.blks) > 0) console.log(`  ${t.indexrelname.padEnd(28)} ${(t.blks / N).toFixed(2)}`);
    if (!pgss) return;
    const st = await pool.query(
      `SELECT calls, total_exec_time, total_plan_time, wal_bytes, toplevel, left(regexp_replace(query, '\\s+', ' ', 'g'), 110) AS q
         FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
        ORDER BY total_exec_time DESC LIMIT 30`,
    );
    console.log('\nstatements: µs per pair (exec), calls per pair, WAL B per pair; * = top level');
    for (const s of st.rows)
      console.log(
        `  ${((s.total_exec_time * 1000) / N).toFixed(1).padStart(7)} µs ${(s.calls / N).toFixed(2).padStart(5)}× ${(Number(s.wal_bytes) / N).toFixed(0).padStart(5)} B ${s.toplevel ? '*' : ' '} ${s.q}`,
      );
    const fns = await pool.query(
      'SELECT funcname, calls, total_time, self_time FROM pg_stat_user_functions ORDER BY total_time DESC',
    );
    console.log('\nfunctions: µs per pair total / self');
    for (const f of fns.rows)
      console.log(
        `  ${f.funcname.padEnd(20)} ${((f.total_time * 1000) / N).toFixed(1)} / ${((f.self_time * 1000) / N).toFixed(1)} (${(f.calls / N).toFixed(2)}×)`,
      );
  } finally {
    await pool.end();
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
}

await main();
