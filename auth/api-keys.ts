import { randomBytes } from 'node:crypto';
import type { ApiKeyRow, KeyLimits, LedgerRecords } from '../src/ledger/types.js';
import { sha256Hex } from '../src/lib/hash.js';
import type { Principal } from './principal.js';

// API keys are `tg_sk_` + 32 random bytes (base64url). Only the SHA-256 of a key is stored: keys are
// high-entropy, so a fast hash is enough (no password-style stretching needed), and a stolen database holds no
// usable key.

export const API_KEY_PREFIX = 'tg_sk_';
const KEY_PATTERN = /^tg_sk_[A-Za-z0-9_-]{43}$/;

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
  limits?: Partial<KeyLimits>,
): Promise<{ key: string; row: ApiKeyRow }> {
  const key = API_KEY_PREFIX + randomBytes(32).toString('base64url');
  const hash = hashApiKey(key);
  const prefix = `${key.slice(0, 10)}…`;
  const row = await ledger.insertApiKey({ accountId, hash, prefix, name: name ?? null, limits });
  return { key, row };
}

/** Whether a key carries any limit (an unrestricted key is the account holder's: it may sign in and manage keys). */
export function hasLimits(l: KeyLimits): boolean {
  return (
    l.max_call_micros !== null ||
    l.daily_limit_micros !== null ||
    l.monthly_limit_micros !== null ||
    l.actions !== null
  );
}

export type KeyCheck = { ok: true; principal: KeyPrincipal } | { ok: false; reason: string };

/**
 * Checks a presented key against the ledger, whose key cache bounds how late a revocation or a limit change is
 * seen (docs/decisions.md "API keys are cached"). The principal carries the key's limits when it has any (the
 * cached row itself: nothing is copied per call).
 */
export async function verifyApiKey(ledger: LedgerRecords, token: string): Promise<KeyCheck> {
  if (!looksLikeApiKey(token)) return { ok: false, reason: 'malformed API key' };
  const row = await ledger.findApiKeyByHash(hashApiKey(token));
  if (!row) return { ok: false, reason: 'unknown API key' };
  if (row.revoked_at !== null) return { ok: false, reason: 'API key revoked' };
  const principal: KeyPrincipal = { kind: 'api_key', accountId: row.account_id, keyId: row.id };
  if (hasLimits(row)) principal.limits = row;
  return { ok: true, principal };
}

type KeyPrincipal = Principal & { kind: 'api_key' };
