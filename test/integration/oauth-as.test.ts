import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CookieJar,
  codeFlow,
  connectedClient,
  formOf,
  hop,
  INITIALIZE,
  mcpPost,
  nativeClient,
  pkce,
  register,
  tokenRequest,
} from '../e2e/oauth-helpers.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

// The authorization server over raw HTTP: discovery, registration, the authorization request's refusals, the
// code and refresh grants, revocation, and the sign-in and consent forms' protections.

const REDIRECT = 'http://127.0.0.1:9/callback';
let t: TestGateway;
let key: string;

beforeAll(async () => {
  t = await startGateway({
    env: { TOLLGATE_OAUTH_SIGNIN_ATTEMPTS_PER_MINUTE: '1000' },
    handlers: { 'scraperC/scrape': { run: async () => ({ raw: 'ok' }) } },
  });
  key = (await t.account('1')).key;
});
afterAll(() => t.close());

function authorizeUrl(params: Record<string, string>): string {
  return `${t.url}/oauth/authorize?${new URLSearchParams({
    response_type: 'code',
    scope: 'mcp offline_access',
    resource: `${t.url}/mcp`,
    redirect_uri: REDIRECT,
    state: 'st4te',
    ...params,
  })}`;
}

async function publicClient(): Promise<string> {
  return (await register(t.url, nativeClient(REDIRECT))).client_id as string;
}

