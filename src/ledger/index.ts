import { join } from 'node:path';
import type { Clock } from '../lib/clock.js';
import { openSqlite, type SqliteDb } from '../lib/sqlite.js';
import { SqliteLedger } from './sqlite/sqlite-ledger.js';
import type { Ledger } from './types.js';

export const DB_FILE = 'tollgate.db';

/** Opens the embedded SQLite ledger under the data dir. */
export function openLedger(
  dataDir: string,
  opts: {
    clock: Clock;
    idempotencyTtlMs: number;
    /** Told of each group commit (seconds, writes): the ledger commit metrics. */
    onCommit?: ((seconds: number, writes: number) => void) | undefined;
  },
): { ledger: Ledger; db: SqliteDb } {
  const db = openSqlite(join(dataDir, DB_FILE));
  return { ledger: new SqliteLedger(db, opts), db };
}

export type { Ledger } from './types.js';
