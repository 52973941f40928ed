import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CookieJar, hop, pkce, register, signInAndConsent, tokenRequest } from '../e2e/oauth-helpers.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { startTlsSite, TEST_CA, type TlsSite } from '../helpers/tls-site.js';

// Client ID metadata documents over raw HTTP: a document served over https on loopback (allowed by
// TOLLGATE_FETCH_ALLOW, its certificate signed by the test CA the gateway is given) is the client's
// registration; everything the draft and tollgate's policy refuse ends on an error page, never at a redirect
// URI; documents are reused for as long as their cache headers say; a registration budget per client IP bounds
// the fetches. Dynamic registration keeps working for hosts that do not use documents, with application_type.

const REDIRECT = 'http://127.0.0.1:9/callback';
let t: TestGateway;
let site: TlsSite;
let key: string;

beforeAll(async () => {
  site = await startTlsSite();
  t = await startGateway({
    env: { TOLLGATE_OAUTH_SIGNIN_ATTEMPTS_PER_MINUTE: '1000' },
    metadataFetchCa: TEST_CA,
  });
  key = (await t.account('1')).key;
});
afterAll(async () => {
  await t.close();
  await site.close();
});

let n = 0;
/** Serves a document at a fresh path; `doc` receives the path's URL (the client id) and returns the body. */
function serve(
  doc: (id: string) => unknown,
  headers: Record<string, string> = { 'cache-control': 'max-age=300' },
  status = 200,
): string {
  const path = `/clients/${++n}.json`;
  const id = `${site.url}${path}`;
  site.route(path, (_req, res) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    const body = doc(id);
    res.end(typeof body === 'string' ? body : JSON.stringify(body));
  });
  return id;
}

function metadata(id: string, extra: Record<string, unknown> = {}) {
  return {
    client_id: id,
    client_name: 'Metadata Host',
    redirect_uris: [REDIRECT],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
    ...extra,
  };
}

const hits = (id: string) => site.hits.get(new URL(id).pathname) ?? 0;

function authorizeUrl(clientId: string, extra: Record<string, string> = {}, base = t.url) {
  return `${base}/oauth/authorize?${new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT,
    scope: 'mcp offline_access',
    resource: `${base}/mcp`,
    code_challenge: pkce().challenge,
    code_challenge_method: 'S256',
    state: 'st4te',
    ...extra,
  })}`;
}

/** The authorization request's answer: the sign-in page for an accepted client, an error page otherwise. */
async function authorize(clientId: string, extra: Record<string, string> = {}) {
  const jar = new CookieJar();
  const first = await hop(jar, authorizeUrl(clientId, extra));
  if (first.status !== 303 || !first.location?.startsWith(`${t.url}/oauth/interaction/`)) return first;
  return hop(jar, first.location);
}

async function expectRefused(clientId: string, error: string, extra: Record<string, string> = {}) {
  const r = await authorize(clientId, extra);
  expect(r.status, r.text.slice(0, 300)).toBe(400);
  // Never sent back to the (unverified) redirect URI.
  expect(r.location).toBeNull();
  expect(r.text).toContain(error);
}

describe('a document as the registration', () => {
  it('[oauth:cimd] the document is the registration: its name on the pages, its redirect URI, tokens for the URL', async () => {
    const id = serve((u) => metadata(u, { client_name: 'Raw Metadata Host' }));
    const clients = async () =>
      (
        await t.gw.state.stores
          .selectFrom('oauth_store')
          .select('id_hash')
          .where('model', '=', 'Client')
          .execute()
      ).length;
    const clientsBefore = await clients();
    const p = pkce();
    const { callback, pages } = await signInAndConsent(
      authorizeUrl(id, { code_challenge: p.challenge, prompt: 'consent' }),
      REDIRECT,
      { apiKey: key },
    );
    const host = new URL(id).host;
    expect(pages[0]?.text).toContain(`Raw Metadata Host (from <strong>${host}</strong>)`);
    expect(pages[1]?.text).toContain('Allow Raw Metadata Host to use your tollgate account?');
    expect(pages[1]?.text).toContain(`<dt>Published by</dt><dd><strong>${host}</strong>`);
    const tok = await tokenRequest(t.url, {
      grant_type: 'authorization_code',
      code: callback.searchParams.get('code') as string,
      code_verifier: p.verifier,
      redirect_uri: REDIRECT,
      client_id: id,
    });
    expect(tok.status).toBe(200);
    expect(tok.body.refresh_token).toBeDefined();
    const refreshed = await tokenRequest(t.url, {
      grant_type: 'refresh_token',
      refresh_token: tok.body.refresh_token,
      client_id: id,
    });
    expect(refreshed.status).toBe(200);
    // Nothing was registered, and the document was fetched once for the whole flow (max-age=300).
    expect(await clients()).toBe(clientsBefore);
    expect(hits(id)).toBe(1);
    // A secret-less client cannot authenticate as anything but itself: a token request naming another client
    // with this one's refresh token is refused.
    const other = serve((u) => metadata(u));
    const stolen = await tokenRequest(t.url, {
      grant_type: 'refresh_token',
      refresh_token: refreshed.body.refresh_token,
      client_id: other,
    });
    expect(stolen.status).toBe(400);
  });

  it('[oauth:cimd] a document that does not state its token endpoint method is a public client', async () => {
    const id = serve((u) => {
      const { token_endpoint_auth_method: _omitted, ...rest } = metadata(u);
      return rest;
    });
    const r = await authorize(id);
    expect(r.status).toBe(200);
    expect(r.text).toContain('Sign in to connect Metadata Host');
  });
});

