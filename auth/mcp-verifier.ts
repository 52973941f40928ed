import {
  type AuthInfo,
  OAuthError,
  OAuthErrorCode,
  type OAuthTokenVerifier,
} from '@modelcontextprotocol/server';
import { isGatewayError } from '../src/errors.js';
import type { Authenticator } from './authenticator.js';
import type { Principal } from './principal.js';

// The MCP door's bearer check, as the SDK's OAuthTokenVerifier so that `requireBearerAuth` answers 401 with the
// RFC 9728 challenge. It sits on the one Authenticator: API keys today; OAuth access tokens join by being added
// to the Authenticator's verifiers, not here, so every door accepts the same credentials.

/** AuthInfo.extra key holding the resolved Principal, so tool callbacks need no second lookup. */
export const PRINCIPAL_EXTRA_KEY = 'principal';

/**
 * API keys do not expire, but the SDK refuses an AuthInfo without `expiresAt`. Every HTTP request is verified
 * afresh (revocation is immediate), so this only has to outlive one request.
 */
const API_KEY_WINDOW_SECONDS = 300;

export interface McpVerifierOptions {
  /** The MCP endpoint's URL (RFC 8707 resource), read per call because the public URL is known late in tests. */
  resource: () => URL;
  /**
   * Scopes carried by credentials that cover everything (API keys, docs/spec.md §5; x402), so the door's required
   * scopes never refuse them. OAuth tokens carry what was granted.
   */
  keyScopes?: readonly string[];
}

export function createMcpTokenVerifier(auth: Authenticator, opts: McpVerifierOptions): OAuthTokenVerifier {
  return {
    async verifyAccessToken(token: string): Promise<AuthInfo> {
      let principal: Principal;
      try {
        principal = await auth.fromAuthorization(`Bearer ${token}`);
      } catch (e) {
        // Our refusals become 401 invalid_token with our message; anything else is never a misleading "bad
        // token": a database that does not answer is the door's 503 (src/mcp/sdk-door.ts), a bug a 500.
        if (isGatewayError(e) && e.code === 'unauthorized') {
          throw new OAuthError(OAuthErrorCode.InvalidToken, e.message);
        }
        throw e;
      }
      if (principal.kind === 'anonymous') {
        throw new OAuthError(OAuthErrorCode.InvalidToken, 'A bearer token is required.');
      }
      return {
        token,
        clientId: clientIdOf(principal),
        scopes: principal.kind === 'oauth' ? [...principal.scopes] : [...(opts.keyScopes ?? [])],
        expiresAt: expiresAtOf(principal),
        resource: opts.resource(),
        extra: { [PRINCIPAL_EXTRA_KEY]: principal },
      };
    },
  };
}

/** The Principal a verified request carries, or undefined when the request was not authenticated. */
export function principalFromAuthInfo(info: AuthInfo | undefined): Principal | undefined {
  const p = info?.extra?.[PRINCIPAL_EXTRA_KEY] as Principal | undefined;
  return p && typeof p === 'object' && typeof p.kind === 'string' ? p : undefined;
}

function clientIdOf(p: Exclude<Principal, { kind: 'anonymous' }>): string {
  switch (p.kind) {
    case 'api_key':
      return `key:${p.keyId}`;
    case 'oauth':
      return p.clientId;
    case 'x402':
      return `x402:${p.payer}`;
  }
}

/**
 * A token's own expiry when its principal carries one (OAuth access tokens: the `exp` claim, in seconds);
 * otherwise a short rolling window. The SDK compares it with the wall clock, so this reads the wall clock too.
 */
function expiresAtOf(p: Principal): number {
  const own = (p as { expiresAt?: unknown }).expiresAt;
  if (typeof own === 'number' && Number.isFinite(own)) return own;
  return Math.floor(Date.now() / 1000) + API_KEY_WINDOW_SECONDS;
}
