import type { Adapter, AdapterPayload } from 'oidc-provider';
import type { StateDb } from '../../src/backend.js';
import { excluded } from '../../src/db/open.js';
import { pick, prepare } from '../../src/db/prepared.js';
import type { Database, OAuthStoreTable, StoreDb } from '../../src/db/schema.js';
import { getOrCreate } from '../../src/db/secrets.js';
import { sha256Hex } from '../../src/lib/hash.js';
import { BEARER_MODELS, live } from './payloads.js';

// The authorization server's state in the gateway's own database, so a restart logs nobody out and several
// replicas on one PostgreSQL honour each other's tokens: oidc-provider's models (clients, grants, sessions,
// interactions, codes, tokens) through one Adapter, plus our own small tables (signing keys and secrets,
// per-client daily limits, federated identities). Written once over the store layer (src/db); the token check
// of every OAuth call reads it, so its statements are compiled once. The library reads the wall clock for
// expiry, so the store does too. Each method is one autocommit statement (or a read after an idempotent insert).

/** A grant's stored row, for the operator's and the dashboard's view of connected apps (grants.ts). */
export interface StoredGrant {
  grantId: string;
  payload: AdapterPayload;
}

export interface OAuthStore {
  /** An oidc-provider Adapter for one model (the library instantiates one per model name). */
  adapter(model: string): Adapter;
  upsert(model: string, id: string, payload: AdapterPayload, expiresInSeconds?: number): Promise<void>;
  find(model: string, id: string): Promise<AdapterPayload | undefined>;
  destroy(model: string, id: string): Promise<void>;
  /** Deletes every row (of any model) under a grant: the grant and its tokens. */
  dropGrant(grantId: string): Promise<void>;
  /** The live grants an account gave (any client). */
  grantsOf(accountId: string): Promise<StoredGrant[]>;
  /** Deletes everything past its expiry; returns how many rows went. */
  purgeExpired(now?: number): Promise<number>;
  /** How a session signed in: the API key's id, null for an upstream sign-in, undefined when unknown. */
  sessionKey(sessionUid: string): Promise<string | null | undefined>;
  setSessionKey(sessionUid: string, keyId: string | null): Promise<void>;
  /** The API key a grant was signed in with (undefined: an upstream sign-in). */
  grantKey(grantId: string): Promise<string | undefined>;
  setGrantKey(grantId: string, keyId: string | null): Promise<void>;
  /**
   * A secret generated once and kept: the first writer wins (across replicas too), every caller reads the one
   * stored value back.
   */
  secret(name: string, generate: () => string): Promise<string>;
  /** The daily limit chosen for a client at consent, micro-USD; undefined when none was set. */
  dailyLimit(accountId: string, clientId: string): Promise<number | undefined>;
  setDailyLimit(accountId: string, clientId: string, micros: number | undefined): Promise<void>;
  accountForIdentity(issuer: string, subject: string): Promise<string | undefined>;
  /** Links an upstream identity to an account; false when it was linked meanwhile (the caller re-reads). */
  linkIdentity(issuer: string, subject: string, accountId: string): Promise<boolean>;
  /**
   * Forgets the upstream identities linked to an account (its first owner was removed from it): signing in
   * with one again makes an account of its own. Returns how many were linked.
   */
  unlinkIdentities(accountId: string): Promise<number>;
}

/** The OAuth store of this state (SQLite or PostgreSQL alike). */
export function openOAuthStore(state: StateDb): OAuthStore {
  return new SqlOAuthStore(state.stores);
}

/** Sessions last a day; the record of how one signed in is kept two. */
const SESSION_KEY_TTL_MS = 2 * 86_400_000;

type SessionKey = Database['oauth_session_keys'];

type By = { model: string; key: string };

/** What an upsert replaces. */
const UPSERTED = ['payload', 'grant_id', 'uid', 'user_code', 'account_id', 'expires_at'] as const;

