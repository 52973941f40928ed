import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyApiKey } from '../../auth/api-keys.js';
import { HEADLESS_ARGS } from '../../src/engine/browser.js';
import type { UsageRow } from '../../src/ledger/types.js';
import { formatUsd } from '../../src/lib/money.js';
import { type FakeStripe, startFakeStripe, stripeEnv } from '../fakes/stripe.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { connectedClient, INITIALIZE, mcpPost } from './oauth-helpers.js';

// From nothing to paid calls with only a browser and a test card (Debian's Chromium driven by playwright-core):
// sign up and see the key once, add a card on the fake Stripe's hosted page, see the 2 USD line, make paid calls,
// watch the usage chart follow the ledger day by day, see the line settled, top up, create and revoke a key, and
// change and revoke a connected OAuth app. Each step is screenshotted into test-output/account/; the chart's
// bars and the tables are held to the ledger's numbers. The pages run only their one hashed script (the Copy
// button), so a CSP complaint fails it.

const SHOTS = join(import.meta.dirname, '..', '..', 'test-output', 'account');
const CHROMIUM = process.env.TOLLGATE_CHROMIUM_PATH ?? '/usr/bin/chromium';
const DAY = 86_400_000;

let fake: FakeStripe;
let t: TestGateway;
let browser: Browser;
const offset = { ms: 0 };

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  fake = await startFakeStripe();
  t = await startGateway({
    env: {
      ...stripeEnv(fake),
      TOLLGATE_SIGNUP: 'open',
      TOLLGATE_SETTLE_THRESHOLD_USD: '1',
      // The test runs the scheduler's passes itself.
      TOLLGATE_SETTLE_CHECK_SECONDS: '3600',
      TOLLGATE_OAUTH_SIGNIN_ATTEMPTS_PER_MINUTE: '1000',
    },
    clock: { now: () => Date.now() + offset.ms },
    handlers: {
      'propstats/value-estimate': async () => ({
        price: 1,
        priceRangeLow: 1,
        priceRangeHigh: 2,
        comparables: [],
      }),
      'scraperC/scrape': { run: async () => ({ raw: 'ok' }) },
    },
  });
  fake.webhookUrl = `${t.url}/billing/stripe/webhook`;
  browser = await chromium.launch({ executablePath: CHROMIUM, args: HEADLESS_ARGS, headless: true });
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
  await fake?.close();
});

const shot = (page: Page, name: string) =>
  page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });

/** Moves the gateway's clock (and the fake's, so its webhook signatures stay fresh) by whole days. */
function setDay(days: number) {
  offset.ms = days * DAY;
  fake.clockOffsetMs = offset.ms;
}

async function micros(page: Page, selector: string): Promise<number> {
  return Number(await page.locator(selector).getAttribute('data-micros'));
}

/** What the chart draws: day → service → micros, from its bars' data attributes. */
async function chartBars(
  page: Page,
  size: 'wide' | 'narrow' = 'wide',
): Promise<Record<string, Record<string, number>>> {
  const bars = await page
    .locator(`#usage svg.${size} rect[data-day]`)
    .evaluateAll((els) =>
      els.map((e) => [
        e.getAttribute('data-day'),
        e.getAttribute('data-service'),
        e.getAttribute('data-micros'),
      ]),
    );
  const out: Record<string, Record<string, number>> = {};
  for (const [day, service, m] of bars) {
    out[day as string] = { ...out[day as string], [service as string]: Number(m) };
  }
  return out;
}

function ledgerBars(rows: UsageRow[]): Record<string, Record<string, number>> {
  const out: Record<string, Record<string, number>> = {};
  for (const r of rows) if (r.micros > 0) out[r.day] = { ...out[r.day], [r.service]: r.micros };
  return out;
}

