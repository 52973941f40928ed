import type { AdapterPayload } from 'oidc-provider';

// How the OAuth store keeps a model's payload (auth/oauth/store.ts): what it drops before storing, and how a row
// becomes the payload oidc-provider expects.

/**
 * Models whose stored payload drops `jti`: it is the bearer value itself (access and refresh tokens, codes), so a
 * copy of the database holds none. They are only ever looked up by that value, which restores it. Sessions and
 * interactions keep theirs: the library also finds them by uid, where no value is at hand.
 */
export const BEARER_MODELS = new Set([
  'AccessToken',
  'RefreshToken',
  'AuthorizationCode',
  'ClientCredentials',
  'RegistrationAccessToken',
  'InitialAccessToken',
]);

/** The columns a payload is read back from. */
export interface StoredRow {
  payload: string;
  expires_at: number | null;
  consumed_at: number | null;
}

/** The payload of a row that has not expired, with `consumed` as the library expects it. */
export function live(row: StoredRow | undefined): AdapterPayload | undefined {
  if (!row) return undefined;
  if (row.expires_at !== null && row.expires_at <= Date.now()) return undefined;
  const payload = JSON.parse(row.payload) as AdapterPayload;
  if (row.consumed_at !== null) payload.consumed = row.consumed_at;
  return payload;
}
