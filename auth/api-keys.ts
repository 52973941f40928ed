import { randomBytes } from 'node:crypto';
import type { ApiKeyRow, LedgerRecords } from '../src/ledger/types.js';
import { sha256Hex } from '../src/lib/hash.js';
import type { Principal } from './principal.js';

// API keys are `tg_sk_` + 32 random bytes (base64url). Only the SHA-256 of a key is stored: keys are
// high-entropy, so a fast hash is enough (no password-style stretching needed), and a stolen database holds no
// usable key.

export const API_KEY_PREFIX = 'tg_sk_';
const KEY_PATTERN = /^tg_sk_[A-Za-z0-9_-]{43}$/;

export function generateApiKey(): { key: string; hash: string; prefix: string } {
  const key = API_KEY_PREFIX + randomBytes(32).toString('base64url');
  return { key, hash: hashApiKey(key), prefix: `${key.slice(0, 10)}…` };
}

export function hashApiKey(key: string): string {
  return sha256Hex(key);
}

export function looksLikeApiKey(token: string): boolean {
  return KEY_PATTERN.test(token);
}

export async function createApiKey(
  ledger: LedgerRecords,
  accountId: string,
  name?: string | null,
): Promise<{ key: string; row: ApiKeyRow }> {
  const { key, hash, prefix } = generateApiKey();
  const row = await ledger.insertApiKey({ accountId, hash, prefix, name: name ?? null });
  return { key, row };
}

export type KeyCheck =
  | { ok: true; principal: Principal & { kind: 'api_key' } }
  | { ok: false; reason: string };

/** Checks a presented key against the ledger; revocation takes effect on the next call (no cache). */
export async function verifyApiKey(ledger: LedgerRecords, token: string): Promise<KeyCheck> {
  if (!looksLikeApiKey(token)) return { ok: false, reason: 'malformed API key' };
  const row = await ledger.findApiKeyByHash(hashApiKey(token));
  if (!row) return { ok: false, reason: 'unknown API key' };
  if (row.revoked_at !== null) return { ok: false, reason: 'API key revoked' };
  return { ok: true, principal: { kind: 'api_key', accountId: row.account_id, keyId: row.id } };
}
