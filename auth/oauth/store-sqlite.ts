import type { Adapter, AdapterPayload } from 'oidc-provider';
import { sha256Hex } from '../../src/lib/hash.js';
import { migrate, type SqliteDb } from '../../src/lib/sqlite.js';
import type { OAuthStore, StoredGrant } from './store.js';
import { live, ModelAdapter, rowOf, SESSION_KEY_TTL_MS, type StoredRow, withJti } from './store-rows.js';

// The OAuth store in the gateway's own SQLite database (namespace "oauth"). Every statement is synchronous and
// stands alone (better-sqlite3), so no transaction is held across an await.

const OAUTH_MIGRATIONS: string[] = [
  `
  CREATE TABLE oauth_store (
    model       TEXT NOT NULL,
    -- SHA-256 of the model's id: bearer values (tokens, codes, session cookies) are never stored as given.
    id_hash     TEXT NOT NULL,
    payload     TEXT NOT NULL,
    grant_id    TEXT,
    uid         TEXT,
    user_code   TEXT,
    expires_at  INTEGER,
    consumed_at INTEGER,
    PRIMARY KEY (model, id_hash)
  );
  CREATE INDEX oauth_store_grant ON oauth_store(grant_id) WHERE grant_id IS NOT NULL;
  CREATE INDEX oauth_store_uid ON oauth_store(model, uid) WHERE uid IS NOT NULL;
  CREATE INDEX oauth_store_user_code ON oauth_store(model, user_code) WHERE user_code IS NOT NULL;
  CREATE INDEX oauth_store_expiry ON oauth_store(expires_at) WHERE expires_at IS NOT NULL;

  -- Generated once: the JWKS and the cookie and form secrets (so cookies and ID tokens survive a restart).
  CREATE TABLE oauth_secrets (
    name       TEXT PRIMARY KEY,
    value      TEXT NOT NULL,
    created_at INTEGER NOT NULL
  );

  -- The daily spend limit an account chose for a client at consent (NULL: no limit beyond the balance).
  CREATE TABLE oauth_client_limits (
    account_id         TEXT NOT NULL,
    client_id          TEXT NOT NULL,
    daily_limit_micros INTEGER CHECK (daily_limit_micros IS NULL OR daily_limit_micros > 0),
    updated_at         INTEGER NOT NULL,
    PRIMARY KEY (account_id, client_id)
  );

  -- How a browser session signed in: the API key used (NULL: upstream sign-in), and the key behind each grant,
  -- so revoking a key also cuts off the hosts connected by signing in with it.
  CREATE TABLE oauth_session_keys (
    session_uid TEXT PRIMARY KEY,
    key_id      TEXT,
    created_at  INTEGER NOT NULL
  );
  CREATE TABLE oauth_grant_keys (
    grant_id TEXT PRIMARY KEY,
    key_id   TEXT NOT NULL
  );

  -- Accounts created by federated sign-in: one per (upstream issuer, subject).
  CREATE TABLE oauth_identities (
    issuer     TEXT NOT NULL,
    subject    TEXT NOT NULL,
    account_id TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (issuer, subject)
  );
  `,
];

export class SqliteOAuthStore implements OAuthStore {
  private readonly s;

  constructor(db: SqliteDb) {
    migrate(db, 'oauth', OAUTH_MIGRATIONS);
    this.s = {
      upsert: db.prepare(
        `INSERT INTO oauth_store (model, id_hash, payload, grant_id, uid, user_code, expires_at, consumed_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, NULL)
         ON CONFLICT (model, id_hash) DO UPDATE SET payload = excluded.payload, grant_id = excluded.grant_id,
           uid = excluded.uid, user_code = excluded.user_code, expires_at = excluded.expires_at`,
      ),
      find: db.prepare<[string, string], StoredRow>(
        'SELECT payload, expires_at, consumed_at FROM oauth_store WHERE model = ? AND id_hash = ?',
      ),
      findByUid: db.prepare<[string, string], StoredRow>(
        'SELECT payload, expires_at, consumed_at FROM oauth_store WHERE model = ? AND uid = ?',
      ),
      findByUserCode: db.prepare<[string, string], StoredRow>(
        'SELECT payload, expires_at, consumed_at FROM oauth_store WHERE model = ? AND user_code = ?',
      ),
      consume: db.prepare('UPDATE oauth_store SET consumed_at = ? WHERE model = ? AND id_hash = ?'),
      destroy: db.prepare('DELETE FROM oauth_store WHERE model = ? AND id_hash = ?'),
      revokeByGrantId: db.prepare('DELETE FROM oauth_store WHERE model = ? AND grant_id = ?'),
      purge: db.prepare('DELETE FROM oauth_store WHERE expires_at IS NOT NULL AND expires_at <= ?'),
      purgeSessionKeys: db.prepare('DELETE FROM oauth_session_keys WHERE created_at <= ?'),
      purgeGrantKeys: db.prepare(
        "DELETE FROM oauth_grant_keys WHERE grant_id NOT IN (SELECT grant_id FROM oauth_store WHERE model = 'Grant' AND grant_id IS NOT NULL)",
      ),
      sessionKey: db.prepare<[string], { key_id: string | null }>(
        'SELECT key_id FROM oauth_session_keys WHERE session_uid = ?',
      ),
      setSessionKey: db.prepare(
        `INSERT INTO oauth_session_keys (session_uid, key_id, created_at) VALUES (?, ?, ?)
         ON CONFLICT (session_uid) DO UPDATE SET key_id = excluded.key_id, created_at = excluded.created_at`,
      ),
      grantKey: db.prepare<[string], { key_id: string }>(
        'SELECT key_id FROM oauth_grant_keys WHERE grant_id = ?',
      ),
      setGrantKey: db.prepare(
        'INSERT INTO oauth_grant_keys (grant_id, key_id) VALUES (?, ?) ON CONFLICT (grant_id) DO UPDATE SET key_id = excluded.key_id',
      ),
      delGrantKey: db.prepare('DELETE FROM oauth_grant_keys WHERE grant_id = ?'),
      secret: db.prepare<[string], { value: string }>('SELECT value FROM oauth_secrets WHERE name = ?'),
      insSecret: db.prepare(
        'INSERT INTO oauth_secrets (name, value, created_at) VALUES (?, ?, ?) ON CONFLICT (name) DO NOTHING',
      ),
      limit: db.prepare<[string, string], { daily_limit_micros: number | null }>(
        'SELECT daily_limit_micros FROM oauth_client_limits WHERE account_id = ? AND client_id = ?',
      ),
      setLimit: db.prepare(
        `INSERT INTO oauth_client_limits (account_id, client_id, daily_limit_micros, updated_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (account_id, client_id) DO UPDATE SET daily_limit_micros = excluded.daily_limit_micros,
           updated_at = excluded.updated_at`,
      ),
      identity: db.prepare<[string, string], { account_id: string }>(
        'SELECT account_id FROM oauth_identities WHERE issuer = ? AND subject = ?',
      ),
      insIdentity: db.prepare(
        'INSERT INTO oauth_identities (issuer, subject, account_id, created_at) VALUES (?, ?, ?, ?)',
      ),
      dropGrant: db.prepare('DELETE FROM oauth_store WHERE grant_id = ?'),
      grantsOf: db.prepare<[string, number], { grant_id: string; payload: string }>(
        `SELECT grant_id, payload FROM oauth_store WHERE model = 'Grant' AND json_extract(payload, '$.accountId') = ?
           AND (expires_at IS NULL OR expires_at > ?)`,
      ),
    };
  }

