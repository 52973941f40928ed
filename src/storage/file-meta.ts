import type { StateDb } from '../backend.js';
import type { FileMetaStore } from '../ports/index.js';
import { PgFileMetaStore } from './file-meta-pg.js';
import { SqliteFileMetaStore } from './file-meta-sqlite.js';

/** The file metadata store of the gateway's state: the SQLite `files` table, or PostgreSQL shared by replicas. */
export function openFileMetaStore(state: StateDb): FileMetaStore {
  return state.kind === 'sqlite' ? new SqliteFileMetaStore(state.db) : new PgFileMetaStore(state.pool);
}
