import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, chromium, type Locator, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HEADLESS_ARGS } from '../../src/engine/browser.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

// The dashboard's API keys in Chromium (playwright-core): a key created with limits, its spend today and this
// month beside them, held to the ledger's numbers; its limits changed (one removed, one lowered) and the next
// call refused by the new one; a mistyped amount refused naming its field; and the limited key refused at
// sign-in. Each step is screenshotted into test-output/account/.

const SHOTS = join(import.meta.dirname, '..', '..', 'test-output', 'account');
const CHROMIUM = process.env.TOLLGATE_CHROMIUM_PATH ?? '/usr/bin/chromium';
const SCRAPE = '/api/run/scraperC/scrape';
const ARGS = { url: 'http://127.0.0.1:9/' };

let t: TestGateway;
let browser: Browser;

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  t = await startGateway({
    env: { TOLLGATE_OAUTH_SIGNIN_ATTEMPTS_PER_MINUTE: '1000' },
    handlers: { 'scraperC/scrape': { run: async () => ({ raw: 'ok' }) } },
  });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: HEADLESS_ARGS, headless: true });
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

const shot = (page: Page, name: string) =>
  page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });

const micros = async (l: Locator, attr = 'data-micros') => {
  const v = await l.getAttribute(attr);
  return v === '' || v === null ? null : Number(v);
};

async function signIn(page: Page, key: string) {
  await page.goto(`${t.url}/account/signin`);
  await page.getByLabel('API key').fill(key);
  await page.getByRole('button', { name: 'Sign in with API key' }).click();
}

