import type { Express, NextFunction, Request, Response } from 'express';
import type Provider from 'oidc-provider';
import type { Logger } from 'pino';
import type { StateDb } from '../../src/backend.js';
import type { OAuthConfig } from '../../src/config/index.js';
import type { LedgerRecords } from '../../src/ledger/types.js';
import type { TokenVerifier } from '../authenticator.js';
import type { MetadataGet } from './cimd.js';
import type { InteractionDeps, OtherSignIn } from './context.js';
import { FEDERATED_CALLBACK_PATH, FederatedLogin } from './federated.js';
import { federatedCallback, startFederated } from './federated-routes.js';
import { AttemptLimiter, Csrf, clientIp } from './guard.js';
import { interactionRoutes } from './interactions.js';
import { loadSecrets, type OAuthSecrets } from './keys.js';
import { AS_ROUTES, buildProvider, INTERACTION_PATH, type OidcLibrary } from './provider.js';
import { type OAuthStore, openOAuthStore } from './store.js';
import { createOAuthTokenVerifier } from './verifier.js';

// tollgate's OAuth 2.1 authorization server for MCP hosts, mounted in the gateway: the issuer is the public URL,
// discovery sits at the root well-known paths (where MCP clients look for an issuer without a path), the
// library's endpoints under /oauth, our sign-in and consent pages under /oauth/interaction. Its verifier lets
// /mcp accept the access tokens it issues.

export interface AuthorizationServerDeps {
  /** Where the OAuth state lives (SQLite, or the PostgreSQL every replica shares). */
  state: StateDb;
  ledger: LedgerRecords;
  log: Logger;
  /** Read on use: tests learn the public URL only once the server listens. */
  publicUrl: () => string;
  /** The protected resource's URL (the /mcp endpoint), the only audience of the tokens issued here. */
  resource: () => string;
  /** Browser origins besides loopback (TOLLGATE_ALLOWED_ORIGINS) that may register clients (CORS). */
  allowedOrigins: readonly string[];
  config: OAuthConfig;
  /** Runs once for each account an upstream sign-in creates. */
  onAccountCreated?: ((accountId: string) => Promise<void>) | undefined;
  /** The SSRF-guarded fetch of client ID metadata documents (src/upstreams/metadata-fetch.ts). */
  fetchClientMetadata: MetadataGet;
  /** Finishes upstream sign-ins started elsewhere (the account dashboard), through the same callback. */
  otherSignIn?: OtherSignIn | undefined;
  /** Told of a failure that means the database does not answer (the gateway's health logs the outage once). */
  onDatabaseError?: ((e: unknown) => void) | undefined;
}

export interface AuthorizationServer {
  mount(app: Express): void;
  /** Verifies this server's access tokens (for the MCP door's Authenticator). */
  verifier: TokenVerifier;
  /** The issuer identifier, for the protected-resource metadata's `authorization_servers`. */
  issuer(): string;
  /** The library instance for the current public URL (built on first use). */
  provider(): Provider;
  /**
   * Upstream sign-in for pages outside OAuth (the account dashboard); undefined without an upstream. `start`
   * sends the browser there (false when the upstream cannot be reached); `flow` must start with
   * OTHER_FLOW_PREFIX, and the verified result goes to `otherSignIn`.
   */
  upstreamSignIn: { name: string; start(res: Response, flow: string): Promise<boolean> } | undefined;
  store: OAuthStore;
  close(): void;
}

const DISCOVERY_PATHS = new Set([
  '/.well-known/oauth-authorization-server',
  '/.well-known/openid-configuration',
]);
const PURGE_INTERVAL_MS = 10 * 60_000;

/** Paths the library answers: discovery and /oauth/*, except our own pages and the upstream callback. */
function isProviderPath(path: string): boolean {
  if (DISCOVERY_PATHS.has(path)) return true;
  return (
    path.startsWith('/oauth/') &&
    !path.startsWith(`${INTERACTION_PATH}/`) &&
    path !== INTERACTION_PATH &&
    path !== FEDERATED_CALLBACK_PATH
  );
}