function statements(db: StoreDb) {
  const from = db.selectFrom('oauth_store').select(['payload', 'expires_at', 'consumed_at']);
  return {
    find: prepare(db, (p: By) => from.where('model', '=', p.model).where('id_hash', '=', p.key)),
    findByUid: prepare(db, (p: By) => from.where('model', '=', p.model).where('uid', '=', p.key)),
    findByUserCode: prepare(db, (p: By) => from.where('model', '=', p.model).where('user_code', '=', p.key)),
    grantKey: prepare(db, (p: { id: string }) =>
      db.selectFrom('oauth_grant_keys').select('key_id').where('grant_id', '=', p.id),
    ),
    dailyLimit: prepare(db, (p: { account: string; client: string }) =>
      db
        .selectFrom('oauth_client_limits')
        .select('daily_limit_micros')
        .where('account_id', '=', p.account)
        .where('client_id', '=', p.client),
    ),
    upsert: prepare(db, (p: OAuthStoreTable) =>
      db
        .insertInto('oauth_store')
        .values({ ...pick(p, ['model', 'id_hash', ...UPSERTED]), consumed_at: null })
        .onConflict((oc) =>
          oc.columns(['model', 'id_hash']).doUpdateSet(excluded<OAuthStoreTable>(...UPSERTED)),
        ),
    ),
  };
}

class SqlOAuthStore implements OAuthStore {
  private readonly q: ReturnType<typeof statements>;

  constructor(private readonly db: StoreDb) {
    this.q = statements(db);
  }

  adapter(model: string): Adapter {
    return {
      upsert: (id, payload, expiresIn) => this.upsert(model, id, payload, expiresIn),
      find: (id) => this.find(model, id),
      findByUid: async (uid) => live(await this.q.findByUid.first({ model, key: uid })),
      findByUserCode: async (userCode) => live(await this.q.findByUserCode.first({ model, key: userCode })),
      consume: async (id) => {
        const at = Math.floor(Date.now() / 1000);
        await this.byId(model, id, this.db.updateTable('oauth_store').set({ consumed_at: at })).execute();
      },
      destroy: (id) => this.destroy(model, id),
      revokeByGrantId: async (grantId) => {
        await this.db
          .deleteFrom('oauth_store')
          .where('model', '=', model)
          .where('grant_id', '=', grantId)
          .execute();
      },
    };
  }

  async upsert(model: string, id: string, payload: AdapterPayload, expiresInSeconds?: number): Promise<void> {
    const stored: AdapterPayload = { ...payload };
    if (BEARER_MODELS.has(model)) delete stored.jti;
    await this.q.upsert.run({
      model,
      id_hash: sha256Hex(id),
      payload: JSON.stringify(stored),
      // A grant's own row carries its id here too, so rows keyed by grant can be matched to live grants.
      grant_id: payload.grantId ?? (model === 'Grant' ? id : null),
      uid: payload.uid ?? null,
      user_code: payload.userCode ?? null,
      account_id: model === 'Grant' ? (payload.accountId ?? null) : null,
      expires_at: expiresInSeconds === undefined ? null : Date.now() + expiresInSeconds * 1000,
      consumed_at: null,
    });
  }

  async find(model: string, id: string): Promise<AdapterPayload | undefined> {
    const payload = live(await this.q.find.first({ model, key: sha256Hex(id) }));
    if (payload && BEARER_MODELS.has(model)) payload.jti = id;
    return payload;
  }

  async destroy(model: string, id: string): Promise<void> {
    await this.byId(model, id, this.db.deleteFrom('oauth_store')).execute();
  }

  /** One model's row by its id (stored hashed). */
  private byId<Q extends { where(c: 'model' | 'id_hash', op: '=', v: string): Q }>(
    model: string,
    id: string,
    q: Q,
  ) {
    return q.where('model', '=', model).where('id_hash', '=', sha256Hex(id));
  }

  async dropGrant(grantId: string): Promise<void> {
    await this.db.deleteFrom('oauth_store').where('grant_id', '=', grantId).execute();
  }

