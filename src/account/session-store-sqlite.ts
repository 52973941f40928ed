import { migrate, type SqliteDb } from '../lib/sqlite.js';
import type { SessionStore, StoredSession } from './session-store.js';

// Dashboard sessions in the gateway's SQLite database (namespace "account").

const MIGRATIONS = [
  `
  CREATE TABLE account_sessions (
    id_hash    TEXT PRIMARY KEY,
    account_id TEXT NOT NULL,
    -- The API key the session signed in with (NULL: sign-up or an upstream sign-in).
    key_id     TEXT,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
  );
  CREATE INDEX account_sessions_expiry ON account_sessions(expires_at);
  CREATE TABLE account_secrets (
    name  TEXT PRIMARY KEY,
    value TEXT NOT NULL
  );
  `,
  `
  -- Fixed-window attempt counters (sign-ups per client IP per hour), shared by every process on this database.
  CREATE TABLE account_attempts (
    key          TEXT PRIMARY KEY,
    window_start INTEGER NOT NULL,
    count        INTEGER NOT NULL,
    expires_at   INTEGER NOT NULL
  );
  CREATE INDEX account_attempts_expiry ON account_attempts(expires_at);
  `,
];

export class SqliteSessionStore implements SessionStore {
  private readonly s;

  constructor(db: SqliteDb) {
    migrate(db, 'account', MIGRATIONS);
    this.s = {
      ins: db.prepare(
        'INSERT INTO account_sessions (id_hash, account_id, key_id, created_at, expires_at) VALUES (?, ?, ?, ?, ?)',
      ),
      get: db.prepare<[string, number], { account_id: string; key_id: string | null }>(
        'SELECT account_id, key_id FROM account_sessions WHERE id_hash = ? AND expires_at > ?',
      ),
      del: db.prepare('DELETE FROM account_sessions WHERE id_hash = ?'),
      purge: db.prepare('DELETE FROM account_sessions WHERE expires_at <= ?'),
      secret: db.prepare<[string], { value: string }>('SELECT value FROM account_secrets WHERE name = ?'),
      insSecret: db.prepare(
        'INSERT INTO account_secrets (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING',
      ),
      purgeAttempts: db.prepare('DELETE FROM account_attempts WHERE expires_at <= ?'),
      // SET expressions all read the row as it was, so the window restarts (count 1) or counts on, atomically.
      attempt: db.prepare<
        [{ key: string; now: number; window: number }],
        { window_start: number; count: number }
      >(
        `INSERT INTO account_attempts (key, window_start, count, expires_at) VALUES (@key, @now, 1, @now + @window)
         ON CONFLICT (key) DO UPDATE SET
           count = CASE WHEN expires_at <= @now THEN 1 ELSE count + 1 END,
           window_start = CASE WHEN expires_at <= @now THEN @now ELSE window_start END,
           expires_at = CASE WHEN expires_at <= @now THEN @now + @window ELSE expires_at END
         RETURNING window_start, count`,
      ),
    };
  }

  async add(idHash: string, s: StoredSession, now: number, expiresAt: number): Promise<void> {
    this.s.purge.run(now);
    this.s.ins.run(idHash, s.accountId, s.keyId, now, expiresAt);
  }

  async get(idHash: string, now: number): Promise<StoredSession | undefined> {
    const row = this.s.get.get(idHash, now);
    return row ? { accountId: row.account_id, keyId: row.key_id } : undefined;
  }

  async remove(idHash: string): Promise<void> {
    this.s.del.run(idHash);
  }

  async countAttempt(key: string, now: number, windowMs: number): Promise<{ start: number; count: number }> {
    this.s.purgeAttempts.run(now);
    const row = this.s.attempt.get({ key, now, window: windowMs }) as { window_start: number; count: number };
    return { start: row.window_start, count: row.count };
  }

  async secret(name: string, generate: () => string): Promise<string> {
    const found = this.s.secret.get(name);
    if (found) return found.value;
    this.s.insSecret.run(name, generate());
    return (this.s.secret.get(name) as { value: string }).value;
  }
}
