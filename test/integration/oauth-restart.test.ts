import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import {
  CookieJar,
  connectedClient,
  hop,
  INITIALIZE,
  mcpPost,
  nativeClient,
  pkce,
  register,
  tokenRequest,
} from '../e2e/oauth-helpers.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

// The authorization server's state lives in the gateway's database: a restart logs nobody out.

const PUBLIC = 'http://tollgate.test';
const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-oauth-restart-'));
const start = () =>
  startGateway({
    dataDir,
    keepData: true,
    env: { TOLLGATE_PUBLIC_URL: PUBLIC, TOLLGATE_OAUTH_SIGNIN_ATTEMPTS_PER_MINUTE: '100' },
  });
let current: TestGateway | undefined;
afterAll(async () => {
  await current?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

it('[oauth:state-persists] tokens, refresh tokens, clients, sessions and keys survive a restart', async () => {
  const before = await start();
  current = before;
  const { key } = await before.account('1');
  const jar = new CookieJar();
  jar.rewrite = { from: PUBLIC, to: before.url };
  const c = await connectedClient(before.url, key, { jar, resource: `${PUBLIC}/mcp` });
  expect((await mcpPost(before.url, c.accessToken, INITIALIZE)).status).toBe(200);
  const jwks = (await before.get('/oauth/jwks')).body;
  await before.close();

  const after = await start();
  current = after;
  jar.rewrite = { from: PUBLIC, to: after.url };
  expect((await after.get('/oauth/jwks')).body).toEqual(jwks);
  // The access token issued before the restart still works, and the refresh token still refreshes.
  expect((await mcpPost(after.url, c.accessToken, INITIALIZE)).status).toBe(200);
  const refreshed = await tokenRequest(after.url, {
    grant_type: 'refresh_token',
    refresh_token: c.refreshToken,
    client_id: c.clientId,
  });
  expect(refreshed.status).toBe(200);
  expect((await mcpPost(after.url, refreshed.body.access_token, INITIALIZE)).status).toBe(200);
  // The browser's sign-in (cookie and session) is still good: a new authorization goes straight to consent.
  const other = await register(after.url, nativeClient('http://127.0.0.1:9/callback'));
  const q = new URLSearchParams({
    response_type: 'code',
    client_id: other.client_id as string,
    redirect_uri: 'http://127.0.0.1:9/callback',
    scope: 'mcp',
    resource: `${PUBLIC}/mcp`,
    code_challenge: pkce().challenge,
    code_challenge_method: 'S256',
  });
  const first = await hop(jar, `${after.url}/oauth/authorize?${q}`);
  const page = await hop(jar, first.location as string);
  expect(page.status).toBe(200);
  expect(page.text).toContain('to use your tollgate account?');
  expect(page.text).not.toContain('name="api_key"');
});
