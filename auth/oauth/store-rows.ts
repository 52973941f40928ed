import type { Adapter, AdapterPayload } from 'oidc-provider';
import type { OAuthStore } from './store.js';

// What both OAuth store implementations share: how a model's payload is stored and read back.

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

/** A row as both backends store it (times: ms since the epoch; consumed_at: seconds, as the library uses). */
export interface StoredRow {
  payload: string;
  expires_at: number | null;
  consumed_at: number | null;
}

/** The columns of an upsert: the payload without bearer values, and the keys it is looked up by. */
export function rowOf(model: string, id: string, payload: AdapterPayload, expiresInSeconds?: number) {
  const stored: AdapterPayload = { ...payload };
  if (BEARER_MODELS.has(model)) delete stored.jti;
  return {
    payload: JSON.stringify(stored),
    // A grant's own row carries its id here too, so rows keyed by grant can be matched to live grants.
    grantId: payload.grantId ?? (model === 'Grant' ? id : null),
    uid: payload.uid ?? null,
    userCode: payload.userCode ?? null,
    expiresAt: expiresInSeconds === undefined ? null : Date.now() + expiresInSeconds * 1000,
  };
}

/** The payload of a row that has not expired, with `consumed` as the library expects it. */
export function live(row: StoredRow | undefined): AdapterPayload | undefined {
  if (!row) return undefined;
  if (row.expires_at !== null && row.expires_at <= Date.now()) return undefined;
  const payload = JSON.parse(row.payload) as AdapterPayload;
  if (row.consumed_at !== null) payload.consumed = row.consumed_at;
  return payload;
}

/** A found payload of `model` looked up by its id: a bearer model gets its `jti` (the id) back. */
export function withJti(model: string, id: string, payload: AdapterPayload | undefined) {
  if (payload && BEARER_MODELS.has(model)) payload.jti = id;
  return payload;
}

/** Sessions last a day; the record of how one signed in is kept two. */
export const SESSION_KEY_TTL_MS = 2 * 86_400_000;

export class ModelAdapter implements Adapter {
  constructor(
    private readonly store: OAuthStore,
    private readonly model: string,
  ) {}

  upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
    return this.store.upsert(this.model, id, payload, expiresIn);
  }
  find(id: string): Promise<AdapterPayload | undefined> {
    return this.store.find(this.model, id);
  }
  findByUid(uid: string): Promise<AdapterPayload | undefined> {
    return this.store.findByUid(this.model, uid);
  }
  findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
    return this.store.findByUserCode(this.model, userCode);
  }
  consume(id: string): Promise<void> {
    return this.store.consume(this.model, id);
  }
  destroy(id: string): Promise<void> {
    return this.store.destroy(this.model, id);
  }
  revokeByGrantId(grantId: string): Promise<void> {
    return this.store.revokeByGrantId(this.model, grantId);
  }
}
