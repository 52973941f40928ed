import { join } from 'node:path';
import type { StateDb } from '../backend.js';
import type { Clock } from '../lib/clock.js';
import type { CommitHistograms } from '../lib/histogram.js';
import { openSqlite, type SqliteDb } from '../lib/sqlite.js';
import { PgLedger } from './pg/pg-ledger.js';
import { SqliteLedger } from './sqlite/sqlite-ledger.js';
import { WorkerLedger } from './sqlite/worker-ledger.js';
import type { Ledger } from './types.js';

export const DB_FILE = 'tollgate.db';

export interface LedgerOptions {
  clock: Clock;
  idempotencyTtlMs: number;
  writerThread?: boolean;
  /** Each group commit observed into these (seconds, writes): the ledger commit metrics, from either thread. */
  commits?: CommitHistograms | undefined;
}

/**
 * Opens the embedded SQLite ledger under the data dir. The gateway writes through a writer thread (its fsyncs
 * off the event loop); short-lived tools (the CLI) write inline.
 */
export function openLedger(dataDir: string, opts: LedgerOptions): { ledger: Ledger; db: SqliteDb } {
  const path = join(dataDir, DB_FILE);
  const db = openSqlite(path);
  const ledger = opts.writerThread ? new WorkerLedger(db, path, opts) : new SqliteLedger(db, opts);
  return { ledger, db };
}

/**
 * Opens the ledger on the gateway's state: SQLite (the state's own connection to <data dir>/tollgate.db, through
 * the writer thread when asked) or PostgreSQL (shared by the replicas; its holds are this replica's). On
 * PostgreSQL the schema comes from `migrate()` (src/pg/migrate.ts), run before; `commits` and `writerThread`
 * concern SQLite only.
 */
export function openStateLedger(state: StateDb, opts: LedgerOptions): Ledger {
  if (state.kind === 'postgres') {
    return new PgLedger(state.pool, {
      clock: opts.clock,
      idempotencyTtlMs: opts.idempotencyTtlMs,
      replicaId: state.replicaId,
    });
  }
  return opts.writerThread
    ? new WorkerLedger(state.db, join(state.dataDir, DB_FILE), opts)
    : new SqliteLedger(state.db, opts);
}

export type { Ledger } from './types.js';
