import type { StateDb } from '../backend.js';
import type { Clock } from '../lib/clock.js';
import type { HandleStore } from '../ports/index.js';
import { PgHandleStore } from './handles-pg.js';
import { SqliteHandleStore } from './handles-sqlite.js';

/** The handle store of the gateway's state: the SQLite `handles` table, or PostgreSQL shared by replicas. */
export function openHandleStore(state: StateDb, clock: Clock): HandleStore {
  return state.kind === 'sqlite'
    ? new SqliteHandleStore(state.db, clock)
    : new PgHandleStore(state.pool, clock);
}
