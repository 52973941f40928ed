import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectedClient, INITIALIZE, mcpPost } from '../e2e/oauth-helpers.js';
import { runCli } from '../helpers/cli.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

// The operator's view of OAuth grants: `tollgate oauth list|revoke`, run against the live gateway's database.

let t: TestGateway;
beforeAll(async () => {
  t = await startGateway({ env: { TOLLGATE_OAUTH_SIGNIN_ATTEMPTS_PER_MINUTE: '1000' } });
});
afterAll(() => t.close());

function cli(...args: string[]) {
  // The gateway's own database: its data dir, or (TOLLGATE_TEST_BACKEND=postgres) its PostgreSQL.
  const database = t.config.database ? { TOLLGATE_DATABASE_URL: t.config.database.url } : {};
  const r = runCli(['--json', ...args], {
    cwd: t.dataDir,
    env: { TOLLGATE_DATA_DIR: t.dataDir, ...database },
  });
  return { code: r.code, json: r.stdout.trim() ? JSON.parse(r.stdout) : undefined, stderr: r.stderr };
}

describe('tollgate oauth', () => {
  it('[oauth:operator-revoke] lists the apps connected to an account, and revoking one cuts it off at once', async () => {
    const acct = await t.account('1');
    const a = await connectedClient(t.url, acct.key, { dailyLimit: 'custom', customUsd: '0.50' });
    const b = await connectedClient(t.url, acct.key);
    expect((await mcpPost(t.url, a.accessToken, INITIALIZE)).status).toBe(200);

    const listed = cli('oauth', 'list', acct.accountId);
    expect(listed.code).toBe(0);
    expect(listed.json.grants.map((g: { client_id: string }) => g.client_id).sort()).toEqual(
      [a.clientId, b.clientId].sort(),
    );
    expect(
      listed.json.grants.find((g: { client_id: string }) => g.client_id === a.clientId).daily_limit_micros,
    ).toBe(500_000);

    const revoked = cli('oauth', 'revoke', acct.accountId, '--', a.clientId);
    expect(revoked.json).toEqual({ account_id: acct.accountId, client_id: a.clientId, revoked_grants: 1 });
    // The revoked app's access token is refused on its next request; the refresh token no longer works either.
    expect((await mcpPost(t.url, a.accessToken, INITIALIZE)).status).toBe(401);
    const refresh = await fetch(`${t.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: a.refreshToken,
        client_id: a.clientId,
      }),
    });
    expect(refresh.status).toBe(400);
    // The other app is untouched.
    expect((await mcpPost(t.url, b.accessToken, INITIALIZE)).status).toBe(200);
    expect(cli('oauth', 'list', acct.accountId).json.grants).toHaveLength(1);
    expect(cli('oauth', 'revoke', acct.accountId, '--', a.clientId).code).toBe(2);
  }, 60_000);
});