  async grantsOf(accountId: string): Promise<StoredGrant[]> {
    const rows = await this.db
      .selectFrom('oauth_store')
      .select(['grant_id', 'payload'])
      .where('model', '=', 'Grant')
      .where('account_id', '=', accountId)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', Date.now())]))
      .execute();
    return rows.map((r) => ({
      grantId: r.grant_id as string,
      payload: JSON.parse(r.payload) as AdapterPayload,
    }));
  }

  async purgeExpired(now = Date.now()): Promise<number> {
    const r = await this.db.deleteFrom('oauth_store').where('expires_at', '<=', now).executeTakeFirst();
    await this.db
      .deleteFrom('oauth_session_keys')
      .where('created_at', '<=', now - SESSION_KEY_TTL_MS)
      .execute();
    // A grant's key goes with the grant.
    const grants = this.db
      .selectFrom('oauth_store')
      .select('grant_id')
      .where('model', '=', 'Grant')
      .where('grant_id', 'is not', null);
    await this.db.deleteFrom('oauth_grant_keys').where('grant_id', 'not in', grants).execute();
    return Number(r.numDeletedRows);
  }

  async sessionKey(sessionUid: string): Promise<string | null | undefined> {
    const row = await this.db
      .selectFrom('oauth_session_keys')
      .select('key_id')
      .where('session_uid', '=', sessionUid)
      .executeTakeFirst();
    return row === undefined ? undefined : row.key_id;
  }

  async setSessionKey(sessionUid: string, keyId: string | null): Promise<void> {
    await this.db
      .insertInto('oauth_session_keys')
      .values({ session_uid: sessionUid, key_id: keyId, created_at: Date.now() })
      .onConflict((oc) => oc.column('session_uid').doUpdateSet(excluded<SessionKey>('key_id', 'created_at')))
      .execute();
  }

  async grantKey(grantId: string): Promise<string | undefined> {
    return (await this.q.grantKey.first({ id: grantId }))?.key_id;
  }

  async setGrantKey(grantId: string, keyId: string | null): Promise<void> {
    if (keyId === null) {
      await this.db.deleteFrom('oauth_grant_keys').where('grant_id', '=', grantId).execute();
      return;
    }
    await this.db
      .insertInto('oauth_grant_keys')
      .values({ grant_id: grantId, key_id: keyId })
      .onConflict((oc) => oc.column('grant_id').doUpdateSet({ key_id: keyId }))
      .execute();
  }

  secret(name: string, generate: () => string): Promise<string> {
    return getOrCreate(this.db, 'oauth_secrets', name, generate);
  }

  async dailyLimit(accountId: string, clientId: string): Promise<number | undefined> {
    const row = await this.q.dailyLimit.first({ account: accountId, client: clientId });
    return row?.daily_limit_micros ?? undefined;
  }

  async setDailyLimit(accountId: string, clientId: string, micros: number | undefined): Promise<void> {
    const row = {
      account_id: accountId,
      client_id: clientId,
      daily_limit_micros: micros ?? null,
      updated_at: Date.now(),
    };
    await this.db
      .insertInto('oauth_client_limits')
      .values(row)
      .onConflict((oc) => oc.columns(['account_id', 'client_id']).doUpdateSet(row))
      .execute();
  }

  async accountForIdentity(issuer: string, subject: string): Promise<string | undefined> {
    const row = await this.db
      .selectFrom('oauth_identities')
      .select('account_id')
      .where('issuer', '=', issuer)
      .where('subject', '=', subject)
      .executeTakeFirst();
    return row?.account_id;
  }

  async linkIdentity(issuer: string, subject: string, accountId: string): Promise<boolean> {
    const r = await this.db
      .insertInto('oauth_identities')
      .values({ issuer, subject, account_id: accountId, created_at: Date.now() })
      .onConflict((oc) => oc.columns(['issuer', 'subject']).doNothing())
      .executeTakeFirst();
    return Number(r.numInsertedOrUpdatedRows ?? 0) === 1;
  }

  async unlinkIdentities(accountId: string): Promise<number> {
    const r = await this.db
      .deleteFrom('oauth_identities')
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    return Number(r.numDeletedRows);
  }
}
