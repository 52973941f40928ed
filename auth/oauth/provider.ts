import type { Configuration, KoaContextWithOIDC, default as Provider } from 'oidc-provider';
import type { Logger } from 'pino';
import type { LedgerRecords } from '../../src/ledger/types.js';
import { type CimdPolicy, cimdConfiguration, publicUnlessStated } from './cimd.js';
import type { OAuthSecrets } from './keys.js';
import { guarded, guardedAdapter, RETRY_AFTER, TEMPORARILY_UNAVAILABLE } from './outage.js';
import { errorHtml, PAGE_HEADERS } from './pages.js';
import { MCP_SCOPE, OAUTH_SCOPES } from './scopes.js';
import type { OAuthStore } from './store.js';

// The oidc-provider configuration: OAuth 2.1 for MCP hosts. Authorization code with PKCE (S256, required of every
// client), dynamic registration and client ID metadata documents, the /mcp URL as the one resource (RFC 8707),
// `iss` in the authorization response (RFC 9207, the library's default), rotating refresh tokens, revocation,
// short-lived opaque access tokens (revocation takes effect at once: the resource server looks each one up).

/** Every endpoint of the library lives under /oauth; discovery stays at the root well-known paths. */
export const AS_ROUTES = {
  authorization: '/oauth/authorize',
  token: '/oauth/token',
  registration: '/oauth/register',
  revocation: '/oauth/revoke',
  jwks: '/oauth/jwks',
  end_session: '/oauth/session/end',
  userinfo: '/oauth/userinfo',
  introspection: '/oauth/introspect',
} as const;

export const INTERACTION_PATH = '/oauth/interaction';

/** The absolute lifetime of a grant: refresh tokens stop working after it and the user signs in again. */
const GRANT_TTL_SECONDS = 365 * 86_400;
/** A browser's sign-in at the authorization server lasts a day; tokens outlive it (hosts are not browsers). */
const SESSION_TTL_SECONDS = 86_400;
const INTERACTION_TTL_SECONDS = 600;
const CODE_TTL_SECONDS = 60;

/** The library, imported on first use (its import costs ~0.3 s, which CLI commands need not pay). */
export type OidcLibrary = typeof import('oidc-provider');

export interface ProviderOptions {
  issuer: string;
  /** The protected resource (the /mcp URL): the only audience tokens are issued for. */
  resource: string;
  basePath: string;
  secure: boolean;
  store: OAuthStore;
  secrets: OAuthSecrets;
  ledger: LedgerRecords;
  log: Logger;
  accessTokenTtlSeconds: number;
  refreshTokenTtlSeconds: number;
  /** Client ID metadata documents: the guarded fetcher and the fetch budget (auth/oauth/cimd.ts). */
  cimd: CimdPolicy;
  /** Told of a failure that means the database does not answer (the gateway's health logs the outage once). */
  onDatabaseError?: ((e: unknown) => void) | undefined;
}

