import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../../auth/api-keys.js';
import { sha256Hex } from '../../src/lib/hash.js';
import { createLogger } from '../../src/log.js';
import { connectClient } from '../e2e/mcp-clients.js';
import { CookieJar, connectedClient, hop, INITIALIZE, mcpPost } from '../e2e/oauth-helpers.js';
import { startGateway, storedText, type TestGateway } from '../helpers/gateway.js';

// /mcp as the resource server for OAuth access tokens: audience, expiry, scope, where the tokens are accepted,
// the per-client daily limit, the account they charge, and what the database and the logs hold of them.

const logLines: string[] = [];
const sink = new Writable({
  write(chunk, _enc, done) {
    logLines.push(String(chunk));
    done();
  },
});

let t: TestGateway;
let account: { accountId: string; key: string };

beforeAll(async () => {
  t = await startGateway({
    env: { TOLLGATE_OAUTH_SIGNIN_ATTEMPTS_PER_MINUTE: '1000' },
    log: createLogger('trace', sink),
    handlers: { 'scraperC/scrape': { run: async () => ({ raw: 'ok' }) } },
  });
  account = await t.account('1');
});
afterAll(() => t.close());

/** Edits a stored access token in place, as the authorization server would have issued it differently. */
async function rewriteToken(
  token: string,
  payload: Record<string, unknown>,
  expiresAt?: number,
): Promise<void> {
  const db = t.gw.state.stores;
  const row = await db
    .selectFrom('oauth_store')
    .select('payload')
    .where('model', '=', 'AccessToken')
    .where('id_hash', '=', sha256Hex(token))
    .executeTakeFirstOrThrow();
  const r = await db
    .updateTable('oauth_store')
    .set({
      payload: JSON.stringify({ ...JSON.parse(row.payload), ...payload }),
      ...(expiresAt ? { expires_at: expiresAt } : {}),
    })
    .where('model', '=', 'AccessToken')
    .where('id_hash', '=', sha256Hex(token))
    .executeTakeFirst();
  expect(Number(r.numUpdatedRows)).toBe(1);
}

describe('token checks at /mcp', () => {
  it('[oauth:wrong-audience-refused] a token whose audience is another resource is refused with 401', async () => {
    const c = await connectedClient(t.url, account.key);
    await rewriteToken(c.accessToken, { aud: 'https://other.example/mcp' });
    const r = await mcpPost(t.url, c.accessToken, INITIALIZE);
    expect(r.status).toBe(401);
    expect(r.challenge).toContain('error="invalid_token"');
    expect(r.text).toContain('another resource');
  });

  it('[oauth:expired-token-refused] an expired token is refused with 401', async () => {
    const c = await connectedClient(t.url, account.key);
    const past = Math.floor(Date.now() / 1000) - 5;
    await rewriteToken(c.accessToken, { exp: past }, past * 1000);
    const r = await mcpPost(t.url, c.accessToken, INITIALIZE);
    expect(r.status).toBe(401);
    expect(r.challenge).toContain('error="invalid_token"');
  });

  it('[oauth:insufficient-scope-403] a token granted without the mcp scope gets 403 insufficient_scope naming it', async () => {
    const c = await connectedClient(t.url, account.key, { scope: 'offline_access' });
    expect(c.tokenBody.scope ?? '').not.toContain('mcp');
    const r = await mcpPost(t.url, c.accessToken, INITIALIZE);
    expect(r.status).toBe(403);
    expect(r.challenge).toContain('error="insufficient_scope"');
    expect(r.challenge).toContain('scope="mcp"');
    expect(r.challenge).toContain('resource_metadata=');
  });

  it('[oauth:token-only-for-mcp] the HTTP shim and the model router refuse OAuth tokens (their audience is /mcp)', async () => {
    const c = await connectedClient(t.url, account.key);
    const run = await t.post(
      '/api/run/scraperC/scrape',
      { url: 'http://127.0.0.1:9/' },
      { key: c.accessToken },
    );
    expect(run.status).toBe(401);
    const llm = await t.post(
      '/api/llm/v1/chat/completions',
      { model: 'platform/cheap', messages: [] },
      { key: c.accessToken },
    );
    expect([401, 503]).toContain(llm.status);
    expect(
      (await t.gw.ledger.transactions(account.accountId, 50)).some((x) => x.action === 'scraperC/scrape'),
    ).toBe(false);
  });
});

