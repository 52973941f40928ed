import type { Adapter, AdapterPayload } from 'oidc-provider';
import { sha256Hex } from '../../src/lib/hash.js';
import type { PgPool } from '../../src/pg/pool.js';
import type { OAuthStore, StoredGrant } from './store.js';
import { live, ModelAdapter, rowOf, SESSION_KEY_TTL_MS, type StoredRow, withJti } from './store-rows.js';

// The OAuth store in PostgreSQL, shared by every replica (schema: src/pg/migrations/sign-in.ts): a token, grant
// or session written by one replica is found by all. Each method is one autocommit statement (or a read after
// an idempotent insert), so no transaction is needed; first-writer-wins rows use ON CONFLICT DO NOTHING.

export class PgOAuthStore implements OAuthStore {
  constructor(private readonly pool: PgPool) {}

  adapter(model: string): Adapter {
    return new ModelAdapter(this, model);
  }

  private async one<R extends object>(name: string, text: string, values: unknown[]): Promise<R | undefined> {
    return (await this.pool.query<R>({ name, text, values })).rows[0];
  }

  private async run(name: string, text: string, values: unknown[]): Promise<number> {
    return (await this.pool.query({ name, text, values })).rowCount ?? 0;
  }

  async upsert(model: string, id: string, payload: AdapterPayload, expiresInSeconds?: number): Promise<void> {
    const r = rowOf(model, id, payload, expiresInSeconds);
    await this.run(
      'oauth-upsert',
      `INSERT INTO oauth_store (model, id_hash, payload, grant_id, uid, user_code, expires_at, consumed_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, NULL)
       ON CONFLICT (model, id_hash) DO UPDATE SET payload = excluded.payload, grant_id = excluded.grant_id,
         uid = excluded.uid, user_code = excluded.user_code, expires_at = excluded.expires_at`,
      [model, sha256Hex(id), r.payload, r.grantId, r.uid, r.userCode, r.expiresAt],
    );
  }

  async find(model: string, id: string): Promise<AdapterPayload | undefined> {
    const row = await this.one<StoredRow>(
      'oauth-find',
      'SELECT payload, expires_at, consumed_at FROM oauth_store WHERE model = $1 AND id_hash = $2',
      [model, sha256Hex(id)],
    );
    return withJti(model, id, live(row));
  }

  async findByUid(model: string, uid: string): Promise<AdapterPayload | undefined> {
    return live(
      await this.one<StoredRow>(
        'oauth-find-uid',
        'SELECT payload, expires_at, consumed_at FROM oauth_store WHERE model = $1 AND uid = $2',
        [model, uid],
      ),
    );
  }

  async findByUserCode(model: string, userCode: string): Promise<AdapterPayload | undefined> {
    return live(
      await this.one<StoredRow>(
        'oauth-find-user-code',
        'SELECT payload, expires_at, consumed_at FROM oauth_store WHERE model = $1 AND user_code = $2',
        [model, userCode],
      ),
    );
  }

  async consume(model: string, id: string): Promise<void> {
    await this.run(
      'oauth-consume',
      'UPDATE oauth_store SET consumed_at = $1 WHERE model = $2 AND id_hash = $3',
      [Math.floor(Date.now() / 1000), model, sha256Hex(id)],
    );
  }

  async destroy(model: string, id: string): Promise<void> {
    await this.run('oauth-destroy', 'DELETE FROM oauth_store WHERE model = $1 AND id_hash = $2', [
      model,
      sha256Hex(id),
    ]);
  }

  async revokeByGrantId(model: string, grantId: string): Promise<void> {
    await this.run('oauth-revoke-grant', 'DELETE FROM oauth_store WHERE model = $1 AND grant_id = $2', [
      model,
      grantId,
    ]);
  }

  async dropGrant(grantId: string): Promise<void> {
    await this.run('oauth-drop-grant', 'DELETE FROM oauth_store WHERE grant_id = $1', [grantId]);
  }

  async grantsOf(accountId: string): Promise<StoredGrant[]> {
    const { rows } = await this.pool.query<{ grant_id: string; payload: string }>({
      name: 'oauth-grants-of',
      text: `SELECT grant_id, payload FROM oauth_store WHERE model = 'Grant' AND (payload::jsonb ->> 'accountId') = $1
               AND (expires_at IS NULL OR expires_at > $2)`,
      values: [accountId, Date.now()],
    });
    return rows.map((r) => ({ grantId: r.grant_id, payload: JSON.parse(r.payload) as AdapterPayload }));
  }