describe('API key limits on the dashboard, in Chromium', () => {
  it('[keys:dashboard] create a key with limits, see its spend against them, change them, and the next call obeys', async () => {
    const { accountId, key: owner } = await t.account('5');
    const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error' || m.type() === 'warning') problems.push(m.text());
    });
    page.on('pageerror', (e) => problems.push(e.message));

    await signIn(page, owner);
    await page.getByRole('heading', { name: 'Your account' }).first().waitFor();

    // ---- a new key with every limit -------------------------------------------------------------------------
    await page.goto(`${t.url}/account#keys`);
    const create = page.locator('form[action="/account/keys"]');
    await create.getByLabel('Name of a new key').fill('agent');
    await create.getByText('Limits of the new key (optional)').click();
    await create.getByLabel('Most per call').fill('0.05');
    await create.getByLabel('Per UTC day').fill('0.03');
    await create.getByLabel('Per UTC month').fill('$1');
    await create.getByLabel('Only these services or actions').fill('scraperC, llm');
    await shot(page, 'keys-01-create-with-limits');
    await create.getByRole('button', { name: 'Create a key' }).click();
    const agent = (await page.locator('#new-api-key').textContent()) as string;
    expect(agent).toMatch(/^tg_sk_/);
    const row = await ledgerRow(accountId, 'agent');
    expect(row).toMatchObject({
      max_call_micros: 50_000,
      daily_limit_micros: 30_000,
      monthly_limit_micros: 1_000_000,
      actions: ['scraperC', 'llm'],
    });

    // ---- two paid calls; the page shows the spend against the limits, as the ledger has it -------------------
    expect((await t.post(SCRAPE, ARGS, { key: agent })).status).toBe(200);
    expect((await t.post(SCRAPE, ARGS, { key: agent })).status).toBe(200);
    expect((await t.post('/api/run/platform/balance', {}, { key: agent })).status).toBe(403);
    await page.goto(`${t.url}/account#keys`);
    const tr = page.locator(`#keys-table tbody[data-key-id="${row.id}"]`);
    const [usage] = (await t.gw.ledger.keyUsage(accountId)).filter((k) => k.id === row.id);
    expect(usage?.spent_today_micros).toBe(20_000);
    expect(await micros(tr.locator('td.today'))).toBe(usage?.spent_today_micros);
    expect(await micros(tr.locator('td.today'), 'data-limit-micros')).toBe(30_000);
    expect(await micros(tr.locator('td.month'))).toBe(usage?.spent_month_micros);
    expect(await micros(tr.locator('td.month'), 'data-limit-micros')).toBe(1_000_000);
    expect(await micros(tr.locator('td.max-call'))).toBe(50_000);
    expect(await tr.locator('td.today').textContent()).toBe('$0.02 of $0.03 today');
    expect(await tr.locator('td.allowed').textContent()).toBe('only scraperC, llm');
    await shot(page, 'keys-02-spend-against-limits');

    // ---- a mistyped amount is refused, naming its field; nothing changes ------------------------------------
    await tr.getByText(/Change the limits of/).click();
    await tr.getByLabel('Per UTC day').fill('three');
    await tr.getByRole('button', { name: /Save the limits of key/ }).click();
    await page.getByRole('alert').waitFor();
    expect(await page.getByRole('alert').textContent()).toContain('Per UTC day: not a USD amount: "three"');
    expect((await ledgerRow(accountId, 'agent')).daily_limit_micros).toBe(30_000);
    await shot(page, 'keys-03-refused-amount');

    // ---- the daily limit removed, the monthly lowered to what is spent: the next call is refused by it --------
    await page.goto(`${t.url}/account#keys`);
    const again = page.locator(`#keys-table tbody[data-key-id="${row.id}"]`);
    await again.getByText(/Change the limits of/).click();
    await again.getByLabel('Per UTC day').fill('');
    await again.getByLabel('Per UTC month').fill('0.02');
    await shot(page, 'keys-04a-change-form');
    await again.getByRole('button', { name: /Save the limits of key/ }).click();
    await page.getByText('The key’s limits were changed').waitFor();
    expect(await ledgerRow(accountId, 'agent')).toMatchObject({
      daily_limit_micros: null,
      monthly_limit_micros: 20_000,
      max_call_micros: 50_000,
    });
    const changed = page.locator(`#keys-table tbody[data-key-id="${row.id}"]`);
    expect(await micros(changed.locator('td.today'), 'data-limit-micros')).toBeNull();
    expect(await changed.locator('td.month').textContent()).toBe('$0.02 of $0.02 this month');
    await shot(page, 'keys-04b-limits-changed');
    const refused = await t.post(SCRAPE, ARGS, { key: agent });
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe('monthly_cap_exceeded');
    expect(refused.body.error.message).toContain("This API key's monthly limit of $0.02 is reached");
    // Removing every limit makes it a plain key again.
    await changed.getByText(/Change the limits of/).click();
    for (const label of ['Most per call', 'Per UTC month', 'Only these services or actions'])
      await changed.getByLabel(label).fill('');
    await changed.getByRole('button', { name: /Save the limits of key/ }).click();
    await page.getByText('The key’s limits were changed').waitFor();
    expect(await ledgerRow(accountId, 'agent')).toMatchObject({
      max_call_micros: null,
      daily_limit_micros: null,
      monthly_limit_micros: null,
      actions: null,
    });
    expect((await t.post(SCRAPE, ARGS, { key: agent })).status).toBe(200);

    // ---- a key with limits cannot sign in (it could lift them) ----------------------------------------------
    await t.gw.ledger.setApiKeyLimits(row.id, { daily_limit_micros: 1_000_000 });
    const other = await browser.newContext({ viewport: { width: 390, height: 844 } });
    const phone = await other.newPage();
    await signIn(phone, agent);
    await phone.getByText('That key has limits').waitFor();
    expect(phone.url()).toContain('/account/signin');
    await shot(phone, 'keys-05-limited-key-refused');
    // The owner's dashboard at a phone's width: the keys table fits.
    await signIn(phone, owner);
    await phone.goto(`${t.url}/account#keys`);
    const overflow = await phone.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    await shot(phone, 'keys-06-phone');
    await other.close();

    // The refused amount's page answers 400 on purpose; nothing else may complain (CSP, scripts).
    expect(problems.filter((p) => !/status of 400 \(Bad Request\)/.test(p))).toEqual([]);
    await context.close();
  }, 120_000);
});

async function ledgerRow(accountId: string, name: string) {
  const row = (await t.gw.ledger.listApiKeys(accountId)).find((k) => k.name === name);
  if (!row) throw new Error(`no key ${name}`);
  return row;
}