describe('sign-in key', () => {
  it('[oauth:api-key-sign-in] revoking the API key a host was connected with cuts that host off, not the others', async () => {
    const acct = await t.account('1');
    const second = await createApiKey(t.gw.ledger, acct.accountId, 'for the host');
    const viaSecond = await connectedClient(t.url, second.key);
    const viaFirst = await connectedClient(t.url, acct.key);
    expect((await mcpPost(t.url, viaSecond.accessToken, INITIALIZE)).status).toBe(200);
    await t.gw.ledger.revokeApiKey(second.row.id);
    const refused = await mcpPost(t.url, viaSecond.accessToken, INITIALIZE);
    expect(refused.status).toBe(401);
    expect(refused.text).toContain('revoked');
    expect((await mcpPost(t.url, viaFirst.accessToken, INITIALIZE)).status).toBe(200);
  });
});

describe('paying with OAuth', () => {
  it('[oauth:same-account] a paid call is charged to the signed-in account at the API-key price and recorded', async () => {
    const acct = await t.account('1');
    const c = await connectedClient(t.url, acct.key, { dailyLimit: 'none' });
    const client = await connectClient('v2-legacy', t.url, c.accessToken);
    try {
      const r = await client.callTool('scraperC_scrape', { url: 'http://127.0.0.1:9/' });
      expect(r.structuredContent).toMatchObject({ raw: 'ok', charged_cents: 1 });
      const viaKey = await t.post(
        '/api/run/scraperC/scrape',
        { url: 'http://127.0.0.1:9/' },
        { key: acct.key },
      );
      expect(viaKey.body.charged_cents).toBe(1);
      expect((await t.gw.ledger.balance(acct.accountId)).balance_micros).toBe(1_000_000 - 2 * 10_000);
      const [, oauthTx] = await t.gw.ledger.transactions(acct.accountId, 2);
      expect(oauthTx).toMatchObject({
        payment_method: 'oauth',
        principal: `oauth:${c.clientId}`,
        charged_micros: 10_000,
      });
    } finally {
      await client.close();
    }
  });

  it('[oauth:daily-limit] the limit chosen at consent caps that client per UTC day; other clients and keys are unaffected', async () => {
    const acct = await t.account('1');
    const limited = await connectedClient(t.url, acct.key, { dailyLimit: 'custom', customUsd: '0.02' });
    const other = await connectedClient(t.url, acct.key, { dailyLimit: '1' });
    const a = await connectClient('v2-modern', t.url, limited.accessToken);
    const b = await connectClient('v1', t.url, other.accessToken);
    try {
      const args = { url: 'http://127.0.0.1:9/' };
      expect((await a.callTool('scraperC_scrape', args)).isError).toBeFalsy();
      expect((await a.callTool('scraperC_scrape', args)).isError).toBeFalsy();
      const refused = await a.callTool('scraperC_scrape', args);
      expect(refused.isError).toBe(true);
      expect(refused.structuredContent).toMatchObject({
        error: { code: 'daily_cap_exceeded', details: { scope: 'client' } },
        charged_cents: 0,
      });
      // The refusal names the app's own limit, so the user knows where to raise it.
      expect(JSON.stringify(refused.content)).toContain("This app's daily spending limit of $0.02");
      expect((await b.callTool('scraperC_scrape', args)).isError).toBeFalsy();
      const viaKey = await t.post('/api/run/scraperC/scrape', args, { key: acct.key });
      expect(viaKey.status).toBe(200);
      expect((await t.gw.ledger.balance(acct.accountId)).balance_micros).toBe(1_000_000 - 4 * 10_000);
    } finally {
      await a.close();
      await b.close();
    }
  });
});