  adapter(model: string): Adapter {
    return new ModelAdapter(this, model);
  }

  async upsert(model: string, id: string, payload: AdapterPayload, expiresInSeconds?: number): Promise<void> {
    const r = rowOf(model, id, payload, expiresInSeconds);
    this.s.upsert.run(model, sha256Hex(id), r.payload, r.grantId, r.uid, r.userCode, r.expiresAt);
  }

  async find(model: string, id: string): Promise<AdapterPayload | undefined> {
    return withJti(model, id, live(this.s.find.get(model, sha256Hex(id))));
  }

  async findByUid(model: string, uid: string): Promise<AdapterPayload | undefined> {
    return live(this.s.findByUid.get(model, uid));
  }

  async findByUserCode(model: string, userCode: string): Promise<AdapterPayload | undefined> {
    return live(this.s.findByUserCode.get(model, userCode));
  }

  async consume(model: string, id: string): Promise<void> {
    this.s.consume.run(Math.floor(Date.now() / 1000), model, sha256Hex(id));
  }

  async destroy(model: string, id: string): Promise<void> {
    this.s.destroy.run(model, sha256Hex(id));
  }

  async revokeByGrantId(model: string, grantId: string): Promise<void> {
    this.s.revokeByGrantId.run(model, grantId);
  }

  async dropGrant(grantId: string): Promise<void> {
    this.s.dropGrant.run(grantId);
  }

  async grantsOf(accountId: string): Promise<StoredGrant[]> {
    return this.s.grantsOf
      .all(accountId, Date.now())
      .map((r) => ({ grantId: r.grant_id, payload: JSON.parse(r.payload) as AdapterPayload }));
  }

  async purgeExpired(now = Date.now()): Promise<number> {
    const n = this.s.purge.run(now).changes;
    this.s.purgeSessionKeys.run(now - SESSION_KEY_TTL_MS);
    // A grant's key goes with the grant.
    this.s.purgeGrantKeys.run();
    return n;
  }

  async sessionKey(sessionUid: string): Promise<string | null | undefined> {
    const row = this.s.sessionKey.get(sessionUid);
    return row === undefined ? undefined : row.key_id;
  }

  async setSessionKey(sessionUid: string, keyId: string | null): Promise<void> {
    this.s.setSessionKey.run(sessionUid, keyId, Date.now());
  }

  async grantKey(grantId: string): Promise<string | undefined> {
    return this.s.grantKey.get(grantId)?.key_id;
  }

  async setGrantKey(grantId: string, keyId: string | null): Promise<void> {
    if (keyId === null) this.s.delGrantKey.run(grantId);
    else this.s.setGrantKey.run(grantId, keyId);
  }

  async secret(name: string, generate: () => string): Promise<string> {
    const found = this.s.secret.get(name);
    if (found) return found.value;
    this.s.insSecret.run(name, generate(), Date.now());
    return (this.s.secret.get(name) as { value: string }).value;
  }

  async dailyLimit(accountId: string, clientId: string): Promise<number | undefined> {
    return this.s.limit.get(accountId, clientId)?.daily_limit_micros ?? undefined;
  }

  async setDailyLimit(accountId: string, clientId: string, micros: number | undefined): Promise<void> {
    this.s.setLimit.run(accountId, clientId, micros ?? null, Date.now());
  }

  async accountForIdentity(issuer: string, subject: string): Promise<string | undefined> {
    return this.s.identity.get(issuer, subject)?.account_id;
  }

  async linkIdentity(issuer: string, subject: string, accountId: string): Promise<boolean> {
    try {
      this.s.insIdentity.run(issuer, subject, accountId, Date.now());
      return true;
    } catch (e) {
      if ((e as { code?: string }).code === 'SQLITE_CONSTRAINT_PRIMARYKEY') return false;
      throw e;
    }
  }
}
