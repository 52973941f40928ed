import { join } from 'node:path';
import { DB_FILE, type LedgerOptions } from '../../src/ledger/index.js';
import { SqliteLedger } from '../../src/ledger/sqlite/sqlite-ledger.js';
import type { Ledger } from '../../src/ledger/types.js';
import { openSqlite, type SqliteDb } from '../../src/lib/sqlite.js';

/** The SQLite ledger under a data dir, beside (or instead of) a gateway: tests and benches. Inline commits unless `groupCommit`. */
export function openLedger(dataDir: string, opts: LedgerOptions): { ledger: Ledger; db: SqliteDb } {
  const path = join(dataDir, DB_FILE);
  const db = openSqlite(path);
  const durability = opts.groupCommit ? { kind: 'group' as const, walPath: `${path}-wal` } : undefined;
  return { ledger: new SqliteLedger(db, { ...opts, durability }), db };
}
