import type { Adapter, AdapterPayload } from 'oidc-provider';
import { sha256Hex } from '../../src/lib/hash.js';
import { migrate, type SqliteDb } from '../../src/lib/sqlite.js';

// The authorization server's state in the gateway's own database (namespace "oauth"), so a restart logs nobody
// out: oidc-provider's models (clients, grants, sessions, interactions, codes, tokens) through one Adapter, plus
// our own small tables (signing keys and secrets, per-client daily limits, federated identities).
//
// Every statement is synchronous and stands alone (better-sqlite3), so no transaction is held across an await.
// The library reads the wall clock for expiry, so this file does too.

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

/**
 * Models whose stored payload drops `jti`: it is the bearer value itself (access and refresh tokens, codes), so a
 * copy of the database holds none. They are only ever looked up by that value, which restores it. Sessions and
 * interactions keep theirs: the library also finds them by uid, where no value is at hand.
 */
const BEARER_MODELS = new Set([
  'AccessToken',
  'RefreshToken',
  'AuthorizationCode',
  'ClientCredentials',
  'RegistrationAccessToken',
  'InitialAccessToken',
]);

interface Row {
  payload: string;
  expires_at: number | null;
  consumed_at: number | null;
}

export class OAuthStore {
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
      find: db.prepare<[string, string], Row>(
        'SELECT payload, expires_at, consumed_at FROM oauth_store WHERE model = ? AND id_hash = ?',
      ),
      findByUid: db.prepare<[string, string], Row>(
        'SELECT payload, expires_at, consumed_at FROM oauth_store WHERE model = ? AND uid = ?',
      ),
      findByUserCode: db.prepare<[string, string], Row>(
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
    };
  }

  /** An oidc-provider Adapter for one model (the library instantiates one per model name). */
  adapter(model: string): Adapter {
    return new ModelAdapter(this, model);
  }

  upsert(model: string, id: string, payload: AdapterPayload, expiresInSeconds?: number): void {
    const stored: AdapterPayload = { ...payload };
    if (BEARER_MODELS.has(model)) delete stored.jti;
    const expiresAt = expiresInSeconds === undefined ? null : Date.now() + expiresInSeconds * 1000;
    this.s.upsert.run(
      model,
      sha256Hex(id),
      JSON.stringify(stored),
      // A grant's own row carries its id here too, so rows keyed by grant can be matched to live grants.
      payload.grantId ?? (model === 'Grant' ? id : null),
      payload.uid ?? null,
      payload.userCode ?? null,
      expiresAt,
    );
  }

  find(model: string, id: string): AdapterPayload | undefined {
    const payload = live(this.s.find.get(model, sha256Hex(id)));
    if (payload && BEARER_MODELS.has(model)) payload.jti = id;
    return payload;
  }

  findByUid(model: string, uid: string): AdapterPayload | undefined {
    return live(this.s.findByUid.get(model, uid));
  }

  findByUserCode(model: string, userCode: string): AdapterPayload | undefined {
    return live(this.s.findByUserCode.get(model, userCode));
  }

  consume(model: string, id: string): void {
    this.s.consume.run(Math.floor(Date.now() / 1000), model, sha256Hex(id));
  }

  destroy(model: string, id: string): void {
    this.s.destroy.run(model, sha256Hex(id));
  }

  revokeByGrantId(model: string, grantId: string): void {
    this.s.revokeByGrantId.run(model, grantId);
  }

  /** Deletes everything past its expiry; returns how many rows went. */
  purgeExpired(now = Date.now()): number {
    const n = this.s.purge.run(now).changes;
    // Sessions last a day; their sign-in record is kept two. A grant's key goes with the grant.
    this.s.purgeSessionKeys.run(now - 2 * 86_400_000);
    this.s.purgeGrantKeys.run();
    return n;
  }

  /** How a session signed in: the API key's id, null for an upstream sign-in, undefined when unknown. */
  sessionKey(sessionUid: string): string | null | undefined {
    const row = this.s.sessionKey.get(sessionUid);
    return row === undefined ? undefined : row.key_id;
  }

  setSessionKey(sessionUid: string, keyId: string | null): void {
    this.s.setSessionKey.run(sessionUid, keyId, Date.now());
  }

  /** The API key a grant was signed in with (undefined: an upstream sign-in). */
  grantKey(grantId: string): string | undefined {
    return this.s.grantKey.get(grantId)?.key_id;
  }

  setGrantKey(grantId: string, keyId: string | null): void {
    if (keyId === null) this.s.delGrantKey.run(grantId);
    else this.s.setGrantKey.run(grantId, keyId);
  }

  /** A secret generated once and kept: the first caller's value wins, every later call reads it back. */
  secret(name: string, generate: () => string): string {
    const found = this.s.secret.get(name);
    if (found) return found.value;
    this.s.insSecret.run(name, generate(), Date.now());
    return (this.s.secret.get(name) as { value: string }).value;
  }

  /** The daily limit chosen for a client at consent, micro-USD; undefined when none was set. */
  dailyLimit(accountId: string, clientId: string): number | undefined {
    return this.s.limit.get(accountId, clientId)?.daily_limit_micros ?? undefined;
  }

  setDailyLimit(accountId: string, clientId: string, micros: number | undefined): void {
    this.s.setLimit.run(accountId, clientId, micros ?? null, Date.now());
  }

  accountForIdentity(issuer: string, subject: string): string | undefined {
    return this.s.identity.get(issuer, subject)?.account_id;
  }

  /** Links an upstream identity to an account; false when it was linked meanwhile (the caller re-reads). */
  linkIdentity(issuer: string, subject: string, accountId: string): boolean {
    try {
      this.s.insIdentity.run(issuer, subject, accountId, Date.now());
      return true;
    } catch (e) {
      if ((e as { code?: string }).code === 'SQLITE_CONSTRAINT_PRIMARYKEY') return false;
      throw e;
    }
  }
}

/** The payload of a row that has not expired, with `consumed` as the library expects it. */
function live(row: Row | undefined): AdapterPayload | undefined {
  if (!row) return undefined;
  if (row.expires_at !== null && row.expires_at <= Date.now()) return undefined;
  const payload = JSON.parse(row.payload) as AdapterPayload;
  if (row.consumed_at !== null) payload.consumed = row.consumed_at;
  return payload;
}

class ModelAdapter implements Adapter {
  constructor(
    private readonly store: OAuthStore,
    private readonly model: string,
  ) {}

  async upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
    this.store.upsert(this.model, id, payload, expiresIn);
  }
  async find(id: string): Promise<AdapterPayload | undefined> {
    return this.store.find(this.model, id);
  }
  async findByUid(uid: string): Promise<AdapterPayload | undefined> {
    return this.store.findByUid(this.model, uid);
  }
  async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
    return this.store.findByUserCode(this.model, userCode);
  }
  async consume(id: string): Promise<void> {
    this.store.consume(this.model, id);
  }
  async destroy(id: string): Promise<void> {
    this.store.destroy(this.model, id);
  }
  async revokeByGrantId(grantId: string): Promise<void> {
    this.store.revokeByGrantId(this.model, grantId);
  }
}
