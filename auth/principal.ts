// Who is calling and who pays. Doors resolve a Principal from the request; src/run decides what it may do.

export type Principal =
  | { kind: 'api_key'; accountId: string; keyId: string }
  | {
      kind: 'oauth';
      accountId: string;
      clientId: string;
      scopes: readonly string[];
      /** Per-client daily spend limit chosen at consent, micro-USD (undefined: no limit beyond the balance). */
      dailyLimitMicros?: number;
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
