import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';

export type SqliteDb = Database.Database;

// SQLite 3.7.0–3.51.2 has a WAL-reset race that can lose commits (sqlite.org/wal.html#walresetbug).
const MIN_SQLITE = [3, 51, 3] as const;

function versionAtLeast(v: string, min: readonly number[]): boolean {
  const parts = v.split('.').map(Number);
  for (let i = 0; i < min.length; i++) {
    const a = parts[i] ?? 0;
    const b = min[i] ?? 0;
    if (a !== b) return a > b;
  }
  return true;
}

/**
 * Opens the gateway database with the pragmas the ledger relies on: WAL, synchronous=FULL (a committed charge
 * survives power loss), foreign keys, and a busy timeout so the CLI can write while the server runs.
 */
export function openSqlite(path: string): SqliteDb {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path);
  const version = (db.prepare('select sqlite_version() as v').get() as { v: string }).v;
  if (!versionAtLeast(version, MIN_SQLITE)) {
    db.close();
    throw new Error(`SQLite ${version} is affected by the WAL-reset bug; need >= ${MIN_SQLITE.join('.')}`);
  }
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  return db;
}

/**
 * A migration: SQL run in one immediate transaction. One that rebuilds a table other tables reference (SQLite
 * cannot change a CHECK constraint in place) runs with foreign keys off, as SQLite's documented procedure
 * requires (sqlite.org/lang_altertable.html#otheralter), and must leave `foreign_key_check` clean before it commits.
 */
export type Migration = string | { sql: string; rebuildsTables: true };

/**
 * Applies `migrations[v..]` for a namespace (ledger, jobs, oauth, …), each in its own immediate transaction.
 * Migrations are append-only: a shipped one is never edited; a change is a new entry.
 */
export function migrate(db: SqliteDb, namespace: string, migrations: readonly Migration[]): void {
  db.exec(
    'CREATE TABLE IF NOT EXISTS schema_migrations (namespace TEXT NOT NULL, version INTEGER NOT NULL, applied_at INTEGER NOT NULL, PRIMARY KEY (namespace, version))',
  );
  const row = db
    .prepare('SELECT max(version) AS v FROM schema_migrations WHERE namespace = ?')
    .get(namespace) as {
    v: number | null;
  };
  for (let v = row.v ?? 0; v < migrations.length; v++) {
    const m = migrations[v] as Migration;
    const rebuild = typeof m !== 'string';
    // The pragma is a no-op inside a transaction, so it is switched around it.
    const fkWasOn = rebuild && db.pragma('foreign_keys', { simple: true }) === 1;
    if (fkWasOn) db.pragma('foreign_keys = OFF');
    try {
      db.transaction(() => {
        db.exec(typeof m === 'string' ? m : m.sql);
        if (rebuild) {
          const broken = db.pragma('foreign_key_check') as unknown[];
          if (broken.length > 0) throw new Error(`migration ${namespace}#${v + 1} broke foreign keys`);
        }
        db.prepare('INSERT INTO schema_migrations (namespace, version, applied_at) VALUES (?, ?, ?)').run(
          namespace,
          v + 1,
          Date.now(),
        );
      }).immediate();
    } finally {
      if (fkWasOn) db.pragma('foreign_keys = ON');
    }
  }
}
