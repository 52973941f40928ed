import type Provider from 'oidc-provider';
import { GatewayError } from '../../src/errors.js';
import { type LedgerRecords, NO_KEY_LIMITS } from '../../src/ledger/types.js';
import type { TokenVerifier } from '../authenticator.js';
import type { Principal } from '../principal.js';
import type { OAuthStore } from './store.js';

// The resource server's check of our access tokens. They are opaque (256 random bits), so each one is looked
// up where the authorization server stored it: a revoked or expired token fails on the very next request, and
// the audience, the grant behind the token and the daily limit chosen at consent are read fresh every time.

/** The shape of our opaque tokens; anything else is not ours and is left to the other verifiers. */
const OPAQUE_TOKEN = /^[A-Za-z0-9_-]{43}$/;

export type OAuthPrincipal = Extract<Principal, { kind: 'oauth' }> & {
  /** The token's `exp` (seconds since the epoch); the MCP door hands it to the SDK as AuthInfo.expiresAt. */
  expiresAt: number;
};

export interface VerifierDeps {
  /** The library instance, once its secrets are loaded. */
  provider: () => Promise<Provider>;
  store: OAuthStore;
  ledger: LedgerRecords;
  /** The one audience accepted: the /mcp URL. */
  resource: () => string;
}

export function createOAuthTokenVerifier(d: VerifierDeps): TokenVerifier {
  const refuse = (why: string) =>
    new GatewayError('unauthorized', `The access token was refused: ${why}. Sign in again to get a new one.`);
  return {
    async verify(token: string): Promise<OAuthPrincipal | undefined> {
      if (!OPAQUE_TOKEN.test(token)) return undefined;
      const provider = await d.provider();
      const at = await provider.AccessToken.find(token);
      if (!at?.accountId || !at.clientId) throw refuse('unknown, expired or revoked');
      const exp = at.exp;
      if (exp === undefined || !(exp > Date.now() / 1000)) throw refuse('expired');
      // RFC 8707: a token is good only for the resource it was issued for.
      if (at.aud !== d.resource()) throw refuse('it was issued for another resource');
      const grant = await provider.Grant.find(at.grantId);
      if (!grant || grant.clientId !== at.clientId || grant.accountId !== at.accountId) {
        throw refuse('its authorization was withdrawn');
      }
      // Signed in with an API key: the grant lives only as long as that key.
      const keyId = await d.store.grantKey(at.grantId);
      if (keyId !== undefined) {
        const keys = await d.ledger.listApiKeys(at.accountId);
        if (!keys.some((k) => k.id === keyId && k.revoked_at === null)) {
          throw refuse('the API key it was signed in with was revoked');
        }
      }
      // The app's daily limit, as the limits every credential carries (src/run/spend-limits.ts applies them).
      const daily = await d.store.dailyLimit(at.accountId, at.clientId);
      return {
        kind: 'oauth',
        accountId: at.accountId,
        clientId: at.clientId,
        scopes: [...at.scopes],
        limits: daily === undefined ? undefined : { ...NO_KEY_LIMITS, daily_limit_micros: daily },
        expiresAt: exp,
      };
    },
  };
}
