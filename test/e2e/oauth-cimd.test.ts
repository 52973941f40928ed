import { mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport, UnauthorizedError } from '@modelcontextprotocol/client';
import { UnauthorizedError as V1UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HEADLESS_ARGS } from '../../src/engine/browser.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { startTlsSite, TEST_CA, type TlsSite } from '../helpers/tls-site.js';
import { expireToken, MemoryOAuthProvider, signInAndConsent } from './oauth-helpers.js';

// A host that identifies itself with a client ID metadata document instead of registering, played by the
// official SDK clients' own CIMD support (`clientMetadataUrl`: v2, and v1 as most hosts ship it). Its document
// is served over https on 127.0.0.1 (let through by TOLLGATE_FETCH_ALLOW, signed by the test CA the gateway is
// given). The v2 host's user goes through sign-in and consent in headless Chromium; screenshots land in
// test-output/oauth/.

const SHOTS = join(import.meta.dirname, '..', '..', 'test-output', 'oauth');
const CHROMIUM = process.env.TOLLGATE_CHROMIUM_PATH ?? '/usr/bin/chromium';

let t: TestGateway;
let site: TlsSite;
let browser: Browser;
let callbackServer: Server;
let hostUrl: string;

/** The SDKs' provider plus the one field that makes them use a metadata document. */
class DocumentHost extends MemoryOAuthProvider {
  constructor(
    redirectUrl: string,
    name: string,
    readonly clientMetadataUrl: string,
  ) {
    super(redirectUrl, name);
  }
}

/** Publishes a host's metadata document (cacheable for 5 minutes) and returns its URL, the client id. */
function publish(path: string, name: string, redirectUri: string): string {
  const id = `${site.url}${path}`;
  site.route(path, (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'public, max-age=300' });
    res.end(
      JSON.stringify({
        client_id: id,
        client_name: name,
        client_uri: site.url,
        redirect_uris: [redirectUri],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
      }),
    );
  });
  return id;
}

const registeredClients = async () =>
  (
    await t.gw.state.stores
      .selectFrom('oauth_store')
      .select('id_hash')
      .where('model', '=', 'Client')
      .execute()
  ).length;

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  site = await startTlsSite();
  t = await startGateway({
    env: { TOLLGATE_OAUTH_SIGNIN_ATTEMPTS_PER_MINUTE: '1000' },
    handlers: { 'scraperC/scrape': { run: async () => ({ raw: 'ok' }) } },
    metadataFetchCa: TEST_CA,
  });
  callbackServer = createServer((_req, res) => {
    res.setHeader('content-type', 'text/html');
    res.end('<!doctype html><html lang="en"><title>Connected</title><h1>Connected.</h1>');
  });
  await new Promise<void>((r) => callbackServer.listen(0, '127.0.0.1', r));
  hostUrl = `http://127.0.0.1:${(callbackServer.address() as AddressInfo).port}`;
  browser = await chromium.launch({ executablePath: CHROMIUM, args: HEADLESS_ARGS, headless: true });
});
afterAll(async () => {
  await browser?.close();
  callbackServer?.closeAllConnections();
  await new Promise((r) => callbackServer?.close(r));
  await t?.close();
  await site?.close();
});

const ARGS = { name: 'scraperC_scrape', arguments: { url: 'http://127.0.0.1:9/' } };