describe('the account dashboard in Chromium', () => {
  it('[account:dashboard-in-browser] [account:chart-matches-ledger] [account:signup] [account:apps] sign up, card, line, paid calls, usage, settlement, top-up, keys, apps', async () => {
    const context = await browser.newContext({
      viewport: { width: 1200, height: 900 },
      acceptDownloads: true,
    });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error' || m.type() === 'warning') problems.push(m.text());
    });
    page.on('pageerror', (e) => problems.push(e.message));

    // ---- from the landing page to an account, the key shown once -------------------------------------------
    await page.goto(`${t.url}/`);
    await expect(page.title()).resolves.toBe('Pay-per-call services for AI agents · tollgate');
    expect(await page.getByRole('link', { name: '/openapi.json' }).getAttribute('href')).toBe(
      '/openapi.json',
    );
    expect(await page.getByText(`${t.url}/mcp`, { exact: true }).count()).toBe(1);
    await shot(page, '01-landing');
    await page.getByRole('link', { name: 'create one' }).click();
    await page.getByLabel('Name of the account').fill('Ada');
    await page.getByRole('button', { name: 'Create my account' }).click();
    await page.getByRole('heading', { name: 'Your account is ready' }).waitFor();
    const key = (await page.locator('#api-key').textContent()) as string;
    expect(key).toMatch(/^tg_sk_/);
    await shot(page, '02-api-key-shown-once');
    await page.getByRole('link', { name: 'I stored it: go to my dashboard' }).click();
    await page.getByRole('heading', { name: 'Your account: Ada' }).waitFor();
    expect(await page.content()).not.toContain(key);
    const signedUp = await verifyApiKey(t.gw.ledger, key);
    if (!signedUp.ok) throw new Error('the key shown does not work');
    const accountId = signedUp.principal.accountId;
    expect(await micros(page, '#credit-line')).toBe(0);
    expect(await page.getByText('Add a card to get a $2.00 credit line').count()).toBe(1);
    await shot(page, '03-new-account');
    const call = (action: string, body: unknown) => t.post(`/api/run/${action}`, body, { key });
    expect((await call('scraperC/scrape', { url: 'http://127.0.0.1:9/' })).status).toBe(402);

    // ---- a card on the processor's hosted page: the 2 USD line ----------------------------------------------
    await page.getByRole('button', { name: 'Add a card' }).click();
    await page.waitForURL(`${fake.url}/c/pay/**`);
    await page.getByLabel('Card number').fill('4242 4242 4242 4242');
    await shot(page, '04-hosted-card-page');
    await page.getByRole('button', { name: 'Save card' }).click();
    await page.getByRole('heading', { name: 'Card saved' }).waitFor();
    await page.getByRole('link', { name: 'Back to your dashboard' }).click();
    expect(await micros(page, '#credit-line')).toBe(2_000_000);
    expect(await page.locator('#credit-line').textContent()).toBe('$2.00');
    expect(await page.locator('#card-on-file').textContent()).toContain('visa ending 4242');
    await shot(page, '05-card-and-line');

    // ---- paid calls on three days: the chart follows the ledger -------------------------------------------
    setDay(-2);
    for (let i = 0; i < 3; i++)
      expect((await call('scraperC/scrape', { url: 'http://127.0.0.1:9/' })).status).toBe(200);
    setDay(-1);
    expect((await call('propstats/value-estimate', { address: '1 Main St, Austin, TX' })).status).toBe(200);
    setDay(0);
    await page.reload();
    const before = await chartBars(page);
    for (let i = 0; i < 2; i++)
      expect((await call('propstats/value-estimate', { address: '1 Main St, Austin, TX' })).status).toBe(200);
    expect((await call('scraperC/scrape', { url: 'http://127.0.0.1:9/' })).status).toBe(200);
    await page.reload();
    const usage = await t.gw.ledger.usageByDay(accountId, { fromMs: Date.now() - 30 * DAY });
    const bars = await chartBars(page);
    expect(bars).toEqual(ledgerBars(usage));
    expect(bars).not.toEqual(before);
    const today = new Date().toISOString().slice(0, 10);
    expect(bars[today]).toEqual({ propstats: 700_000, scraperC: 10_000 });
    const total = usage.reduce((s, r) => s + r.micros, 0);
    expect(total).toBe(1_090_000);
    expect(await micros(page, '#usage-total')).toBe(total);
    expect(await page.locator('#usage .chart svg.wide').getAttribute('data-total-micros')).toBe(
      String(total),
    );
    expect(await chartBars(page, 'narrow'), 'the phone drawing shows the same bars').toEqual(bars);
    expect(await page.locator('#usage-total').textContent()).toBe(formatUsd(total));
    expect(await page.getByRole('list', { name: 'Services' }).textContent()).toContain('propstats $1.05');
    // The table under the chart carries the same numbers.
    await page.getByText('The same as a table').click();
    const tableRows = await page
      .locator('#usage-table tbody tr')
      .evaluateAll((rows) =>
        rows.map((r) =>
          Array.from(r.querySelectorAll('td')).map((c) => c.getAttribute('data-micros') ?? c.textContent),
        ),
      );
    expect(tableRows).toEqual(
      usage.filter((r) => r.micros > 0).map((r) => [r.day, r.service, String(r.micros)]),
    );
    expect(await micros(page, '#drawn')).toBe(1_090_000);
    expect(await micros(page, '#available')).toBe(910_000);
    await page.locator('#usage').screenshot({ path: join(SHOTS, '06-usage-chart.png') });
    await shot(page, '07-after-paid-calls');

    // ---- the card settles what was drawn (threshold 1.00 USD) ------------------------------------------------
    await t.gw.billing?.scheduler.tick();
    await page.reload();
    expect(await micros(page, '#drawn')).toBe(0);
    expect(await micros(page, '#available')).toBe(2_000_000);
    const settled = page.locator('#payments-table tbody tr', { hasText: 'settlement' });
    expect(await settled.locator('td[data-micros]').getAttribute('data-micros')).toBe('1090000');
    expect(await settled.textContent()).toContain('succeeded');

    // ---- top up by card -------------------------------------------------------------------------------------
    await page.getByLabel(/Amount \(USD/).fill('10');
    await page.getByRole('button', { name: 'Top up by card' }).click();
    await page.waitForURL(`${fake.url}/c/pay/**`);
    await page.getByRole('button', { name: 'Pay $10.00' }).click();
    await page.getByRole('heading', { name: 'Top-up received' }).waitFor();
    await page.getByRole('link', { name: 'Back to your dashboard' }).click();
    expect(await micros(page, '#prepaid')).toBe(10_000_000);
    expect(await micros(page, '#available')).toBe(12_000_000);
    expect((await t.gw.ledger.balance(accountId)).balance_micros).toBe(10_000_000);
    await shot(page, '08-after-top-up');

    // ---- the history: filters and CSV hold the ledger's numbers ------------------------------------------------
    await page.getByLabel('Kind').selectOption('payments');
    await page.getByRole('button', { name: 'Filter' }).click();
    const payments = await page
      .locator('#tx-table tbody tr')
      .evaluateAll((rows) =>
        rows.map((r) => [
          r.children[1]?.textContent,
          r.querySelector('td[data-micros]')?.getAttribute('data-micros'),
        ]),
      );
    expect(payments).toEqual([
      ['topup', '10000000'],
      ['settlement', '1090000'],
      ['line', '0'],
    ]);
    const download = page.waitForEvent('download');
    await page.getByRole('link', { name: 'Download CSV' }).click();
    const csv = readFileSync((await (await download).path()) as string, 'utf8');
    expect(csv).toContain(',topup,account/topup,succeeded,10.00,10000000,');
    expect(csv).not.toContain(',call,');
    await shot(page, '09-payments-filtered');

    // ---- API keys: create (shown once), revoke ---------------------------------------------------------------
    await page.goto(`${t.url}/account#keys`);
    await page.getByLabel('Name of a new key').fill('laptop');
    await page.getByRole('button', { name: 'Create a key' }).click();
    const laptop = (await page.locator('#new-api-key').textContent()) as string;
    expect((await t.post('/api/run/platform/balance', {}, { key: laptop })).status).toBe(200);
    await shot(page, '10-new-key');
    const prefix = `${laptop.slice(0, 10)}…`;
    await page.getByRole('button', { name: `Revoke key ${prefix}` }).click();
    await page.getByText('The key was revoked').waitFor();
    expect((await t.post('/api/run/platform/balance', {}, { key: laptop })).status).toBe(401);
    expect((await t.post('/api/run/platform/balance', {}, { key })).status).toBe(200);

    // ---- a connected OAuth app: its daily limit changed, then disconnected -----------------------------------
    const app = await connectedClient(t.url, key, { dailyLimit: '5' });
    expect((await mcpPost(t.url, app.accessToken, INITIALIZE)).status).toBe(200);
    await page.goto(`${t.url}/account#apps`);
    const row = page.locator('#apps-table tbody tr', { hasText: 'Test MCP host' });
    expect(await row.locator('td[data-micros]').getAttribute('data-micros')).toBe('5000000');
    await row.getByLabel('Amount (USD)').fill('2.50');
    await row.getByRole('button', { name: 'Change the daily limit of Test MCP host' }).click();
    await page.getByText('The daily limit was changed.').waitFor();
    expect(
      await page
        .locator('#apps-table tbody tr', { hasText: 'Test MCP host' })
        .locator('td[data-micros]')
        .getAttribute('data-micros'),
    ).toBe('2500000');
    await shot(page, '11-connected-app');
    await page.getByRole('button', { name: 'Disconnect Test MCP host' }).click();
    await page.getByText('The app was disconnected').waitFor();
    expect((await mcpPost(t.url, app.accessToken, INITIALIZE)).status).toBe(401);
    expect(await page.locator('#apps-table').textContent()).toContain('No apps connected.');
    await shot(page, '12-app-disconnected');

    expect(problems).toEqual([]);
    await context.close();
  }, 120_000);
});