describe('discovery and registration', () => {
  it('[oauth:discovery] [oauth:cimd-advertised] metadata at both root well-known paths: S256 only, iss, registration, revocation', async () => {
    const oauth = await t.get('/.well-known/oauth-authorization-server');
    const oidc = await t.get('/.well-known/openid-configuration');
    expect(oauth.status).toBe(200);
    expect(oidc.body).toEqual(oauth.body);
    expect(oauth.body).toMatchObject({
      issuer: t.url,
      authorization_endpoint: `${t.url}/oauth/authorize`,
      token_endpoint: `${t.url}/oauth/token`,
      registration_endpoint: `${t.url}/oauth/register`,
      revocation_endpoint: `${t.url}/oauth/revoke`,
      code_challenge_methods_supported: ['S256'],
      authorization_response_iss_parameter_supported: true,
      client_id_metadata_document_supported: true,
      response_types_supported: ['code'],
    });
    expect(oauth.body.scopes_supported).toContain('mcp');
    expect(oauth.body.grant_types_supported).toEqual(
      expect.arrayContaining(['authorization_code', 'refresh_token']),
    );
    expect(oauth.body.introspection_endpoint).toBeUndefined();
  });

  it('[oauth:cimd-advertised] a client id URL the server cannot fetch is refused on an error page, never redirected', async () => {
    const r = await hop(
      new CookieJar(),
      authorizeUrl({ client_id: 'https://127.0.0.1:1/client.json', ...s256() }),
    );
    expect(r.status).toBe(400);
    expect(r.location).toBeNull();
    expect(r.text).toContain('invalid_client');
  });

  it('[oauth:prm-names-as] the protected-resource metadata and the 401 challenge name this server and the mcp scope', async () => {
    const prm = await t.get('/.well-known/oauth-protected-resource/mcp');
    expect(prm.body).toMatchObject({
      resource: `${t.url}/mcp`,
      authorization_servers: [t.url],
      scopes_supported: ['mcp'],
    });
    const r = await mcpPost(t.url, 'not-a-token', INITIALIZE);
    expect(r.status).toBe(401);
    expect(r.challenge).toContain('scope="mcp"');
    expect(r.challenge).toContain(`resource_metadata="${t.url}/.well-known/oauth-protected-resource/mcp"`);
  });

  it('[oauth:dcr] [oauth:redirect-uri-https] registers a public native client; refuses plain-http remote redirect URIs and unknown scopes', async () => {
    const ok = await register(t.url, nativeClient(REDIRECT));
    expect(ok.client_id).toMatch(/\S{20,}/);
    expect(ok.client_secret).toBeUndefined();
    expect(ok.token_endpoint_auth_method).toBe('none');
    expect(ok.registration_access_token).toBeUndefined();
    const web = await register(t.url, {
      ...nativeClient('https://host.example/cb'),
      application_type: 'web',
    });
    expect(web.client_id).toBeDefined();
    const cases: Array<[Record<string, unknown>, string, string]> = [
      // The library alone would accept this one for a web client; our policy refuses it.
      [
        { ...nativeClient('http://evil.example/cb'), application_type: 'web' },
        'invalid_redirect_uri',
        'loopback',
      ],
      [{ ...nativeClient(REDIRECT), scope: 'mcp admin' }, 'invalid_client_metadata', 'supported scope'],
    ];
    for (const [bad, error, mention] of cases) {
      const res = await fetch(`${t.url}/oauth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(bad),
      });
      expect(res.status).toBe(400);
      const body = (await res.json()) as { error: string; error_description: string };
      expect(body.error).toBe(error);
      expect(body.error_description).toContain(mention);
    }
  });
});

describe('browser-based hosts', () => {
  it('[oauth:dcr] registration answers CORS for loopback and allowed origins only; discovery is open to all', async () => {
    const preflight = (origin: string) =>
      fetch(`${t.url}/oauth/register`, {
        method: 'OPTIONS',
        headers: {
          origin,
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'content-type',
        },
      });
    const inspector = await preflight('http://localhost:6274');
    expect(inspector.status).toBe(204);
    expect(inspector.headers.get('access-control-allow-origin')).toBe('http://localhost:6274');
    expect(inspector.headers.get('access-control-allow-credentials')).toBeNull();
    expect((await preflight('https://evil.example')).headers.get('access-control-allow-origin')).toBeNull();
    const registered = await fetch(`${t.url}/oauth/register`, {
      method: 'POST',
      headers: { origin: 'http://localhost:6274', 'content-type': 'application/json' },
      body: JSON.stringify(nativeClient('http://localhost:6274/oauth/callback', { application_type: 'web' })),
    });
    expect(registered.status).toBe(201);
    expect(registered.headers.get('access-control-allow-origin')).toBe('http://localhost:6274');
    // The token endpoint answers the client's own page (its redirect URI's origin), not another origin.
    const { client_id } = (await registered.json()) as { client_id: string };
    const token = (origin: string) =>
      fetch(`${t.url}/oauth/token`, {
        method: 'POST',
        headers: { origin, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: 'x', client_id }).toString(),
      });
    expect((await token('http://localhost:6274')).headers.get('access-control-allow-origin')).toBe(
      'http://localhost:6274',
    );
    expect((await token('https://evil.example')).headers.get('access-control-allow-origin')).toBeNull();
    const discovery = await fetch(`${t.url}/.well-known/oauth-authorization-server`, {
      headers: { origin: 'https://any.example' },
    });
    expect(discovery.headers.get('access-control-allow-origin')).toBe('https://any.example');
  });
});

function s256(): Record<string, string> {
  return { code_challenge: pkce().challenge, code_challenge_method: 'S256' };
}

describe('authorization request refusals', () => {
  it('[oauth:redirect-uri-exact] an unregistered redirect URI (even another loopback port) gets an error page, no redirect', async () => {
    const clientId = await publicClient();
    for (const redirect of [
      'http://127.0.0.1:10/callback',
      'http://127.0.0.1:9/callback/x',
      'http://localhost:9/callback',
    ]) {
      const r = await hop(
        new CookieJar(),
        authorizeUrl({ client_id: clientId, redirect_uri: redirect, ...s256() }),
      );
      expect(r.status).toBe(400);
      expect(r.location).toBeNull();
      expect(r.text).toContain('redirect_uri');
      expect(r.res.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    }
  });

  it('[oauth:pkce-s256-only] missing PKCE is refused for public and confidential clients; plain is refused', async () => {
    const confidential = await register(t.url, {
      ...nativeClient(REDIRECT),
      token_endpoint_auth_method: 'client_secret_post',
    });
    expect(confidential.client_secret).toBeDefined();
    const cases: Record<string, string>[] = [
      { client_id: await publicClient() },
      { client_id: confidential.client_id as string },
      { client_id: await publicClient(), code_challenge: pkce().verifier, code_challenge_method: 'plain' },
    ];
    for (const params of cases) {
      const r = await hop(new CookieJar(), authorizeUrl(params));
      expect(r.status).toBe(303);
      const back = new URL(r.location as string);
      expect(back.origin + back.pathname).toBe(REDIRECT);
      expect(back.searchParams.get('error')).toBe('invalid_request');
      expect(back.searchParams.get('state')).toBe('st4te');
      expect(back.searchParams.get('iss')).toBe(t.url);
      expect(back.searchParams.get('code')).toBeNull();
    }
  });

  it('[oauth:resource-indicator] a resource other than /mcp is refused with invalid_target', async () => {
    const r = await hop(
      new CookieJar(),
      authorizeUrl({ client_id: await publicClient(), resource: 'https://other.example/mcp', ...s256() }),
    );
    const back = new URL(r.location as string);
    expect(back.searchParams.get('error')).toBe('invalid_target');
  });
});

describe('code, tokens, refresh and revocation', () => {
  it('[oauth:iss-in-response] [oauth:short-lived-tokens] the code comes back with state and iss; tokens are short-lived and for mcp', async () => {
    const c = await connectedClient(t.url, key, { state: 'xyz' });
    expect(c.flow.callback.searchParams.get('iss')).toBe(t.url);
    expect(c.flow.callback.searchParams.get('state')).toBe('xyz');
    expect(c.tokenBody).toMatchObject({ token_type: 'Bearer', expires_in: 900, scope: 'mcp' });
    expect(c.refreshToken).toBeDefined();
    expect((await mcpPost(t.url, c.accessToken, INITIALIZE)).status).toBe(200);
  });

  it('[oauth:code-single-use] a replayed code is refused and revokes what the first exchange issued', async () => {
    const clientId = await publicClient();
    const flow = await codeFlow(t.url, clientId, { apiKey: key, redirectUri: REDIRECT });
    const form = {
      grant_type: 'authorization_code',
      code: flow.code,
      code_verifier: flow.verifier,
      redirect_uri: REDIRECT,
      client_id: clientId,
    };
    const wrongVerifier = await tokenRequest(t.url, { ...form, code_verifier: pkce().verifier });
    expect(wrongVerifier.body.error).toBe('invalid_grant');
    const flow2 = await codeFlow(t.url, clientId, { apiKey: key, redirectUri: REDIRECT });
    const form2 = { ...form, code: flow2.code, code_verifier: flow2.verifier };
    const first = await tokenRequest(t.url, form2);
    expect(first.status).toBe(200);
    const replay = await tokenRequest(t.url, form2);
    expect(replay.status).toBe(400);
    expect(replay.body.error).toBe('invalid_grant');
    expect((await mcpPost(t.url, first.body.access_token, INITIALIZE)).status).toBe(401);
  });

  it('[oauth:refresh-rotation] refreshing rotates the refresh token; reusing an old one revokes the whole grant', async () => {
    const c = await connectedClient(t.url, key);
    const refreshed = await tokenRequest(t.url, {
      grant_type: 'refresh_token',
      refresh_token: c.refreshToken,
      client_id: c.clientId,
    });
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.refresh_token).not.toBe(c.refreshToken);
    expect((await mcpPost(t.url, refreshed.body.access_token, INITIALIZE)).status).toBe(200);
    const reuse = await tokenRequest(t.url, {
      grant_type: 'refresh_token',
      refresh_token: c.refreshToken,
      client_id: c.clientId,
    });
    expect(reuse.body.error).toBe('invalid_grant');
    expect((await mcpPost(t.url, refreshed.body.access_token, INITIALIZE)).status).toBe(401);
    const next = await tokenRequest(t.url, {
      grant_type: 'refresh_token',
      refresh_token: refreshed.body.refresh_token,
      client_id: c.clientId,
    });
    expect(next.body.error).toBe('invalid_grant');
  });

  it('[oauth:revocation] revoking the refresh token stops its access token on the next request', async () => {
    const c = await connectedClient(t.url, key);
    expect((await mcpPost(t.url, c.accessToken, INITIALIZE)).status).toBe(200);
    // Another client cannot revoke it: answered 200 as RFC 7009 asks, and the token keeps working.
    const intruder = await publicClient();
    const foreign = await fetch(`${t.url}/oauth/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: c.refreshToken, client_id: intruder }).toString(),
    });
    expect(foreign.status).toBe(200);
    expect((await mcpPost(t.url, c.accessToken, INITIALIZE)).status).toBe(200);
    const res = await fetch(`${t.url}/oauth/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: c.refreshToken, client_id: c.clientId }).toString(),
    });
    expect(res.status).toBe(200);
    const after = await mcpPost(t.url, c.accessToken, INITIALIZE);
    expect(after.status).toBe(401);
    expect(after.challenge).toContain('invalid_token');
    const refresh = await tokenRequest(t.url, {
      grant_type: 'refresh_token',
      refresh_token: c.refreshToken,
      client_id: c.clientId,
    });
    expect(refresh.body.error).toBe('invalid_grant');
  });
});

describe('sign-in and consent forms', () => {
  async function toLoginPage(jar: CookieJar) {
    const clientId = (await register(t.url, nativeClient(REDIRECT, { client_name: 'Forms Test Host' })))
      .client_id;
    const start = await hop(jar, authorizeUrl({ client_id: clientId as string, ...s256() }));
    return hop(jar, start.location as string);
  }

  it('[oauth:csrf] a sign-in or consent POST without its CSRF token (or with another one) is refused', async () => {
    const jar = new CookieJar();
    const page = await toLoginPage(jar);
    const f = formOf(page.text, '/login');
    const forms: Record<string, string>[] = [{ api_key: key }, { api_key: key, csrf: 'forged' }];
    for (const form of forms) {
      const r = await hop(jar, f.action, { form });
      expect(r.status).toBe(403);
      expect(r.location).toBeNull();
    }
    // Another browser's CSRF cookie with this browser's token does not pass either.
    const other = new CookieJar();
    await toLoginPage(other);
    const cross = await hop(other, f.action, { form: { api_key: key, csrf: f.csrf } });
    expect(cross.status).toBe(400);
    const ok = await hop(jar, f.action, { form: { api_key: key, csrf: f.csrf } });
    expect(ok.status).toBe(303);
  });

  it('[oauth:api-key-sign-in] a browser session whose sign-in key is not on record signs in again before consent', async () => {
    const jar = new CookieJar();
    const clientId = await publicClient();
    await codeFlow(t.url, clientId, { apiKey: key, redirectUri: REDIRECT, jar });
    await t.gw.state.stores.deleteFrom('oauth_session_keys').execute();
    const start = await hop(jar, authorizeUrl({ client_id: clientId, prompt: 'consent', ...s256() }));
    const page = await hop(jar, start.location as string);
    expect(page.text).toContain('Sign in again to continue.');
    const f = formOf(page.text, '/login');
    let r = await hop(jar, f.action, { form: { csrf: f.csrf, api_key: key } });
    while (r.status === 303 && !r.location?.startsWith(REDIRECT)) r = await hop(jar, r.location as string);
    expect(r.text).toContain('to use your tollgate account?');
  });

  it('[oauth:api-key-sign-in] a wrong API key re-renders the form with an alert and signs nobody in', async () => {
    const jar = new CookieJar();
    const page = await toLoginPage(jar);
    expect(page.text).toContain('Sign in to connect Forms Test Host');
    const f = formOf(page.text, '/login');
    const r = await hop(jar, f.action, { form: { api_key: `tg_sk_${'A'.repeat(43)}`, csrf: f.csrf } });
    expect(r.status).toBe(401);
    expect(r.text).toContain('role="alert"');
    expect(r.text).toContain('aria-invalid="true"');
    expect(r.text).not.toContain('AAAAAAAA');
  });

  it('[oauth:consent-shows-client-scopes-spend] consent names the client, scopes, balance and limit; deny returns access_denied', async () => {
    const jar = new CookieJar();
    const page = await toLoginPage(jar);
    const f = formOf(page.text, '/login');
    let r = await hop(jar, f.action, { form: { api_key: key, csrf: f.csrf } });
    while (r.status === 303 && !r.location?.startsWith(REDIRECT)) r = await hop(jar, r.location as string);
    expect(r.text).toContain('Allow Forms Test Host to use your tollgate account?');
    expect(r.text).toContain('<strong>mcp</strong>');
    expect(r.text).toMatch(/\$\d+\.\d\d available/);
    expect(r.text).toContain('$5.00 per day');
    expect(r.text).toContain('127.0.0.1:9');
    const consent = formOf(r.text, '/consent');
    const bad = await hop(jar, consent.action, {
      form: { csrf: consent.csrf, daily_limit: 'custom', custom_limit_usd: '-3' },
    });
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('role="alert"');
    const deny = formOf(r.text, '/abort');
    let d = await hop(jar, deny.action, { form: { csrf: deny.csrf } });
    while (d.status === 303 && !d.location?.startsWith(REDIRECT)) d = await hop(jar, d.location as string);
    const back = new URL(d.location as string);
    expect(back.searchParams.get('error')).toBe('access_denied');
    expect(back.searchParams.get('iss')).toBe(t.url);
  });

  it('[oauth:pages-accessible] pages carry no script or external asset, a language, labels, and anti-framing headers', async () => {
    const page = await toLoginPage(new CookieJar());
    expect(page.text).toContain('<html lang="en">');
    expect(page.text).not.toMatch(/<script|<link|src="http|url\(/i);
    expect(page.text).toContain('<label for="api_key">');
    expect(page.res.headers.get('x-frame-options')).toBe('DENY');
    expect(page.res.headers.get('cache-control')).toBe('no-store');
    expect(page.res.headers.get('referrer-policy')).toBe('no-referrer');
  });
});
