import { join } from 'node:path';
import type { StateDb } from '../backend.js';
import type { Clock } from '../lib/clock.js';
import type { CommitHistograms } from '../lib/histogram.js';
import { openSqlite } from '../lib/sqlite.js';
import { SqliteLedger } from './sqlite/sqlite-ledger.js';
import type { Ledger } from './types.js';

export const DB_FILE = 'tollgate.db';

export interface LedgerOptions {
  clock: Clock;
  idempotencyTtlMs: number;
  /**
   * The gateway's durability (SQLite): group commit with the fdatasync off the event loop and checkpoints on a
   * thread of their own (src/ledger/sqlite/group-commit.ts). Short-lived tools (the CLI) commit inline.
   */
  groupCommit?: boolean;
  /** Each group commit observed into these (seconds, writes): the ledger commit metrics. */
  commits?: CommitHistograms | undefined;
  /** How long an API key read from the database is trusted (src/ledger/key-cache.ts); 0 or absent: no cache. */
  keyCacheTtlMs?: number | undefined;
  /**
   * SQLite, group commit: whether the process has only one call in flight; its capture's fdatasync then runs on
   * the event loop instead of libuv's pool (src/ledger/sqlite/group-commit.ts `alone`).
   */
  alone?: (() => boolean) | undefined;
  /** A background checkpoint failed (SQLite, group commit): the gateway logs it. */
  onCheckpointError?: ((message: string) => void) | undefined;
}

/**
 * Opens the ledger on the gateway's state: SQLite (a connection of its own to <data dir>/tollgate.db, so its
 * commits' durability does not change the stores' on the state's connection) or PostgreSQL (shared by the
 * replicas; its holds are this replica's). On PostgreSQL the schema comes from `migrate()` (src/pg/migrate.ts),
 * run before; `commits` and `groupCommit` concern SQLite only.
 */
export async function openStateLedger(state: StateDb, opts: LedgerOptions): Promise<Ledger> {
  if (state.kind === 'postgres') {
    // node-postgres and the PostgreSQL ledger load only here: a gateway on SQLite never carries them.
    const { PgLedger } = await import('./pg/pg-ledger.js');
    return new PgLedger(state.pool, {
      clock: opts.clock,
      idempotencyTtlMs: opts.idempotencyTtlMs,
      replicaId: state.replicaId,
      keyCacheTtlMs: opts.keyCacheTtlMs,
    });
  }
  if (!opts.groupCommit) return new SqliteLedger(state.db, opts);
  // Checkpoints belong to the checkpointer thread alone: the state's connection must not run one on the event
  // loop (nor, unsynced, under the ledger's feet).
  state.db.pragma('wal_autocheckpoint = 0');
  const path = join(state.dataDir, DB_FILE);
  const db = openSqlite(path);
  const ledger = new SqliteLedger(db, {
    ...opts,
    durability: { kind: 'group', walPath: `${path}-wal`, alone: opts.alone },
  });
  const close = ledger.close.bind(ledger);
  ledger.close = async () => {
    await close();
    db.close();
  };
  return ledger;
}