describe('secrets at rest and in logs', () => {
  it('[oauth:tokens-hashed-at-rest] [oauth:no-secrets-logged] no token, code, key or cookie appears in the database or the logs', async () => {
    const acct = await t.account('1');
    const c = await connectedClient(t.url, acct.key);
    const refreshed = await fetch(`${t.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: c.refreshToken,
        client_id: c.clientId,
      }),
    });
    const second = (await refreshed.json()) as { access_token: string; refresh_token: string };
    expect((await mcpPost(t.url, second.access_token, INITIALIZE)).status).toBe(200);
    const files = await storedText(t.gw);
    const secrets = [c.accessToken, c.refreshToken, second.access_token, second.refresh_token, c.flow.code];
    for (const s of secrets) expect(files.includes(s), 'stored in clear').toBe(false);
    const logs = logLines.join('');
    expect(logs).toContain('"path":"/oauth/token"');
    for (const s of [...secrets, acct.key]) expect(logs.includes(s), 'logged').toBe(false);
    expect(logs).not.toMatch(/tg_oauth_(session|interaction|resume|csrf)=/);
  });
});

describe('behind TLS', () => {
  let tls: TestGateway;
  const PUBLIC = 'https://gw.example.test';
  beforeAll(async () => {
    tls = await startGateway({
      env: { TOLLGATE_PUBLIC_URL: PUBLIC, TOLLGATE_OAUTH_SIGNIN_ATTEMPTS_PER_MINUTE: '3' },
    });
  });
  afterAll(() => tls.close());

  /** A request as the TLS proxy forwards it: to the plain listener, with X-Forwarded-Proto and -For. */
  const viaProxy = (jar: CookieJar, url: string, ip: string, form?: Record<string, string>) =>
    hop(jar, url.replace(PUBLIC, tls.url), {
      form,
      headers: { 'x-forwarded-proto': 'https', 'x-forwarded-for': ip },
    });

  async function loginForm(jar: CookieJar, ip: string) {
    const reg = await fetch(`${tls.url}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-proto': 'https', 'x-forwarded-for': ip },
      body: JSON.stringify({
        redirect_uris: ['http://127.0.0.1:9/cb'],
        token_endpoint_auth_method: 'none',
        application_type: 'native',
      }),
    });
    const clientId = ((await reg.json()) as { client_id: string }).client_id;
    const q = new URLSearchParams({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: 'http://127.0.0.1:9/cb',
      scope: 'mcp',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
    });
    const start = await viaProxy(jar, `${PUBLIC}/oauth/authorize?${q}`, ip);
    expect(start.status).toBe(303);
    const page = await viaProxy(jar, start.location as string, ip);
    expect(page.status).toBe(200);
    return { start, page, action: /action="([^"]+\/login)"/.exec(page.text)?.[1] as string };
  }

  it('[oauth:secure-cookies] every sign-in cookie is Secure, HttpOnly and SameSite=Lax', async () => {
    const { start, page } = await loginForm(new CookieJar(), '198.51.100.1');
    const cookies = [...start.res.headers.getSetCookie(), ...page.res.headers.getSetCookie()];
    expect(cookies.length).toBeGreaterThanOrEqual(3);
    for (const c of cookies) {
      expect(c).toMatch(/; secure/i);
      expect(c).toMatch(/; httponly/i);
      expect(c).toMatch(/; samesite=lax/i);
    }
    expect(start.res.headers.get('location')).toMatch(/^\/oauth\/interaction\//);
    expect(page.text).toContain(`action="${PUBLIC}/oauth/interaction/`);
  });

  it('[oauth:sign-in-rate-limit] sign-in attempts are limited per client IP (429 with Retry-After)', async () => {
    const jar = new CookieJar();
    const { page, action } = await loginForm(jar, '203.0.113.5');
    const csrf = /name="csrf" value="([^"]+)"/.exec(page.text)?.[1] as string;
    const attempt = (ip: string) => viaProxy(jar, action, ip, { csrf, api_key: 'tg_sk_wrong' });
    for (let i = 0; i < 3; i++) expect((await attempt('203.0.113.5')).status).toBe(401);
    const limited = await attempt('203.0.113.5');
    expect(limited.status).toBe(429);
    expect(Number(limited.res.headers.get('retry-after'))).toBeGreaterThan(0);
    // A forged leading X-Forwarded-For entry does not escape the proxy-appended one.
    expect((await attempt('10.0.0.1, 203.0.113.5')).status).toBe(429);
    expect((await attempt('203.0.113.6')).status).toBe(401);
  });
});