describe('a host with a client ID metadata document', () => {
  it('[oauth:cimd] [oauth:sdk-clients] [oauth:pages-in-browser] the v2 SDK connects without registering; the user signs in and consents in Chromium', async () => {
    const { accountId, key } = await t.account('1');
    const clientId = publish('/hosts/v2/client.json', 'Document Host', `${hostUrl}/callback`);
    const provider = new DocumentHost(`${hostUrl}/callback`, 'Document Host', clientId);
    const url = new URL(`${t.url}/mcp`);
    const clientsBefore = await registeredClients();

    await expect(
      new Client({ name: 'v2 host', version: '1' }).connect(
        new StreamableHTTPClientTransport(url, { authProvider: provider as never }),
      ),
    ).rejects.toBeInstanceOf(UnauthorizedError);
    // The SDK saw client_id_metadata_document_supported and used its URL as the client id: no registration.
    expect(provider.clientInformation()?.client_id).toBe(clientId);
    const authUrl = provider.authorizationUrl as URL;
    expect(authUrl.searchParams.get('client_id')).toBe(clientId);

    const context = await browser.newContext({ viewport: { width: 800, height: 900 } });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error' || m.type() === 'warning') problems.push(m.text());
    });
    page.on('pageerror', (e) => problems.push(e.message));
    await page.goto(authUrl.href);
    await page.getByRole('heading', { name: 'Sign in to connect Document Host' }).waitFor();
    const host = new URL(clientId).host;
    expect(
      await page.getByText(`Document Host (from ${host}) wants to use your tollgate account`).count(),
    ).toBe(1);
    await page.screenshot({ path: join(SHOTS, 'cimd-1-sign-in.png'), fullPage: true });
    await page.getByLabel('API key').fill(key);
    await page.getByRole('button', { name: 'Sign in with API key' }).click();
    await page.getByRole('heading', { name: 'Allow Document Host to use your tollgate account?' }).waitFor();
    expect(await page.locator('dt', { hasText: 'Published by' }).count()).toBe(1);
    expect(await page.locator('dd strong', { hasText: host }).count()).toBe(1);
    expect(await page.getByText(clientId).count()).toBe(1);
    await page.screenshot({ path: join(SHOTS, 'cimd-2-consent.png'), fullPage: true });
    await page.getByRole('radio', { name: '$1.00 per day' }).check();
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.waitForURL(`${hostUrl}/callback?**`);
    await context.close();

    await new StreamableHTTPClientTransport(url, { authProvider: provider as never }).finishAuth(
      new URL(page.url()).searchParams,
    );
    const client = new Client({ name: 'v2 host', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(url, { authProvider: provider as never }));
    const r = (await client.callTool(ARGS)) as { isError?: boolean; structuredContent?: unknown };
    await client.close();
    expect(r.isError).toBeFalsy();
    expect(r.structuredContent).toMatchObject({ raw: 'ok', charged_cents: 1 });
    expect((await t.gw.ledger.balance(accountId)).balance_micros).toBe(990_000);
    const [tx] = await t.gw.ledger.transactions(accountId, 1);
    expect(tx).toMatchObject({ payment_method: 'oauth', principal: `oauth:${clientId}` });

    expect(await registeredClients()).toBe(clientsBefore);
    // One fetch served the authorization request, both pages, the token request and the call (max-age=300).
    expect(site.hits.get('/hosts/v2/client.json')).toBe(1);
    expect(problems).toEqual([]);
  });

  it('[oauth:cimd] [oauth:sdk-clients] [oauth:refresh-rotation] the v1 SDK connects the same way and refreshes its tokens', async () => {
    const { accountId, key } = await t.account('1');
    const redirect = 'http://127.0.0.1:9/oauth/callback';
    const clientId = publish('/hosts/v1/client.json', 'Document Host v1', redirect);
    const provider = new DocumentHost(redirect, 'Document Host v1', clientId);
    const url = new URL(`${t.url}/mcp`);
    const clientsBefore = await registeredClients();

    await expect(
      new V1Client({ name: 'v1 host', version: '1' }).connect(
        new V1Transport(url, { authProvider: provider as never }),
      ),
    ).rejects.toBeInstanceOf(V1UnauthorizedError);
    expect(provider.clientInformation()?.client_id).toBe(clientId);
    const { callback, pages } = await signInAndConsent((provider.authorizationUrl as URL).href, redirect, {
      apiKey: key,
    });
    expect(pages.map((p) => /<h1>([^<]+)<\/h1>/.exec(p.text)?.[1])).toEqual([
      'Sign in to connect Document Host v1',
      'Allow Document Host v1 to use your tollgate account?',
    ]);
    await new V1Transport(url, { authProvider: provider as never }).finishAuth(
      callback.searchParams.get('code') as string,
    );
    const client = new V1Client({ name: 'v1 host', version: '1' });
    await client.connect(new V1Transport(url, { authProvider: provider as never }));
    expect(((await client.callTool(ARGS)) as { isError?: boolean }).isError).toBeFalsy();

    // The access token expires; the host refreshes as the document's client and the call goes through.
    const old = provider.tokens();
    await expireToken(t.gw, old.access_token);
    expect(((await client.callTool(ARGS)) as { isError?: boolean }).isError).toBeFalsy();
    expect(provider.tokens().refresh_token).not.toBe(old.refresh_token);
    await client.close();
    expect((await t.gw.ledger.balance(accountId)).balance_micros).toBe(980_000);
    expect(await registeredClients()).toBe(clientsBefore);
  });
});
