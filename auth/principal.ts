import type { KeyLimits } from '../src/ledger/types.js';

// Who is calling and who pays. Doors resolve a Principal from the request; src/run decides what it may do.

/**
 * What a credential may spend and call (src/run/spend-limits.ts applies them): an API key's limits, or an OAuth
 * app's daily limit chosen at consent (its other fields null). Absent: nothing beyond the balance.
 */
export type CallerLimits = KeyLimits;

export type Principal =
  | { kind: 'api_key'; accountId: string; keyId: string; limits?: CallerLimits | undefined }
  | {
      kind: 'oauth';
      accountId: string;
      clientId: string;
      scopes: readonly string[];
      /** The app's daily spend limit chosen at consent (`daily_limit_micros`); undefined: none. */
      limits?: CallerLimits | undefined;
    }
  | { kind: 'x402'; accountId: string; payer: string }
  | { kind: 'anonymous' };

export type AccountPrincipal = Exclude<Principal, { kind: 'anonymous' }>;

export function principalRef(p: AccountPrincipal): string {
  switch (p.kind) {
    case 'api_key':
      return p.keyId;
    case 'oauth':
      return `oauth:${p.clientId}`;
    case 'x402':
      return `x402:${p.payer}`;
  }
}

export const ANONYMOUS: Principal = { kind: 'anonymous' };