  async purgeExpired(now = Date.now()): Promise<number> {
    const n = await this.run(
      'oauth-purge',
      'DELETE FROM oauth_store WHERE expires_at IS NOT NULL AND expires_at <= $1',
      [now],
    );
    await this.run('oauth-purge-session-keys', 'DELETE FROM oauth_session_keys WHERE created_at <= $1', [
      now - SESSION_KEY_TTL_MS,
    ]);
    // A grant's key goes with the grant.
    await this.run(
      'oauth-purge-grant-keys',
      `DELETE FROM oauth_grant_keys k WHERE NOT EXISTS
         (SELECT 1 FROM oauth_store s WHERE s.model = 'Grant' AND s.grant_id = k.grant_id)`,
      [],
    );
    return n;
  }

  async sessionKey(sessionUid: string): Promise<string | null | undefined> {
    const row = await this.one<{ key_id: string | null }>(
      'oauth-session-key',
      'SELECT key_id FROM oauth_session_keys WHERE session_uid = $1',
      [sessionUid],
    );
    return row === undefined ? undefined : row.key_id;
  }

  async setSessionKey(sessionUid: string, keyId: string | null): Promise<void> {
    await this.run(
      'oauth-set-session-key',
      `INSERT INTO oauth_session_keys (session_uid, key_id, created_at) VALUES ($1, $2, $3)
       ON CONFLICT (session_uid) DO UPDATE SET key_id = excluded.key_id, created_at = excluded.created_at`,
      [sessionUid, keyId, Date.now()],
    );
  }

  async grantKey(grantId: string): Promise<string | undefined> {
    return (
      await this.one<{ key_id: string }>(
        'oauth-grant-key',
        'SELECT key_id FROM oauth_grant_keys WHERE grant_id = $1',
        [grantId],
      )
    )?.key_id;
  }

  async setGrantKey(grantId: string, keyId: string | null): Promise<void> {
    if (keyId === null) {
      await this.run('oauth-del-grant-key', 'DELETE FROM oauth_grant_keys WHERE grant_id = $1', [grantId]);
    } else {
      await this.run(
        'oauth-set-grant-key',
        `INSERT INTO oauth_grant_keys (grant_id, key_id) VALUES ($1, $2)
         ON CONFLICT (grant_id) DO UPDATE SET key_id = excluded.key_id`,
        [grantId, keyId],
      );
    }
  }

  async secret(name: string, generate: () => string): Promise<string> {
    const read = () =>
      this.one<{ value: string }>('oauth-secret', 'SELECT value FROM oauth_secrets WHERE name = $1', [name]);
    const found = await read();
    if (found) return found.value;
    // Replicas starting together may each generate one: the first insert wins, the others read it back.
    await this.run(
      'oauth-ins-secret',
      'INSERT INTO oauth_secrets (name, value, created_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING',
      [name, generate(), Date.now()],
    );
    return ((await read()) as { value: string }).value;
  }

  async dailyLimit(accountId: string, clientId: string): Promise<number | undefined> {
    const row = await this.one<{ daily_limit_micros: number | null }>(
      'oauth-limit',
      'SELECT daily_limit_micros FROM oauth_client_limits WHERE account_id = $1 AND client_id = $2',
      [accountId, clientId],
    );
    return row?.daily_limit_micros ?? undefined;
  }

  async setDailyLimit(accountId: string, clientId: string, micros: number | undefined): Promise<void> {
    await this.run(
      'oauth-set-limit',
      `INSERT INTO oauth_client_limits (account_id, client_id, daily_limit_micros, updated_at) VALUES ($1, $2, $3, $4)
       ON CONFLICT (account_id, client_id) DO UPDATE SET daily_limit_micros = excluded.daily_limit_micros,
         updated_at = excluded.updated_at`,
      [accountId, clientId, micros ?? null, Date.now()],
    );
  }

  async accountForIdentity(issuer: string, subject: string): Promise<string | undefined> {
    return (
      await this.one<{ account_id: string }>(
        'oauth-identity',
        'SELECT account_id FROM oauth_identities WHERE issuer = $1 AND subject = $2',
        [issuer, subject],
      )
    )?.account_id;
  }

  async linkIdentity(issuer: string, subject: string, accountId: string): Promise<boolean> {
    const n = await this.run(
      'oauth-link-identity',
      `INSERT INTO oauth_identities (issuer, subject, account_id, created_at) VALUES ($1, $2, $3, $4)
       ON CONFLICT (issuer, subject) DO NOTHING`,
      [issuer, subject, accountId, Date.now()],
    );
    return n === 1;
  }
}
