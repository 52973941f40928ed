import { join } from 'node:path';
import type { Clock } from '../lib/clock.js';
import type { CommitHistograms } from '../lib/histogram.js';
import { openSqlite, type SqliteDb } from '../lib/sqlite.js';
import { SqliteLedger } from './sqlite/sqlite-ledger.js';
import { WorkerLedger } from './sqlite/worker-ledger.js';
import type { Ledger } from './types.js';

export const DB_FILE = 'tollgate.db';

/**
 * Opens the embedded SQLite ledger under the data dir. The gateway writes through a writer thread (its fsyncs
 * off the event loop); short-lived tools (the CLI) write inline.
 */
export function openLedger(
  dataDir: string,
  opts: {
    clock: Clock;
    idempotencyTtlMs: number;
    writerThread?: boolean;
    /** Each group commit observed into these (seconds, writes): the ledger commit metrics, from either thread. */
    commits?: CommitHistograms | undefined;
  },
): { ledger: Ledger; db: SqliteDb } {
  const path = join(dataDir, DB_FILE);
  const db = openSqlite(path);
  const ledger = opts.writerThread ? new WorkerLedger(db, path, opts) : new SqliteLedger(db, opts);
  return { ledger, db };
}

export type { Ledger } from './types.js';