export async function createAuthorizationServer(deps: AuthorizationServerDeps): Promise<AuthorizationServer> {
  const store = openOAuthStore(deps.state);
  // The library (oidc-provider, ~25 MB of memory) and the secrets (generated, the first time ever: an RSA key
  // takes ~0.2 s) are loaded on the first OAuth request or OAuth token, not at start: a gateway whose callers use
  // API keys never loads them. Reading the secrets is async (the store may be PostgreSQL), so every entry point
  // awaits `ready()` first and the synchronous paths inside (the library's configuration, the CSRF key) read
  // them with `secrets()`.
  let loaded: OAuthSecrets | undefined;
  let lib: OidcLibrary | undefined;
  let loading: Promise<void> | undefined;
  const ready = (): Promise<void> => {
    loading ??= Promise.all([loadSecrets(store, deps.config.cookieSecret), import('oidc-provider')]).then(
      ([s, l]) => {
        lib = l;
        loaded = s;
      },
      (err: unknown) => {
        loading = undefined; // a database that was down is retried by the next request
        throw err;
      },
    );
    return loading;
  };
  const secrets = (): OAuthSecrets => {
    if (!loaded) throw new Error('OAuth secrets used before they were loaded');
    return loaded;
  };
  const log = deps.log;
  const issuer = () => deps.publicUrl();
  const secure = () => issuer().startsWith('https:');
  const basePath = () => new URL(issuer()).pathname.replace(/\/+$/, '');
  // One budget per client IP for sign-in attempts, registrations and metadata document fetches.
  const limiter = new AttemptLimiter(deps.config.signInAttemptsPerMinute);

  // Built lazily, and again only if the public URL changes (it is fixed in production; tests learn it late).
  let built: { key: string; provider: Provider; handle: (req: Request, res: Response) => void } | undefined;
  const current = () => {
    const key = `${issuer()}\u0000${deps.resource()}`;
    if (built?.key !== key) {
      if (!lib) throw new Error('the OAuth library used before it was loaded');
      const provider = buildProvider(lib, {
        issuer: issuer(),
        resource: deps.resource(),
        basePath: basePath(),
        secure: secure(),
        store,
        secrets: secrets(),
        ledger: deps.ledger,
        log,
        accessTokenTtlSeconds: deps.config.accessTokenTtlSeconds,
        refreshTokenTtlSeconds: deps.config.refreshTokenTtlSeconds,
        cimd: { get: deps.fetchClientMetadata, limiter, behindProxy: secure, log },
        onDatabaseError: deps.onDatabaseError,
      });
      const callback = provider.callback();
      built = { key, provider, handle: (req, res) => void callback(req, res) };
    }
    return built;
  };
  const provider = () => current().provider;

  const upstream = deps.config.upstream;
  const federated = upstream && new FederatedLogin({ ...deps, upstream, store });
  const cookies = {
    get secure() {
      return secure();
    },
    get basePath() {
      return basePath();
    },
  };
  const interactionDeps: InteractionDeps = {
    provider,
    store,
    ledger: deps.ledger,
    csrf: new Csrf(() => secrets().formKey, cookies),
    limiter,
    federated,
    publicUrl: issuer,
    cookies,
    secure,
    log,
    otherSignIn: deps.otherSignIn,
  };

  /**
   * Browser-based hosts (MCP Inspector's web UI) register from their page, which needs CORS; the library has
   * none on this endpoint. Loopback origins and TOLLGATE_ALLOWED_ORIGINS only, without credentials. (The token
   * and revocation endpoints have the library's own: a public client's redirect-URI origin.)
   */
  const corsOrigins = () => {
    const own = new URL(issuer()).hostname;
    return [...LOOPBACK_HOSTNAMES, own, ...deps.allowedOrigins.map(hostnameOf)];
  };
  function registrationCors(req: Request, res: Response): boolean {
    if (!req.headers.origin || !originAllowed(req.headers.origin, corsOrigins())) return false;
    res.setHeader('Access-Control-Allow-Origin', req.headers.origin);
    res.setHeader('Vary', 'Origin');
    if (req.method !== 'OPTIONS') return false;
    res.setHeader('Access-Control-Allow-Methods', 'POST, OPTIONS');
    res.setHeader('Access-Control-Allow-Headers', 'content-type, accept, mcp-protocol-version');
    res.setHeader('Access-Control-Max-Age', '600');
    res.status(204).end();
    return true;
  }

  const purge = setInterval(() => {
    store.purgeExpired().catch((err: unknown) => log.error({ err }, 'oauth purge failed'));
  }, PURGE_INTERVAL_MS);
  purge.unref();

  return {
    store,
    issuer,
    provider,
    upstreamSignIn: federated && {
      name: federated.name,
      start: (res, flow) => ready().then(() => startFederated(interactionDeps, res, flow)),
    },
    verifier: createOAuthTokenVerifier({
      provider: () => ready().then(() => provider()),
      store,
      ledger: deps.ledger,
      resource: deps.resource,
    }),
    mount(app: Express) {
      // Every OAuth path (the library's, our pages, the upstream callback) runs with the secrets loaded.
      app.use((req: Request, _res: Response, next: NextFunction) => {
        if (!DISCOVERY_PATHS.has(req.path) && !req.path.startsWith('/oauth/') && req.path !== '/oauth') {
          return next();
        }
        ready().then(() => next(), next);
      });
      // Before every other door, so no body parser of theirs ever reads the library's requests.
      app.use((req: Request, res: Response, next: NextFunction) => {
        if (!isProviderPath(req.path)) return next();
        if (req.path === AS_ROUTES.registration && registrationCors(req, res)) return;
        // Registration is open to anyone (RFC 7591, as MCP hosts need): bound it per client IP.
        if (req.method === 'POST' && req.path === AS_ROUTES.registration) {
          const wait = limiter.take(`register:${clientIp(req, secure())}`);
          if (wait !== undefined) {
            res.setHeader('Retry-After', String(wait));
            res.status(429).json({ error: 'rate_limited', error_description: 'Too many registrations.' });
            return;
          }
        }
        current().handle(req, res);
      });
      app.use(INTERACTION_PATH, interactionRoutes(interactionDeps));
      app.get(FEDERATED_CALLBACK_PATH, federatedCallback(interactionDeps));
    },
    close() {
      clearInterval(purge);
    },
  };
}

/** Loopback names, as the MCP SDK's `localhostAllowedOrigins()` lists them. */
const LOOPBACK_HOSTNAMES = ['localhost', '127.0.0.1', '[::1]'];

/**
 * The MCP SDK's Origin check (`validateOriginHeader`), here so that OAuth does not load the SDK: the origin's
 * hostname must be listed (port-agnostic), or, for a non-web scheme (a browser extension), `<scheme>//*`.
 */
export function originAllowed(origin: string, hostnames: readonly string[]): boolean {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  if (url.hostname === '') return false;
  const web = url.protocol === 'http:' || url.protocol === 'https:';
  return (!web && hostnames.includes(`${url.protocol}//*`)) || hostnames.includes(url.hostname);
}

/** An origin URL or a bare host → its hostname (the SDK's Origin validation compares hostnames). */
function hostnameOf(entry: string): string {
  try {
    return new URL(entry.includes('://') ? entry : `http://${entry}`).hostname;
  } catch {
    return entry.toLowerCase();
  }
}
