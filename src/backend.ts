import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { Config } from './config/index.js';
import { DB_FILE } from './ledger/index.js';
import { openSqlite, type SqliteDb } from './lib/sqlite.js';
import { migrate } from './pg/migrate.js';
import { openPgPool, type PgPool } from './pg/pool.js';

/**
 * Where the gateway keeps its state: the embedded SQLite database under the data dir (one process owns it), or
 * PostgreSQL shared by any number of replicas. Every store is opened from this handle by its own module
 * (`openXStore(db)`), with one implementation per kind behind one interface, and one test suite run on both.
 */
export type StateDb =
  | { kind: 'sqlite'; db: SqliteDb; dataDir: string }
  | {
      kind: 'postgres';
      pool: PgPool;
      /** This process's replica id: the holds it takes and the crawls it runs belong to it (docs/operator.md). */
      replicaId: string;
      /** Where this process may still keep local scratch (never state another replica needs). */
      dataDir: string;
    };

/** The gateway's state, opened: close it last. */
export interface OpenedState {
  state: StateDb;
  close(): Promise<void>;
}

/**
 * Opens the state the configuration names: PostgreSQL (TOLLGATE_DATABASE_URL), migrated to this version first
 * (safe when replicas start together), or the SQLite file under the data dir.
 */
export async function openState(
  config: Pick<Config, 'dataDir' | 'database'>,
  opts: { migrate?: boolean; replicaId?: string; poolMax?: number } = {},
): Promise<OpenedState> {
  const { database, dataDir } = config;
  if (!database) {
    const db = openSqlite(join(dataDir, DB_FILE));
    return {
      state: { kind: 'sqlite', db, dataDir },
      async close() {
        db.close();
      },
    };
  }
  const pool = openPgPool(database.url, { max: opts.poolMax ?? database.pool });
  try {
    if (opts.migrate !== false) await migrate(pool);
  } catch (err) {
    await pool.end();
    throw err;
  }
  return {
    state: { kind: 'postgres', pool, replicaId: opts.replicaId ?? newReplicaId(), dataDir },
    async close() {
      await pool.end();
    },
  };
}

/** Unique per process start: a restarted process is a new replica (its predecessor's holds are orphans). */
export function newReplicaId(): string {
  return `r_${hostname()
    .replace(/[^A-Za-z0-9-]/g, '')
    .slice(0, 24)}_${process.pid}_${randomBytes(4).toString('hex')}`;
}
