import { GatewayError } from '../src/errors.js';
import type { LedgerRecords } from '../src/ledger/types.js';
import { looksLikeApiKey, verifyApiKey } from './api-keys.js';
import { bearerToken } from './bearer.js';
import { ANONYMOUS, type Principal } from './principal.js';

/** Verifies bearer tokens that are not API keys (OAuth access tokens); added by the OAuth module. */
export interface TokenVerifier {
  verify(token: string): Promise<Principal | undefined>;
}

export interface Authenticator {
  /** The caller of a request: anonymous without credentials; a GatewayError (401) for bad ones. */
  fromAuthorization(header: string | undefined): Promise<Principal>;
}

export function createAuthenticator(ledger: LedgerRecords, others: TokenVerifier[] = []): Authenticator {
  return {
    async fromAuthorization(header) {
      if (header === undefined || header === '') return ANONYMOUS;
      const token = bearerToken(header);
      if (!token) {
        throw new GatewayError(
          'unauthorized',
          'Send credentials as "Authorization: Bearer <API key or token>".',
        );
      }
      if (looksLikeApiKey(token)) {
        const r = await verifyApiKey(ledger, token);
        if (r.ok) return r.principal;
        throw new GatewayError('unauthorized', `The API key was refused: ${r.reason}.`);
      }
      for (const v of others) {
        const p = await v.verify(token);
        if (p) return p;
      }
      throw new GatewayError('unauthorized', 'The bearer token is not a valid API key or access token.');
    },
  };
}
