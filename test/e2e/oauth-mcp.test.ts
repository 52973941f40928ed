import { Client, StreamableHTTPClientTransport, UnauthorizedError } from '@modelcontextprotocol/client';
import { UnauthorizedError as V1UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { expireToken, INITIALIZE, MemoryOAuthProvider, mcpPost, signInAndConsent } from './oauth-helpers.js';

// An MCP host that knows only the /mcp URL, played by the official SDK clients' OAuth support (v2, and v1 as
// most hosts ship it): discovery from the 401, registration, authorization with sign-in and consent, token,
// paid calls charged to the signed-in account, refresh when the access token expires, and revocation.

let t: TestGateway;
beforeAll(async () => {
  t = await startGateway({
    env: { TOLLGATE_OAUTH_SIGNIN_ATTEMPTS_PER_MINUTE: '1000' },
    handlers: { 'scraperC/scrape': { run: async () => ({ raw: 'ok' }) } },
  });
});
afterAll(() => t.close());

interface Host {
  connect(): Promise<void>;
  /** Completes the authorization with the redirect the user's browser ended on. */
  finish(callback: URL): Promise<void>;
  call(): Promise<{ isError?: boolean; structuredContent?: Record<string, unknown> }>;
  close(): Promise<void>;
}

function host(kind: 'v2' | 'v1', provider: MemoryOAuthProvider): Host {
  const url = new URL(`${t.url}/mcp`);
  const args = { name: 'scraperC_scrape', arguments: { url: 'http://127.0.0.1:9/' } };
  if (kind === 'v1') {
    let client = new V1Client({ name: 'v1 host', version: '1' });
    let transport = new V1Transport(url, { authProvider: provider as never });
    return {
      connect: () => client.connect(transport),
      finish: async (cb) => {
        await transport.finishAuth(cb.searchParams.get('code') as string);
        client = new V1Client({ name: 'v1 host', version: '1' });
        transport = new V1Transport(url, { authProvider: provider as never });
      },
      call: () => client.callTool(args) as never,
      close: () => client.close(),
    };
  }
  let client = new Client({ name: 'v2 host', version: '1' });
  let transport = new StreamableHTTPClientTransport(url, { authProvider: provider as never });
  return {
    connect: () => client.connect(transport),
    finish: async (cb) => {
      // v2 checks the callback's iss (RFC 9207) against the discovered issuer.
      await transport.finishAuth(cb.searchParams);
      client = new Client({ name: 'v2 host', version: '1' });
      transport = new StreamableHTTPClientTransport(url, { authProvider: provider as never });
    },
    call: () => client.callTool(args) as never,
    close: () => client.close(),
  };
}

describe.each(['v2', 'v1'] as const)('an MCP host on the %s SDK', (kind) => {
  const provider = new MemoryOAuthProvider('http://127.0.0.1:9/oauth/callback', `${kind} test host`);
  let account: { accountId: string; key: string };
  let h: Host;
  beforeAll(async () => {
    account = await t.account('1');
    h = host(kind, provider);
  });
  afterAll(() => h.close());

  it('[oauth:sdk-clients] [oauth:same-account] discovers, registers, signs in, consents and makes a paid call on the account', async () => {
    const unauthorized = kind === 'v2' ? UnauthorizedError : V1UnauthorizedError;
    await expect(h.connect()).rejects.toBeInstanceOf(unauthorized);
    const authUrl = provider.authorizationUrl as URL;
    expect(authUrl.origin + authUrl.pathname).toBe(`${t.url}/oauth/authorize`);
    expect(authUrl.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authUrl.searchParams.get('resource')).toBe(`${t.url}/mcp`);
    expect(authUrl.searchParams.get('scope')).toContain('mcp');
    expect(provider.clientInformation()?.client_id).toBeDefined();

    const { callback, pages } = await signInAndConsent(authUrl.href, provider.redirectUrl, {
      apiKey: account.key,
    });
    expect(pages.map((p) => /<h1>([^<]+)<\/h1>/.exec(p.text)?.[1])).toEqual([
      `Sign in to connect ${kind} test host`,
      `Allow ${kind} test host to use your tollgate account?`,
    ]);
    expect(callback.searchParams.get('iss')).toBe(t.url);
    await h.finish(callback);
    expect(provider.tokens()?.refresh_token).toBeDefined();

    await h.connect();
    const r = await h.call();
    expect(r.isError).toBeFalsy();
    expect(r.structuredContent).toMatchObject({ raw: 'ok', charged_cents: 1 });
    expect((await t.gw.ledger.balance(account.accountId)).balance_micros).toBe(990_000);
    const [tx] = await t.gw.ledger.transactions(account.accountId, 1);
    expect(tx).toMatchObject({
      payment_method: 'oauth',
      principal: `oauth:${provider.clientInformation()?.client_id}`,
    });
  });

  it('[oauth:refresh-rotation] an expired access token is refreshed by the host and the call goes through', async () => {
    const old = provider.tokens();
    await expireToken(t.gw, old.access_token);
    const r = await h.call();
    expect(r.isError).toBeFalsy();
    expect(provider.tokens().access_token).not.toBe(old.access_token);
    expect(provider.tokens().refresh_token).not.toBe(old.refresh_token);
    expect((await t.gw.ledger.balance(account.accountId)).balance_micros).toBe(980_000);
  });

  it('[oauth:revocation] after the host revokes its refresh token, its calls are refused', async () => {
    const { refresh_token } = provider.tokens();
    const res = await fetch(`${t.url}/oauth/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: refresh_token, client_id: provider.clientInformation()?.client_id }),
    });
    expect(res.status).toBe(200);
    // The call gets 401; the host's refresh is refused too (the whole grant is gone), so it gives up.
    const err = await h.call().then(
      () => undefined,
      (e: Error) => e,
    );
    expect(err?.message).toMatch(/grant request is invalid/);
    const { access_token } = provider.tokens();
    expect((await mcpPost(t.url, access_token, INITIALIZE)).status).toBe(401);
    expect((await t.gw.ledger.balance(account.accountId)).balance_micros).toBe(980_000);
  });
});
