import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HEADLESS_ARGS } from '../../src/engine/browser.js';
import { type MailBox, type Receiver, settle, startReceiver, startSmtp, waitFor } from '../helpers/alerts.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

// The alerts page in Debian's Chromium (playwright-core): from the dashboard to the alerts page, an internal webhook
// URL refused naming the field, the webhook and an e-mail address saved (the signing secret shown once), paid
// calls crossing the threshold, the delivery log, a test alert and a rotated secret. Screenshots go to
// test-output/alerts/. The page runs only its one hashed script, so a CSP complaint fails it.

const SHOTS = join(import.meta.dirname, '..', '..', 'test-output', 'alerts');
const CHROMIUM = process.env.TOLLGATE_CHROMIUM_PATH ?? '/usr/bin/chromium';

let t: TestGateway;
let browser: Browser;
let hook: Receiver;
let mail: MailBox;

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  hook = await startReceiver();
  mail = await startSmtp();
  t = await startGateway({
    env: { TOLLGATE_SMTP_URL: mail.url },
    handlers: {
      'propstats/value-estimate': async () => ({
        price: 1,
        priceRangeLow: 1,
        priceRangeHigh: 2,
        comparables: [],
      }),
    },
  });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: HEADLESS_ARGS, headless: true });
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
  await hook?.close();
  await mail?.close();
});

const shot = (page: Page, name: string) =>
  page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });

describe('the alerts page in Chromium', () => {
  it('[alerts:dashboard-in-browser] [alerts:webhook-ssrf] set a webhook and e-mail, see a crossing delivered in the log, send a test alert, rotate the secret', async () => {
    const { accountId, key } = await t.account('5');
    const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error' || m.type() === 'warning') problems.push(m.text());
    });
    page.on('pageerror', (e) => problems.push(e.message));

    await page.goto(`${t.url}/account/signin`);
    await page.getByLabel('API key').fill(key);
    await page.getByRole('button', { name: 'Sign in with API key' }).click();
    await page.getByRole('heading', { name: /^Your account/ }).waitFor();
    await page.getByRole('link', { name: 'Alerts' }).click();
    await page.getByRole('heading', { name: 'Alerts', exact: true }).waitFor();
    expect(await page.getByText('No alerts sent yet.').count()).toBe(1);
    // A first visit offers every event.
    expect(await page.locator('input[name="events"]:checked').count()).toBe(9);
    await shot(page, '01-alerts-empty');

    // The cloud metadata address: refused, naming the field; nothing saved.
    await page.getByLabel('Webhook URL').fill('https://169.254.169.254/latest/meta-data/');
    await page.getByLabel('Balance threshold (USD)').fill('2.50');
    await page.getByRole('button', { name: 'Save alert settings' }).click();
    await page.getByRole('alert').waitFor();
    expect(await page.getByRole('alert').textContent()).toContain(
      'webhook_url: refused: 169.254.169.254 is a linkLocal address',
    );
    expect(await page.getByLabel('Webhook URL').getAttribute('aria-invalid')).toBe('true');
    expect(await page.getByLabel('Webhook URL').inputValue()).toBe(
      'https://169.254.169.254/latest/meta-data/',
    );
    expect(await t.gw.alerts.settings(accountId)).toBeUndefined();
    await shot(page, '02-internal-url-refused');

    await page.getByLabel('Webhook URL').fill(hook.url);
    await page.getByLabel('E-mail addresses').fill('ops@example.com');
    await page.getByRole('button', { name: 'Save alert settings' }).click();
    await page.locator('#webhook-secret').waitFor();
    hook.secret = ((await page.locator('#webhook-secret').textContent()) as string).trim();
    expect(hook.secret).toMatch(/^tgwhsec_/);
    expect(await page.getByRole('button', { name: 'Copy the signing secret' }).isVisible()).toBe(true);
    await shot(page, '03-secret-shown-once');
    await page.reload();
    expect(await page.locator('#webhook-secret').count()).toBe(0);
    expect(await page.locator('#secret-state').textContent()).toContain(hook.url);

    // Paid calls cross 2.50: one webhook, one e-mail, both in the log.
    const calls = await Promise.all(
      Array.from({ length: 14 }, () =>
        t.post('/api/run/propstats/value-estimate', { address: '1 Main St, Austin, TX' }, { key }),
      ),
    );
    expect(calls.every((c) => c.status === 200)).toBe(true);
    await waitFor(
      'the webhook and the e-mail',
      () => hook.deliveries.length === 1 && mail.messages.length === 1,
    );
    await settle(1_500);
    await page.reload();
    const rows = page.locator('#deliveries-table tbody tr');
    expect(await rows.count()).toBe(2);
    const event = hook.deliveries[0]?.event;
    expect(hook.deliveries[0]?.verified).toBe(true);
    for (const [channel, response] of [
      ['webhook', 'HTTP 200'],
      ['email', 'SMTP 250'],
    ]) {
      const row = page.locator(`#deliveries-table tr[data-event="${event.id}"][data-channel="${channel}"]`);
      expect(await row.getAttribute('data-status')).toBe('delivered');
      expect(await row.getAttribute('data-attempts')).toBe('1');
      expect(await row.locator('td[data-response]').textContent()).toBe(response);
      expect(await row.textContent()).toContain('balance.below_threshold');
    }
    await shot(page, '04-delivery-log');

    // A test alert, then a rotated secret: the next one verifies only with the new secret.
    await page.getByRole('button', { name: 'Send a test alert' }).click();
    await page.getByText('A test alert is on its way').waitFor();
    await waitFor('the test alert', () => hook.deliveries.some((d) => d.event.type === 'alert.test'));
    const old = hook.secret;
    await page.getByRole('button', { name: 'Rotate the signing secret' }).click();
    await page.locator('#webhook-secret').waitFor();
    hook.secret = ((await page.locator('#webhook-secret').textContent()) as string).trim();
    expect(hook.secret).not.toBe(old);
    await page.goto(`${t.url}/account/alerts`);
    await page.getByRole('button', { name: 'Send a test alert' }).click();
    await waitFor(
      'the second test alert',
      () => hook.deliveries.filter((d) => d.event.type === 'alert.test').length === 2,
    );
    expect(hook.deliveries.at(-1)?.verified).toBe(true);
    await settle(1_500);
    await page.reload();
    expect(await page.locator('#deliveries-table tr[data-status="delivered"]').count()).toBe(6);
    await shot(page, '05-test-alerts');

    // On a phone the log is one card per row.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.reload();
    await shot(page, '06-phone');
    // The refusal is a 400 page on purpose; Chromium notes any 4xx document in the console.
    expect(problems.filter((p) => !p.includes('status of 400 (Bad Request)'))).toEqual([]);
    expect(problems).toHaveLength(1);
    await context.close();
  });
});