export function buildProvider(lib: OidcLibrary, o: ProviderOptions): Provider {
  const { errors } = lib;
  const cookie = { httpOnly: true, sameSite: 'lax' as const, secure: o.secure };
  const cimd = cimdConfiguration(o.cimd);
  const report = o.onDatabaseError;
  const configuration: Configuration = {
    // A store that does not answer is the library's 503, not its 500 (./outage.ts).
    adapter: (name: string) => guardedAdapter(o.store.adapter(name), report),
    clients: [],
    // Every document the library fetches (client metadata, a client's key set) goes through our SSRF guard.
    fetch: cimd.fetch,
    fetchResponseBodyLimits: cimd.fetchResponseBodyLimits,
    findAccount: guarded(async (_ctx: KoaContextWithOIDC, id: string) => {
      const account = await o.ledger.getAccount(id);
      if (account?.kind !== 'customer') return undefined;
      return { accountId: id, claims: () => ({ sub: id }) };
    }, report),
    scopes: [...OAUTH_SCOPES],
    responseTypes: ['code'],
    pkce: { required: () => true },
    // OAuth 2.1: the redirect URI is always sent and must equal a registered one.
    allowOmittingSingleRegisteredRedirectUri: false,
    extraClientMetadata: {
      properties: ['redirect_uris'],
      validator: (_ctx, key, value, metadata) => {
        checkRedirectUris(lib, key, value);
        if (key === 'redirect_uris') publicUnlessStated(metadata as Record<string, unknown>);
      },
    },
    // Browser-based public clients may call the token and revocation endpoints from their redirect URI's origin.
    clientBasedCORS: (_ctx, origin, client) =>
      client.clientAuthMethod === 'none' &&
      (client.redirectUris ?? []).some((u) => URL.parse(u)?.origin === origin),
    features: {
      devInteractions: { enabled: false },
      registration: { enabled: true, issueRegistrationAccessToken: false },
      // A client revokes only its own tokens; another's are ignored with the usual 200 (RFC 7009 §2.2).
      revocation: {
        enabled: true,
        allowedPolicy: (_ctx, client, token) => token.clientId === client.clientId,
      },
      introspection: { enabled: false },
      userinfo: { enabled: false },
      rpInitiatedLogout: { enabled: false },
      // An https client id is fetched as its own registration (auth/oauth/cimd.ts).
      clientIdMetadataDocument: cimd.feature,
      resourceIndicators: {
        enabled: true,
        defaultResource: () => o.resource,
        useGrantedResource: () => true,
        getResourceServerInfo(_ctx, indicator) {
          if (indicator !== o.resource) throw new errors.InvalidTarget(`only ${o.resource} is served here`);
          return {
            scope: MCP_SCOPE,
            audience: o.resource,
            accessTokenFormat: 'opaque',
            accessTokenTTL: o.accessTokenTtlSeconds,
          };
        },
      },
    },
    // Refresh tokens for every client that registered the grant (MCP hosts often omit offline_access), and
    // tokens never die with the browser session that created them.
    async issueRefreshToken(_ctx, client) {
      return client.grantTypeAllowed('refresh_token');
    },
    expiresWithSession: async () => false,
    rotateRefreshToken: true,
    interactions: { url: (_ctx, interaction) => `${o.basePath}${INTERACTION_PATH}/${interaction.uid}` },
    routes: AS_ROUTES,
    ttl: {
      AccessToken: o.accessTokenTtlSeconds,
      AuthorizationCode: CODE_TTL_SECONDS,
      RefreshToken: o.refreshTokenTtlSeconds,
      Grant: GRANT_TTL_SECONDS,
      Session: SESSION_TTL_SECONDS,
      Interaction: INTERACTION_TTL_SECONDS,
      IdToken: 3600,
    },
    cookies: {
      keys: o.secrets.cookieKeys,
      names: { session: 'tg_oauth_session', interaction: 'tg_oauth_interaction', resume: 'tg_oauth_resume' },
      long: cookie,
      short: cookie,
    },
    jwks: o.secrets.jwks,
    formats: { bitsOfOpaqueRandomness: 256 },
    async renderError(ctx: KoaContextWithOIDC, out) {
      ctx.set(PAGE_HEADERS);
      if (out.error === TEMPORARILY_UNAVAILABLE) ctx.set('Retry-After', RETRY_AFTER);
      ctx.type = 'html';
      ctx.body = errorHtml(out.error, out.error_description);
    },
  };

  const provider = new lib.default(o.issuer, configuration);
  // Behind a TLS-terminating proxy (https public URL, plain-http listener), trust its X-Forwarded-Proto so the
  // library sees the request as secure and sets its Secure cookies.
  provider.proxy = o.secure;
  // The JSON endpoints' 503 (./outage.ts) asks the client when to retry, as the pages do.
  provider.use(async (ctx, next) => {
    await next();
    if (ctx.status === 503) ctx.set('Retry-After', RETRY_AFTER);
  });
  exactRedirectUris(provider);
  // Only the error's code and description are logged: the context holds the request, tokens included.
  const events = provider as unknown as { on(event: string, fn: (ctx: unknown, err: Error) => void): void };
  events.on('server_error', (_ctx, err) =>
    o.log.error({ name: err.name, message: err.message, stack: err.stack }, 'oauth error'),
  );
  for (const event of [
    'authorization.error',
    'grant.error',
    'registration_create.error',
    'revocation.error',
  ]) {
    events.on(event, (_ctx, err) => {
      const { error, error_description } = err as { error?: string; error_description?: string };
      o.log.info({ event, error, description: error_description }, 'oauth request refused');
    });
  }
  return provider;
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

/**
 * Registration (and client ID metadata documents): a redirect URI is https, plain http only on a loopback
 * address (the MCP authorization spec's rule: an authorization code never travels in clear over a network), or
 * a native app's private-use scheme. The library's own checks still apply after this one.
 */
function checkRedirectUris(lib: OidcLibrary, key: string, value: unknown): void {
  if (key !== 'redirect_uris' || !Array.isArray(value)) return;
  for (const uri of value) {
    const u = typeof uri === 'string' ? URL.parse(uri) : null;
    if (u?.protocol === 'http:' && !LOOPBACK.has(u.hostname)) {
      throw new lib.errors.InvalidClientMetadata(
        'redirect_uris must be https, or http only on a loopback address',
      );
    }
  }
}

/**
 * Redirect URIs match exactly, loopback ports included. The library otherwise lets a native client's loopback
 * redirect use any port (RFC 8252 §7.3); MCP hosts register the exact URI they use, and the issue's rule is
 * exact matching, so the flexibility is switched off here (test: oauth:redirect-uri-exact).
 */
function exactRedirectUris(provider: Provider): void {
  const proto = provider.Client.prototype as unknown as {
    redirectUriAllowed(this: { redirectUris?: string[] }, value: string): boolean;
  };
  proto.redirectUriAllowed = function redirectUriAllowed(value: string): boolean {
    return (this.redirectUris ?? []).includes(value);
  };
}
