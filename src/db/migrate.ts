import { sql } from 'kysely';
import type { PgPool } from '../pg/pool.js';
import { MIGRATIONS, type Migration, type StateFile } from './migrations/index.js';
import { type Dialect, dialectOf, pgStoreDb } from './open.js';
import type { StoreDb } from './schema.js';

// The one migration runner, for both dialects. Migrations are versioned and append-only: a shipped one is never
// edited, a change is a new entry. Each runs in one transaction and is recorded in `schema_migrations`.
// PostgreSQL: every `serve` runs them at start (and `tollgate migrate` on demand) under one session-level
// advisory lock, so replicas starting together apply each exactly once. SQLite: the state is opened by one
// process, but the CLI may open it beside the server: each migration re-checks under its immediate transaction
// that it has not been applied meanwhile. SQLite's `schema_migrations` is the one the ledger also keeps its
// versions in (namespaced); the store layer's are under namespace `stores`.

/** An arbitrary constant: the advisory lock every tollgate process takes to migrate (and an import holds). */
export const MIGRATION_LOCK = 0x7011_6a7e;
const NAMESPACE = 'stores';

export interface MigrateResult {
  applied: Array<{ version: number; name: string }>;
  current: number;
}

/**
 * Brings the database up to date. `file`: on SQLite, which of the state's files this handle is (the gateway's
 * database or the web engine's own); PostgreSQL holds everything in one database.
 */
export async function migrate(
  target: StoreDb | PgPool,
  opts: { file?: StateFile; migrations?: readonly Migration[] } = {},
): Promise<MigrateResult> {
  const db = 'getExecutor' in target ? target : pgStoreDb(target);
  const dialect = dialectOf(db);
  // The migrations that apply to this dialect and (SQLite) file, in version order.
  const file = opts.file ?? 'main';
  const list = (opts.migrations ?? MIGRATIONS)
    .filter((m) => dialect === 'postgres' || (m.only !== 'postgres' && (m.file ?? 'main') === file))
    .sort((a, b) => a.version - b.version);
  const current = Math.max(0, ...list.map((m) => m.version));
  return db.connection().execute(async (c) => {
    if (dialect === 'postgres') {
      await sql`SELECT pg_advisory_lock(${MIGRATION_LOCK})`.execute(c);
      await sql`CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, name text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now())`.execute(c);
    } else {
      await sql`CREATE TABLE IF NOT EXISTS schema_migrations (namespace TEXT NOT NULL, version INTEGER NOT NULL,
        applied_at INTEGER NOT NULL, PRIMARY KEY (namespace, version))`.execute(c);
    }
    try {
      // Read once what is applied, so that an up-to-date database (every start, every CLI command) takes no
      // write lock; what is left is re-checked under its own transaction.
      const done = new Set(await appliedVersions(c, dialect));
      const applied: MigrateResult['applied'] = [];
      for (const m of list) {
        if (done.has(m.version)) continue;
        if (await applyOnce(c, dialect, m)) applied.push({ version: m.version, name: m.name });
      }
      return { applied, current };
    } finally {
      if (dialect === 'postgres') {
        await sql`SELECT pg_advisory_unlock(${MIGRATION_LOCK})`.execute(c).catch(() => {});
      }
    }
  });
}

async function appliedVersions(c: StoreDb, dialect: Dialect): Promise<number[]> {
  const where = dialect === 'postgres' ? sql`` : sql` WHERE namespace = ${NAMESPACE}`;
  const r = await sql<{ version: number }>`SELECT version FROM schema_migrations${where}`.execute(c);
  return r.rows.map((row) => Number(row.version));
}

async function applyOnce(c: StoreDb, dialect: Dialect, m: Migration): Promise<boolean> {
  await sql.raw(dialect === 'sqlite' ? 'BEGIN IMMEDIATE' : 'BEGIN').execute(c);
  try {
    if ((await appliedVersions(c, dialect)).includes(m.version)) {
      await sql`COMMIT`.execute(c);
      return false;
    }
    const up = typeof m.up === 'string' ? m.up : await m.up(c, dialect);
    if (typeof up === 'string') await execScript(c, dialect, up);
    if (dialect === 'postgres') {
      await sql`INSERT INTO schema_migrations (version, name) VALUES (${m.version}, ${m.name})`.execute(c);
    } else {
      await sql`INSERT INTO schema_migrations (namespace, version, applied_at)
        VALUES (${NAMESPACE}, ${m.version}, ${Date.now()})`.execute(c);
    }
    await sql`COMMIT`.execute(c);
    return true;
  } catch (err) {
    await sql`ROLLBACK`.execute(c).catch(() => {});
    throw new Error(`migration ${m.version} (${m.name}) failed: ${(err as Error).message}`, { cause: err });
  }
}

/** Runs a script of statements: PostgreSQL takes it whole; better-sqlite3 prepares one statement at a time. */
async function execScript(c: StoreDb, dialect: Dialect, script: string): Promise<void> {
  if (dialect === 'postgres') {
    await sql.raw(script).execute(c);
    return;
  }
  // DDL here has no `;` inside literals, so a statement ends where a line ends with one.
  for (const stmt of script.split(/;\s*$/m)) {
    if (stmt.replace(/--.*$/gm, '').trim()) await sql.raw(stmt).execute(c);
  }
}
