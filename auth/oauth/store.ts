import type { Adapter, AdapterPayload } from 'oidc-provider';
import type { StateDb } from '../../src/backend.js';
import { PgOAuthStore } from './store-pg.js';
import { SqliteOAuthStore } from './store-sqlite.js';

// The authorization server's state in the gateway's own database, so a restart logs nobody out and several
// replicas on one PostgreSQL honour each other's tokens: oidc-provider's models (clients, grants, sessions,
// interactions, codes, tokens) through one Adapter, plus our own small tables (signing keys and secrets,
// per-client daily limits, federated identities). One interface, a SQLite and a PostgreSQL implementation.
// The library reads the wall clock for expiry, so the stores do too.

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
  findByUid(model: string, uid: string): Promise<AdapterPayload | undefined>;
  findByUserCode(model: string, userCode: string): Promise<AdapterPayload | undefined>;
  consume(model: string, id: string): Promise<void>;
  destroy(model: string, id: string): Promise<void>;
  revokeByGrantId(model: string, grantId: string): Promise<void>;
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
}

/** The OAuth store of this state: the SQLite database's or the shared PostgreSQL one's. */
export function openOAuthStore(state: StateDb): OAuthStore {
  return state.kind === 'sqlite' ? new SqliteOAuthStore(state.db) : new PgOAuthStore(state.pool);
}
