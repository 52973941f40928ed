import type { StoreDb } from './db/schema.js';
import type { SqliteDb } from './lib/sqlite.js';
import type { PgPool } from './pg/pool.js';

/**
 * Where the gateway keeps its state: the embedded SQLite database under the data dir (one process owns it), or
 * PostgreSQL shared by any number of replicas. Every store but the ledger is written once over `stores` (the
 * store layer, src/db); the ledger keeps hand-written SQL per backend and opens from `db` or `pool`.
 */
export type StateDb = {
  /** The store layer: one Kysely handle over either database (its own connection on SQLite). */
  stores: StoreDb;
  /** The web engine's bulky state: SQLite's own file data/web.sqlite (opened on first use); PostgreSQL: `stores`. */
  bulk: StoreDb;
  /**
   * This process's replica id: the holds it takes, the crawls it runs and the x402 payments it reserves belong
   * to it (docs/operator.md). SQLite is a cluster of one with a fixed id.
   */
  replicaId: string;
  /** Where this process may keep local scratch (never state another replica needs). */
  dataDir: string;
} & ({ kind: 'sqlite'; db: SqliteDb } | { kind: 'postgres'; pool: PgPool });
