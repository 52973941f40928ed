import type { Env } from './index.js';

// The OAuth section of the configuration (TOLLGATE_OAUTH_*, TOLLGATE_OIDC_*).

export interface OAuthConfig {
  accessTokenTtlSeconds: number;
  refreshTokenTtlSeconds: number;
  cookieSecret: string | undefined;
  signInAttemptsPerMinute: number;
  upstream: OidcUpstreamConfig | undefined;
}

export interface OidcUpstreamConfig {
  issuer: string;
  clientId: string;
  clientSecret: string | undefined;
  name: string;
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

export function oauthConfig(env: Env, problems: string[]): OAuthConfig {
  const issuer = env.TOLLGATE_OIDC_ISSUER;
  const clientId = env.TOLLGATE_OIDC_CLIENT_ID;
  let upstream: OidcUpstreamConfig | undefined;
  if (issuer && clientId) {
    const u = new URL(issuer);
    // Plain http only on loopback (tests, a provider on the same host); anything else must be TLS.
    if (u.protocol !== 'https:' && !LOOPBACK_HOSTS.has(u.hostname)) {
      problems.push('TOLLGATE_OIDC_ISSUER: must be an https URL (plain http only for a loopback address)');
    }
    upstream = {
      issuer,
      clientId,
      clientSecret: env.TOLLGATE_OIDC_CLIENT_SECRET,
      name: env.TOLLGATE_OIDC_NAME ?? u.hostname,
    };
  } else if (issuer || clientId || env.TOLLGATE_OIDC_CLIENT_SECRET) {
    problems.push('TOLLGATE_OIDC_ISSUER and TOLLGATE_OIDC_CLIENT_ID: set both to enable upstream sign-in');
  }
  return {
    accessTokenTtlSeconds: env.TOLLGATE_OAUTH_ACCESS_TOKEN_TTL_SECONDS,
    refreshTokenTtlSeconds: env.TOLLGATE_OAUTH_REFRESH_TOKEN_TTL_SECONDS,
    cookieSecret: env.TOLLGATE_OAUTH_COOKIE_SECRET,
    signInAttemptsPerMinute: env.TOLLGATE_OAUTH_SIGNIN_ATTEMPTS_PER_MINUTE,
    upstream,
  };
}
