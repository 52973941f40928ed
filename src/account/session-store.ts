import { sql } from 'kysely';
import type { StateDb } from '../backend.js';
import { prepare } from '../db/prepared.js';
import type { StoreDb } from '../db/schema.js';
import { getOrCreate } from '../db/secrets.js';

// Where dashboard sessions (by the SHA-256 of their cookie) and the dashboard's form key are kept: the gateway's
// database, which every replica shares on PostgreSQL, so a browser signed in through one replica is signed in
// on all, and a CSRF token issued by one verifies on another.

export interface StoredSession {
  accountId: string;
  keyId: string | null;
  /** The team member it acts as (null: a session from before teams, resolved by its key). */
  memberId: string | null;
}

export interface SessionStore {
  /** Records a session (and drops the expired ones). */
  add(idHash: string, s: StoredSession, now: number, expiresAt: number): Promise<void>;
  /** The session, if it is still live at `now`. */
  get(idHash: string, now: number): Promise<StoredSession | undefined>;
  remove(idHash: string): Promise<void>;
  /** Ends every session of a member (removed from its account), on every replica at once. */
  removeOfMember(memberId: string): Promise<number>;
  /** A secret generated once and kept; the first writer wins, across replicas too. */
  secret(name: string, generate: () => string): Promise<string>;
  /**
   * Counts one attempt under `key` in its fixed window of `windowMs` (a new window starts when the last one
   * ended), atomically across replicas; returns the window's start and its count including this attempt.
   */
  countAttempt(key: string, now: number, windowMs: number): Promise<{ start: number; count: number }>;
}

export function openSessionStore(state: Pick<StateDb, 'stores'>): SessionStore {
  return new SqlSessionStore(state.stores);
}

class SqlSessionStore implements SessionStore {
  /** Read on every dashboard request. */
  private readonly read;

  constructor(private readonly db: StoreDb) {
    this.read = prepare(db, (p: { idHash: string; now: number }) =>
      db
        .selectFrom('account_sessions')
        .select(['account_id', 'key_id', 'member_id'])
        .where('id_hash', '=', p.idHash)
        .where('expires_at', '>', p.now),
    );
  }

  async add(idHash: string, s: StoredSession, now: number, expiresAt: number): Promise<void> {
    await this.db.deleteFrom('account_sessions').where('expires_at', '<=', now).execute();
    await this.db
      .insertInto('account_sessions')
      .values({
        id_hash: idHash,
        account_id: s.accountId,
        key_id: s.keyId,
        member_id: s.memberId,
        created_at: now,
        expires_at: expiresAt,
      })
      .execute();
  }

  async get(idHash: string, now: number): Promise<StoredSession | undefined> {
    const row = await this.read.first({ idHash, now });
    return row ? { accountId: row.account_id, keyId: row.key_id, memberId: row.member_id } : undefined;
  }

  async remove(idHash: string): Promise<void> {
    await this.db.deleteFrom('account_sessions').where('id_hash', '=', idHash).execute();
  }

  async removeOfMember(memberId: string): Promise<number> {
    const r = await this.db
      .deleteFrom('account_sessions')
      .where('member_id', '=', memberId)
      .executeTakeFirst();
    return Number(r.numDeletedRows);
  }

  async countAttempt(key: string, now: number, windowMs: number): Promise<{ start: number; count: number }> {
    await this.db.deleteFrom('account_attempts').where('expires_at', '<=', now).execute();
    // One statement: concurrent attempts on any replica serialize on the row, each counted once. SET
    // expressions all read the row as it was, so the window restarts (count 1) or counts on.
    const over = sql<boolean>`account_attempts.expires_at <= ${now}`;
    const row = await this.db
      .insertInto('account_attempts')
      .values({ key, window_start: now, count: 1, expires_at: now + windowMs })
      .onConflict((oc) =>
        oc.column('key').doUpdateSet({
          count: sql`CASE WHEN ${over} THEN 1 ELSE account_attempts.count + 1 END`,
          window_start: sql`CASE WHEN ${over} THEN excluded.window_start ELSE account_attempts.window_start END`,
          expires_at: sql`CASE WHEN ${over} THEN excluded.expires_at ELSE account_attempts.expires_at END`,
        }),
      )
      .returning(['window_start', 'count'])
      .executeTakeFirstOrThrow();
    return { start: row.window_start, count: row.count };
  }

  secret(name: string, generate: () => string): Promise<string> {
    return getOrCreate(this.db, 'account_secrets', name, generate);
  }
}
