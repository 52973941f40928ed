import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyApiKey } from '../../auth/api-keys.js';
import { HEADLESS_ARGS } from '../../src/engine/browser.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { MemoryOAuthProvider } from './oauth-helpers.js';

// Every page at a phone's width (390 CSS px) and a desktop's (1280), in Debian's Chromium: nothing scrolls
// sideways; a transaction reads at a glance as a short card with its amount on its first line; the usage chart is
// drawn for the phone (its labels at least 11 px); the consent page has the site header and Allow beside Deny; the
// landing page has a readable price list; a key shown once stays on one line and has a working Copy button.
// Screenshots go to test-output/widths/.

const SHOTS = join(import.meta.dirname, '..', '..', 'test-output', 'widths');
const CHROMIUM = process.env.TOLLGATE_CHROMIUM_PATH ?? '/usr/bin/chromium';
const WIDTHS = [
  { name: 'phone', width: 390, height: 844, isMobile: true },
  { name: 'desktop', width: 1280, height: 900, isMobile: false },
] as const;

let t: TestGateway;
let browser: Browser;

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  t = await startGateway({
    env: { TOLLGATE_SIGNUP: 'open', TOLLGATE_OAUTH_SIGNIN_ATTEMPTS_PER_MINUTE: '1000' },
    handlers: {
      'scraperC/scrape': { run: async () => ({ raw: 'ok' }) },
      'scraperC/markdown': { run: async () => ({ url: 'https://example.com/', markdown: '# ok' }) },
    },
  });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: HEADLESS_ARGS, headless: true });
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

async function open(
  w: (typeof WIDTHS)[number],
): Promise<{ context: BrowserContext; page: Page; problems: string[] }> {
  const context = await browser.newContext({
    viewport: { width: w.width, height: w.height },
    isMobile: w.isMobile,
    hasTouch: w.isMobile,
  });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: t.url });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') problems.push(m.text());
  });
  page.on('pageerror', (e) => problems.push(e.message));
  return { context, page, problems };
}

/** The page's width against the window's: equal when nothing sticks out sideways. */
async function overflow(page: Page): Promise<{ scroll: number; client: number }> {
  return page.evaluate(() => ({
    scroll: document.documentElement.scrollWidth,
    client: document.documentElement.clientWidth,
  }));
}

async function expectNoSidewaysScroll(page: Page, what: string) {
  const o = await overflow(page);
  expect(o.scroll, `${what}: the page is wider than the window`).toBeLessThanOrEqual(o.client);
}

const shot = (page: Page, name: string) =>
  page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });

describe.each(WIDTHS)('the pages at $width px', (w) => {
  it(`[pages:any-width] landing, sign-up, the key shown once, the dashboard (${w.name})`, async () => {
    const { context, page, problems } = await open(w);
    await page.goto(`${t.url}/`);
    await expectNoSidewaysScroll(page, 'landing');
    // The price list is a table people read, not JSON.
    const prices = page.locator('#price-table tbody tr');
    expect(await prices.count()).toBeGreaterThan(5);
    expect(await page.locator('#price-table').textContent()).toContain('scraperC/markdown');
    expect(await page.locator('#price-table').textContent()).not.toContain('"price_cents"');
    const markdown = page.locator('#price-table tr', { hasText: 'scraperC/markdown' });
    expect(await markdown.locator('td.num').textContent()).toBe('$0.01');
    await shot(page, `${w.name}-1-landing`);

    await page.goto(`${t.url}/account/signup`);
    await expectNoSidewaysScroll(page, 'sign-up');
    await page.getByLabel('Name of the account').fill(`Ada ${w.name}`);
    await page.getByRole('button', { name: 'Create my account' }).click();
    await page.getByRole('heading', { name: 'Your account is ready' }).waitFor();
    await expectNoSidewaysScroll(page, 'the key shown once');
    const shown = page.locator('#api-key');
    const key = ((await shown.textContent()) as string).trim();
    // One line, never broken mid-string: as tall as one line of its font, however narrow the window.
    const box = await shown.evaluate((el) => {
      const cs = getComputedStyle(el);
      const r = el.getBoundingClientRect();
      return {
        height: r.height,
        line: Number.parseFloat(cs.lineHeight) || Number.parseFloat(cs.fontSize) * 1.5,
        pad:
          Number.parseFloat(cs.paddingTop) +
          Number.parseFloat(cs.paddingBottom) +
          Number.parseFloat(cs.borderTopWidth) * 2,
      };
    });
    expect(box.height - box.pad).toBeLessThan(box.line * 1.9);
    await page.getByRole('button', { name: 'Copy the API key' }).click();
    await expect(page.evaluate(() => navigator.clipboard.readText())).resolves.toBe(key);
    expect(await page.getByRole('button', { name: 'Copy the API key' }).textContent()).toBe('Copied');
    await shot(page, `${w.name}-2-key-once`);

    const signedUp = await verifyApiKey(t.gw.ledger, key);
    if (!signedUp.ok) throw new Error('the key shown does not work');
    await t.gw.money.credit(signedUp.principal.accountId, 1_000_000, 'operator', 'test credit');
    for (const [action, body] of [
      ['scraperC/markdown', { url: 'https://example.com/', browser: false }],
      ['scraperC/scrape', { url: 'https://example.com/', browser: false }],
      ['scraperC/markdown', { url: 'https://example.com/a', browser: false }],
    ] as const) {
      expect((await t.post(`/api/run/${action}`, body, { key })).status).toBe(200);
    }
    await page.getByRole('link', { name: 'I stored it: go to my dashboard' }).click();
    await page.getByRole('heading', { name: `Your account: Ada ${w.name}` }).waitFor();
    await expectNoSidewaysScroll(page, 'dashboard');

    // Transactions: each row a short card whose amount is on its first line, inside the window.
    const rows = page.locator('#tx-table tbody tr');
    expect(await rows.count()).toBe(4);
    for (let i = 0; i < 4; i++) {
      const row = rows.nth(i);
      const r = (await row.boundingBox()) as { x: number; y: number; width: number; height: number };
      const what = (await row.locator('td.lead').boundingBox()) as { y: number; height: number };
      const amount = (await row.locator('td.num').boundingBox()) as { x: number; y: number; width: number };
      expect(amount.x + amount.width, 'the amount is inside the window').toBeLessThanOrEqual(w.width);
      expect(Math.abs(amount.y - what.y), 'the amount is on the line of what it paid for').toBeLessThan(
        what.height,
      );
      expect(r.height, 'a row is no taller than a short card').toBeLessThanOrEqual(w.isMobile ? 110 : 60);
    }
    // The column headings: a header row on a desktop; on a phone only for screen readers (1 px, clipped).
    const head = (await page.locator('#tx-table thead').boundingBox()) as { height: number };
    if (w.isMobile) expect(head.height).toBeLessThanOrEqual(1);
    else expect(head.height).toBeGreaterThan(20);
    // The chart drawn for this width: its labels as large on screen as the page's small text.
    const chart = page.locator(`#usage .chart svg.${w.isMobile ? 'narrow' : 'wide'}`);
    expect(await chart.isVisible()).toBe(true);
    expect(await page.locator(`#usage .chart svg.${w.isMobile ? 'wide' : 'narrow'}`).isVisible()).toBe(false);
    const label = await chart.evaluate((svg) => {
      const scale = svg.getBoundingClientRect().width / (svg as SVGSVGElement).viewBox.baseVal.width;
      return Number((svg.querySelector('text') as SVGTextElement).getAttribute('font-size')) * scale;
    });
    expect(label, 'chart labels in CSS px').toBeGreaterThanOrEqual(11);
    // The day labels under the bars stand apart (the last one, today, ends at the edge).
    const days = await chart.evaluate((svg) =>
      Array.from(svg.querySelectorAll('text'))
        .filter((el) => /^\d\d-\d\d$/.test(el.textContent ?? ''))
        .map((el) => {
          const r = el.getBoundingClientRect();
          return { left: r.left, right: r.right };
        })
        .sort((a, b) => a.left - b.left),
    );
    expect(days.length).toBeGreaterThanOrEqual(4);
    for (let i = 1; i < days.length; i++) {
      expect(days[i]?.left, 'day labels overlap').toBeGreaterThan((days[i - 1]?.right ?? 0) + 2);
    }
    await shot(page, `${w.name}-3-dashboard`);

    // A new key on the dashboard: shown once, on one line, with its Copy button.
    await page.getByLabel('Name of a new key').fill('phone');
    await page.getByRole('button', { name: 'Create a key' }).click();
    await page.locator('#new-api-key').waitFor();
    await expectNoSidewaysScroll(page, 'dashboard with a new key');
    await page.getByRole('button', { name: 'Copy the new API key' }).click();
    await expect(page.evaluate(() => navigator.clipboard.readText())).resolves.toMatch(/^tg_sk_/);
    await shot(page, `${w.name}-4-new-key`);

    // A key's limits: the change form opened in its row, and the page a refused call sends a person to.
    const [keyRow] = await t.gw.ledger.listApiKeys(signedUp.principal.accountId);
    await page.locator(`#keys-table tbody[data-key-id="${keyRow?.id}"] summary`).click();
    await expectNoSidewaysScroll(page, "dashboard with a key's limits form open");
    await page.goto(`${t.url}/account/limit?key=${keyRow?.id}`);
    await page.getByRole('heading', { name: 'Raise this key’s limit to continue' }).waitFor();
    await expectNoSidewaysScroll(page, 'the page that raises a limit');
    await shot(page, `${w.name}-5-raise-limit`);
    expect(problems).toEqual([]);
    await context.close();
  }, 120_000);

  it(`[pages:consent-layout] [pages:any-width] the sign-in pages; the OAuth pages: site header, Allow beside Deny (${w.name})`, async () => {
    const { key } = await t.account('1');
    const provider = new MemoryOAuthProvider('http://127.0.0.1:9/callback', `Host at ${w.name}`);
    await new Client({ name: 'h', version: '1' })
      .connect(
        new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`), { authProvider: provider as never }),
      )
      .catch(() => undefined);
    const { context, page } = await open(w);
    // The dashboard's own sign-in, and its refusal of a wrong key.
    await page.goto(`${t.url}/account/signin`);
    await expectNoSidewaysScroll(page, 'dashboard sign-in');
    await page.getByLabel('API key').fill('tg_sk_not-a-key');
    await page.getByRole('button', { name: 'Sign in with API key' }).click();
    await page.getByText('That API key was not accepted').waitFor();
    await expectNoSidewaysScroll(page, 'dashboard sign-in refused');
    await shot(page, `${w.name}-5-signin-refused`);
    await page.goto((provider.authorizationUrl as URL).href);
    await expectNoSidewaysScroll(page, 'sign-in');
    expect(await page.locator('header.top').textContent()).toContain('tollgate');
    await page.getByLabel('API key').fill(key);
    await page.getByRole('button', { name: 'Sign in with API key' }).click();
    await page
      .getByRole('heading', { name: `Allow Host at ${w.name} to use your tollgate account?` })
      .waitFor();
    await expectNoSidewaysScroll(page, 'consent');
    expect(await page.locator('header.top').isVisible()).toBe(true);
    const allow = (await page.getByRole('button', { name: 'Allow' }).boundingBox()) as {
      x: number;
      y: number;
      width: number;
    };
    const deny = (await page.getByRole('button', { name: 'Deny' }).boundingBox()) as {
      x: number;
      y: number;
      width: number;
    };
    expect(Math.abs(allow.y - deny.y), 'Allow and Deny on one line').toBeLessThan(4);
    expect(deny.x).toBeGreaterThan(allow.x + allow.width);
    expect(deny.x + deny.width).toBeLessThanOrEqual(w.width);
    await shot(page, `${w.name}-6-consent`);
    await context.close();
  }, 120_000);
});