describe('refusals', () => {
  it('[oauth:cimd-refusals] a document whose client_id is not its own URL', async () => {
    const id = serve((u) => metadata(`${u}?other`));
    await expectRefused(id, 'client_id metadata document client_id does not match');
    const trailing = serve((u) => metadata(`${u}/`));
    await expectRefused(trailing, 'does not match');
  });

  it('[oauth:cimd-refusals] an unreachable document: no listener, 404, 500, a silent server', async () => {
    await expectRefused('https://127.0.0.1:1/client.json', 'invalid_client');
    await expectRefused(`${site.url}/never-served.json`, 'invalid_client');
    await expectRefused(
      serve((u) => metadata(u), {}, 500),
      'invalid_client',
    );
    site.route('/silent.json', () => undefined);
    const started = Date.now();
    await expectRefused(`${site.url}/silent.json`, 'invalid_client');
    // One fetch per request, abandoned after 2.5 s (the library looks the client up again for its error page).
    expect(Date.now() - started).toBeLessThan(4_500);
    expect(site.hits.get('/silent.json')).toBe(1);
  });

  it('[oauth:cimd-refusals] an oversized document (over 5 KiB), whether declared or not', async () => {
    const big = serve((u) => metadata(u, { padding: 'x'.repeat(6 * 1024) }));
    await expectRefused(big, 'invalid_client');
    site.route('/huge.json', (_req, res: ServerResponse) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(Buffer.alloc(2 * 1024 * 1024, 0x20));
    });
    await expectRefused(`${site.url}/huge.json`, 'invalid_client');
  });

  it('[oauth:cimd-refusals] a redirect to the document is not followed', async () => {
    const real = serve((u) => metadata(u));
    site.route('/moved.json', (_req, res) => {
      res.writeHead(302, { location: new URL(real).pathname }).end();
    });
    await expectRefused(`${site.url}/moved.json`, 'invalid_client');
    expect(hits(real)).toBe(0);
  });

  it('[oauth:cimd-refusals] a redirect URI that the document does not list is never redirected to', async () => {
    const id = serve((u) => metadata(u));
    await expectRefused(id, 'redirect_uri', { redirect_uri: 'http://127.0.0.1:9/elsewhere' });
    await expectRefused(id, 'redirect_uri', { redirect_uri: 'http://127.0.0.1:10/callback' });
  });

  it('[oauth:cimd-refusals] documents that are not a public client: secrets, keys, plain-http redirect URIs', async () => {
    await expectRefused(
      serve((u) => metadata(u, { token_endpoint_auth_method: 'client_secret_basic' })),
      'shared-secret',
    );
    await expectRefused(
      serve((u) => metadata(u, { client_secret: 'hunter2' })),
      'client_secret',
    );
    await expectRefused(
      serve((u) =>
        metadata(u, { token_endpoint_auth_method: 'private_key_jwt', jwks_uri: 'https://127.0.0.1:1/k' }),
      ),
      'client is not allowed',
    );
    await expectRefused(
      serve((u) => metadata(u, { redirect_uris: ['http://host.example/cb'] })),
      'redirect_uris must be https',
      { redirect_uri: 'http://host.example/cb' },
    );
  });

  it('[oauth:cimd-refusals] a body that is not a JSON object', async () => {
    await expectRefused(
      serve(() => 'not json'),
      'invalid_client',
    );
    await expectRefused(
      serve((u) => [metadata(u)]),
      'not a JSON object',
    );
  });

  it('[oauth:cimd-refusals] [oauth:cimd-ssrf] a certificate that no trusted CA signed', async () => {
    const stranger = await startTlsSite({ untrusted: true });
    try {
      stranger.route('/client.json', (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(metadata(`${stranger.url}/client.json`)));
      });
      await expectRefused(`${stranger.url}/client.json`, 'invalid_client');
    } finally {
      await stranger.close();
    }
  });
});

