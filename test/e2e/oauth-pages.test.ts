import { mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HEADLESS_ARGS } from '../../src/engine/browser.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { MemoryOAuthProvider } from './oauth-helpers.js';
import { listenUpstream, type Upstream, upstreamEnv } from './oauth-upstream.js';

// The sign-in and consent pages in a real browser (Debian's Chromium driven by playwright-core): an MCP host
// sends its user to the authorization URL; the user fills and submits the forms; each page is screenshotted
// into test-output/oauth/. The pages load nothing but themselves, so any CSP complaint fails the test.

const SHOTS = join(import.meta.dirname, '..', '..', 'test-output', 'oauth');
const CHROMIUM = process.env.TOLLGATE_CHROMIUM_PATH ?? '/usr/bin/chromium';
// The engine's headless flags (HEADLESS_ARGS) without its dead-proxy wall: this browser must reach the gateway.

let t: TestGateway;
let up: Upstream;
let browser: Browser;
let host: Server;
let hostUrl: string;

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  up = await listenUpstream();
  t = await startGateway({
    env: {
      ...upstreamEnv(up),
      TOLLGATE_OAUTH_SIGNIN_ATTEMPTS_PER_MINUTE: '1000',
    },
    handlers: { 'scraperC/scrape': { run: async () => ({ raw: 'ok' }) } },
  });
  up.start(`${t.url}/oauth/federated/callback`);
  // The MCP host's loopback redirect target, as a desktop host runs it.
  host = createServer((_req, res) => {
    res.setHeader('content-type', 'text/html');
    res.end(
      '<!doctype html><html lang="en"><title>Connected</title><h1>Connected. You can close this window.</h1>',
    );
  });
  await new Promise<void>((r) => host.listen(0, '127.0.0.1', r));
  hostUrl = `http://127.0.0.1:${(host.address() as AddressInfo).port}`;
  browser = await chromium.launch({ executablePath: CHROMIUM, args: HEADLESS_ARGS, headless: true });
});
afterAll(async () => {
  await browser?.close();
  host?.closeAllConnections();
  await new Promise((r) => host?.close(r));
  await t?.close();
  await up?.close();
});

/** A v2 SDK host that has been refused (401), discovered and registered; returns where it sends the user. */
async function startHost(name: string) {
  const provider = new MemoryOAuthProvider(`${hostUrl}/callback`, name);
  const url = new URL(`${t.url}/mcp`);
  await new Client({ name, version: '1' })
    .connect(new StreamableHTTPClientTransport(url, { authProvider: provider as never }))
    .catch(() => undefined);
  expect(provider.authorizationUrl).toBeDefined();
  return {
    provider,
    /** Completes the flow with the URL the browser landed on, then makes one paid call. */
    async finishAndCall(landed: string) {
      const transport = new StreamableHTTPClientTransport(url, { authProvider: provider as never });
      await transport.finishAuth(new URL(landed).searchParams);
      const client = new Client({ name, version: '1' });
      await client.connect(new StreamableHTTPClientTransport(url, { authProvider: provider as never }));
      const r = await client.callTool({ name: 'scraperC_scrape', arguments: { url: 'http://127.0.0.1:9/' } });
      await client.close();
      return r;
    },
  };
}

async function newPage(): Promise<{ page: Page; problems: string[] }> {
  const context = await browser.newContext({ viewport: { width: 800, height: 900 } });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (m) => {
    // The refused sign-in answers 401 on purpose; anything else (a CSP refusal above all) is a problem.
    if ((m.type() === 'error' || m.type() === 'warning') && !m.text().includes('status of 401')) {
      problems.push(m.text());
    }
  });
  page.on('pageerror', (e) => problems.push(e.message));
  return { page, problems };
}

const shot = (page: Page, name: string) =>
  page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });

describe('the pages in Chromium', () => {
  it('[oauth:pages-in-browser] [oauth:api-key-sign-in] [oauth:daily-limit] sign in with an API key, consent with a limit, call', async () => {
    const { accountId, key } = await t.account('1');
    const h = await startHost('Browser Test Host');
    const { page, problems } = await newPage();
    await page.goto((h.provider.authorizationUrl as URL).href);

    await expect(page.title()).resolves.toBe('Sign in · tollgate');
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(
      'Sign in to connect Browser Test Host',
    );
    // Keyboard first: the first Tab stop is the API key field.
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('api_key');
    await shot(page, '1-sign-in');

    await page.getByLabel('API key').fill('tg_sk_not-a-real-key');
    await page.getByRole('button', { name: 'Sign in with API key' }).click();
    await expect(page.getByRole('alert').textContent()).resolves.toContain('That API key was not accepted');
    await shot(page, '2-sign-in-refused');

    await page.getByLabel('API key').fill(key);
    await page.getByRole('button', { name: 'Sign in with API key' }).click();
    await page
      .getByRole('heading', { name: 'Allow Browser Test Host to use your tollgate account?' })
      .waitFor();
    expect(await page.getByText('$1.00 available').count()).toBe(1);
    expect(await page.getByRole('radio', { name: '$5.00 per day' }).isChecked()).toBe(true);
    await shot(page, '3-consent');

    await page.getByRole('radio', { name: 'Another daily limit (USD)' }).check();
    await page.getByLabel('Amount in USD per day').fill('3.50');
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.waitForURL(`${hostUrl}/callback?**`);
    await shot(page, '4-back-at-the-host');

    const r = await h.finishAndCall(page.url());
    expect(r.isError).toBeFalsy();
    expect((await t.gw.ledger.balance(accountId)).balance_micros).toBe(990_000);
    const limit = await t.gw.state.stores
      .selectFrom('oauth_client_limits')
      .select('daily_limit_micros')
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    expect(limit?.daily_limit_micros).toBe(3_500_000);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('[oauth:pages-in-browser] [oauth:federated-sign-in] sign in through the upstream provider, then consent', async () => {
    up.user = 'dana';
    const h = await startHost('Federated Browser Host');
    const { page, problems } = await newPage();
    await page.goto((h.provider.authorizationUrl as URL).href);
    await page.getByRole('button', { name: 'Sign in with Example ID' }).click();
    await page
      .getByRole('heading', { name: 'Allow Federated Browser Host to use your tollgate account?' })
      .waitFor();
    // A new account starts empty: its welcome credit line comes with a card on file (the dashboard's job).
    expect(await page.getByText('$0.00 available').count()).toBe(1);
    await shot(page, '5-consent-after-upstream-sign-in');
    await page.getByRole('radio', { name: 'No daily limit: up to the whole balance' }).check();
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.waitForURL(`${hostUrl}/callback?**`);
    const dana = await t.gw.state.stores
      .selectFrom('oauth_identities')
      .select('account_id as id')
      .where('subject', '=', 'dana')
      .executeTakeFirstOrThrow();
    await t.gw.ledger.credit(dana.id, 1_000_000, 'test credit');
    const r = await h.finishAndCall(page.url());
    expect(r.isError).toBeFalsy();
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('[oauth:pages-in-browser] denying at consent returns access_denied to the host', async () => {
    const { key } = await t.account('1');
    const h = await startHost('Denied Host');
    const { page } = await newPage();
    await page.goto((h.provider.authorizationUrl as URL).href);
    await page.getByLabel('API key').fill(key);
    await page.getByLabel('API key').press('Enter');
    await page.getByRole('button', { name: 'Deny' }).click();
    await page.waitForURL(`${hostUrl}/callback?**`);
    const back = new URL(page.url());
    expect(back.searchParams.get('error')).toBe('access_denied');
    expect(back.searchParams.get('iss')).toBe(t.url);
    await page.context().close();
  });
});
