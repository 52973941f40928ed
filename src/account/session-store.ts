import type { StateDb } from '../backend.js';
import { PgSessionStore } from './session-store-pg.js';
import { SqliteSessionStore } from './session-store-sqlite.js';

// Where dashboard sessions (by the SHA-256 of their cookie) and the dashboard's form key are kept: the SQLite
// database, or the PostgreSQL every replica shares, so a browser signed in through one replica is signed in on
// all, and a CSRF token issued by one verifies on another.

export interface StoredSession {
  accountId: string;
  keyId: string | null;
}

export interface SessionStore {
  /** Records a session (and drops the expired ones). */
  add(idHash: string, s: StoredSession, now: number, expiresAt: number): Promise<void>;
  /** The session, if it is still live at `now`. */
  get(idHash: string, now: number): Promise<StoredSession | undefined>;
  remove(idHash: string): Promise<void>;
  /** A secret generated once and kept; the first writer wins, across replicas too. */
  secret(name: string, generate: () => string): Promise<string>;
  /**
   * Counts one attempt under `key` in its fixed window of `windowMs` (a new window starts when the last one
   * ended), atomically across replicas; returns the window's start and its count including this attempt.
   */
  countAttempt(key: string, now: number, windowMs: number): Promise<{ start: number; count: number }>;
}

export function openSessionStore(state: StateDb): SessionStore {
  return state.kind === 'sqlite' ? new SqliteSessionStore(state.db) : new PgSessionStore(state.pool);
}