describe('caching', () => {
  it('[oauth:cimd-cache] a failed fetch is not remembered: the next request fetches again', async () => {
    let fail = true;
    const path = '/flaky.json';
    const id = `${site.url}${path}`;
    site.route(path, (_req, res) => {
      if (fail) return void res.writeHead(503).end();
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=300' });
      res.end(JSON.stringify(metadata(id)));
    });
    await expectRefused(id, 'invalid_client');
    const failed = hits(id);
    expect(failed).toBeGreaterThan(0);
    fail = false;
    expect((await authorize(id)).status).toBe(200);
    expect((await authorize(id)).status).toBe(200);
    // Fetched again after the failure, then not again while fresh.
    expect(hits(id)).toBe(failed + 1);
  });

  it('[oauth:cimd-cache] a fresh document is reused; no-store still costs at most one fetch per 30 s', async () => {
    const fresh = serve((u) => metadata(u), { 'cache-control': 'public, max-age=600' });
    const noStore = serve((u) => metadata(u), { 'cache-control': 'no-store' });
    for (let i = 0; i < 3; i++) {
      expect((await authorize(fresh)).status).toBe(200);
      expect((await authorize(noStore)).status).toBe(200);
    }
    expect(hits(fresh)).toBe(1);
    expect(hits(noStore)).toBe(1);
  });
});

describe('the fetch budget', () => {
  it('[oauth:cimd-ssrf] document fetches share the per-IP registration budget; cached documents cost nothing', async () => {
    const small = await startGateway({
      env: { TOLLGATE_OAUTH_SIGNIN_ATTEMPTS_PER_MINUTE: '2' },
      metadataFetchCa: TEST_CA,
    });
    try {
      const ids = [1, 2, 3].map(() => serve((u) => metadata(u)));
      const go = (id: string) => hop(new CookieJar(), authorizeUrl(id, {}, small.url));
      expect((await go(ids[0] as string)).status).toBe(303);
      expect((await go(ids[0] as string)).status).toBe(303);
      expect((await go(ids[1] as string)).status).toBe(303);
      const third = await go(ids[2] as string);
      expect(third.status).toBe(400);
      expect(hits(ids[2] as string)).toBe(0);
      // The budget is the registration one: a registration from the same IP is refused too.
      const res = await fetch(`${small.url}/oauth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' }),
      });
      expect(res.status).toBe(429);
    } finally {
      await small.close();
    }
  });
});

describe('dynamic registration for hosts without documents', () => {
  const base = {
    client_name: 'Older host',
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  };

  it('[oauth:dcr-application-type] [oauth:dcr] native with a loopback redirect, web with https, and none stated', async () => {
    const native = await register(t.url, { ...base, application_type: 'native', redirect_uris: [REDIRECT] });
    expect(native.application_type).toBe('native');
    const web = await register(t.url, {
      ...base,
      application_type: 'web',
      redirect_uris: ['https://host.example/oauth/callback'],
    });
    expect(web.application_type).toBe('web');
    // Hosts from before SEP-837 send no application_type: OIDC's default (web) with a loopback redirect works.
    const older = await register(t.url, { ...base, redirect_uris: [REDIRECT] });
    expect(older.application_type).toBe('web');
    const { callback } = await signInAndConsent(authorizeUrl(older.client_id as string), REDIRECT, {
      apiKey: key,
    });
    expect(callback.searchParams.get('code')).toBeTruthy();
  });

  it('[oauth:dcr-application-type] refuses an unknown application_type and a native client claiming https on loopback', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ ...base, application_type: 'desktop', redirect_uris: [REDIRECT] }, 'invalid_client_metadata'],
      [
        { ...base, application_type: 'native', redirect_uris: ['https://127.0.0.1:9/callback'] },
        'invalid_redirect_uri',
      ],
    ];
    for (const [body, error] of cases) {
      const res = await fetch(`${t.url}/oauth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: string }).error).toBe(error);
    }
  });
});
