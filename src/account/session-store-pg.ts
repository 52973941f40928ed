import type { PgPool } from '../pg/pool.js';
import type { SessionStore, StoredSession } from './session-store.js';

// Dashboard sessions in PostgreSQL, shared by every replica (schema: src/pg/migrations/sign-in.ts).

export class PgSessionStore implements SessionStore {
  constructor(private readonly pool: PgPool) {}

  async add(idHash: string, s: StoredSession, now: number, expiresAt: number): Promise<void> {
    await this.pool.query({
      name: 'account-session-purge',
      text: 'DELETE FROM account_sessions WHERE expires_at <= $1',
      values: [now],
    });
    await this.pool.query({
      name: 'account-session-add',
      text: 'INSERT INTO account_sessions (id_hash, account_id, key_id, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)',
      values: [idHash, s.accountId, s.keyId, now, expiresAt],
    });
  }

  async get(idHash: string, now: number): Promise<StoredSession | undefined> {
    const { rows } = await this.pool.query<{ account_id: string; key_id: string | null }>({
      name: 'account-session-get',
      text: 'SELECT account_id, key_id FROM account_sessions WHERE id_hash = $1 AND expires_at > $2',
      values: [idHash, now],
    });
    const row = rows[0];
    return row ? { accountId: row.account_id, keyId: row.key_id } : undefined;
  }

  async remove(idHash: string): Promise<void> {
    await this.pool.query({
      name: 'account-session-remove',
      text: 'DELETE FROM account_sessions WHERE id_hash = $1',
      values: [idHash],
    });
  }

  async countAttempt(key: string, now: number, windowMs: number): Promise<{ start: number; count: number }> {
    await this.pool.query({
      name: 'account-attempts-purge',
      text: 'DELETE FROM account_attempts WHERE expires_at <= $1',
      values: [now],
    });
    // One statement: concurrent attempts on any replica serialize on the row, each counted once. SET
    // expressions all read the row as it was, so the window restarts (count 1) or counts on.
    const { rows } = await this.pool.query<{ window_start: number; count: number }>({
      name: 'account-attempt',
      text: `INSERT INTO account_attempts AS a (key, window_start, count, expires_at) VALUES ($1, $2::bigint, 1, $2::bigint + $3::bigint)
             ON CONFLICT (key) DO UPDATE SET
               count = CASE WHEN a.expires_at <= $2 THEN 1 ELSE a.count + 1 END,
               window_start = CASE WHEN a.expires_at <= $2 THEN $2 ELSE a.window_start END,
               expires_at = CASE WHEN a.expires_at <= $2 THEN $2::bigint + $3::bigint ELSE a.expires_at END
             RETURNING window_start, count`,
      values: [key, now, windowMs],
    });
    const row = rows[0] as { window_start: number; count: number };
    return { start: row.window_start, count: row.count };
  }

  async secret(name: string, generate: () => string): Promise<string> {
    const read = async () =>
      (
        await this.pool.query<{ value: string }>({
          name: 'account-secret',
          text: 'SELECT value FROM account_secrets WHERE name = $1',
          values: [name],
        })
      ).rows[0]?.value;
    const found = await read();
    if (found !== undefined) return found;
    // Replicas starting together may each generate one: the first insert wins, the others read it back.
    await this.pool.query({
      name: 'account-secret-ins',
      text: 'INSERT INTO account_secrets (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING',
      values: [name, generate()],
    });
    return (await read()) as string;
  }
}
