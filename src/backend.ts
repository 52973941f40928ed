import type { SqliteDb } from './lib/sqlite.js';
import type { PgPool } from './pg/pool.js';

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
