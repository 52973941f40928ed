import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyApiKey } from '../../auth/api-keys.js';
import { HEADLESS_ARGS } from '../../src/engine/browser.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

// A team account in Debian's Chromium: an owner signs up and invites Bob; Bob opens the one-time link in a browser
// of his own, joins, signs out and signs in again on his own with his key, makes a key of his own and pays a call
// with it through POST /api/run; the owner sees spend per member and per key (held to the ledger) on the page and
// in the CSV; removing Bob stops his keys and his session at once; the event log says who did what. The new pages
// at a phone's width (390 CSS px) do not scroll sideways. Screenshots go to test-output/teams/.

const SHOTS = join(import.meta.dirname, '..', '..', 'test-output', 'teams');
const CHROMIUM = process.env.TOLLGATE_CHROMIUM_PATH ?? '/usr/bin/chromium';

let t: TestGateway;
let browser: Browser;

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  t = await startGateway({
    env: { TOLLGATE_SIGNUP: 'open', TOLLGATE_OAUTH_SIGNIN_ATTEMPTS_PER_MINUTE: '1000' },
    handlers: {
      'scraperC/scrape': { run: async () => ({ raw: 'ok' }) },
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
});

async function open(
  width = 1200,
  height = 900,
): Promise<{ context: BrowserContext; page: Page; problems: string[] }> {
  const context = await browser.newContext({
    viewport: { width, height },
    isMobile: width < 500,
    hasTouch: width < 500,
    acceptDownloads: true,
  });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') problems.push(m.text());
  });
  page.on('pageerror', (e) => problems.push(e.message));
  return { context, page, problems };
}

const shot = (page: Page, name: string) =>
  page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });

/** Nothing sticks out sideways (the elements that do are named when something does). */
async function noSidewaysScroll(page: Page, what: string) {
  const wide = await page.evaluate(() =>
    Array.from(document.querySelectorAll('body *'))
      .filter((e) => e.getBoundingClientRect().right > document.documentElement.clientWidth + 0.5)
      .map((e) => `${e.tagName}.${e.className}#${e.id} ${Math.round(e.getBoundingClientRect().right)}`),
  );
  const o = await page.evaluate(() => ({
    scroll: document.documentElement.scrollWidth,
    client: document.documentElement.clientWidth,
  }));
  expect(
    o.scroll,
    `${what}: the page is wider than the window (${wide.slice(0, 5).join(', ')})`,
  ).toBeLessThanOrEqual(o.client);
}

/** The micros of each row of a table, by a data attribute of the row. */
async function rowsMicros(page: Page, table: string, attr: string): Promise<Record<string, number>> {
  const rows = await page
    .locator(`${table} tbody tr[${attr}]`)
    .evaluateAll(
      (trs, a) =>
        trs.map((r) => [r.getAttribute(a), r.querySelector('td[data-micros]')?.getAttribute('data-micros')]),
      attr,
    );
  return Object.fromEntries(rows.map(([k, m]) => [k as string, Number(m)]));
}

async function accountOf(key: string): Promise<{ accountId: string; keyId: string }> {
  const check = await verifyApiKey(t.gw.ledger, key);
  if (!check.ok) throw new Error(check.reason);
  return check.principal;
}

describe('a team account in Chromium', () => {
  it('[team:in-browser] [team:spend-per-key] [team:audit] [team:remove-stops-keys] invite, join in another browser, sign in alone, pay, spend per member and key, CSV, removal, the log', async () => {
    // ---- Ada signs up: the account's first owner ------------------------------------------------------------
    const ada = await open();
    await ada.page.goto(`${t.url}/account/signup`);
    await ada.page.getByLabel('Name of the account').fill('Ada & Co');
    await ada.page.getByRole('button', { name: 'Create my account' }).click();
    const adaKey = ((await ada.page.locator('#api-key').textContent()) as string).trim();
    const { accountId, keyId: adaKeyId } = await accountOf(adaKey);
    await t.gw.money.credit(accountId, 5_000_000, 'operator', 'test credit');
    await ada.page.getByRole('link', { name: 'I stored it: go to my dashboard' }).click();
    await ada.page.getByText('Signed in as Ada & Co (Owner)').waitFor();

    // ---- an invitation link for Bob, shown once ----------------------------------------------------------------
    await ada.page.getByLabel('Their name').fill('Bob');
    await ada.page.locator('#invite-role').selectOption('member');
    await ada.page.getByRole('button', { name: 'Make an invitation link' }).click();
    const link = ((await ada.page.locator('#invite-link').textContent()) as string).trim();
    expect(link).toMatch(/\/account\/join\?token=[A-Za-z0-9_-]{43}$/);
    await shot(ada.page, '01-owner-invites');

    // ---- Bob, in a browser of his own, joins and gets his own key ---------------------------------------------
    const bob = await open();
    await bob.page.goto(link);
    await bob.page.getByRole('heading', { name: 'Join Ada & Co' }).waitFor();
    expect(await bob.page.getByLabel(/Your name/).inputValue()).toBe('Bob');
    await shot(bob.page, '02-join-page');
    await bob.page.getByRole('button', { name: 'Join the account' }).click();
    await bob.page.getByRole('heading', { name: 'Welcome, Bob' }).waitFor();
    const bobKey = ((await bob.page.locator('#api-key').textContent()) as string).trim();
    await shot(bob.page, '03-joined-key-once');
    // He signs out and signs in again on his own, with his key.
    await bob.page.getByRole('link', { name: 'I stored it: go to the dashboard' }).click();
    await bob.page.getByText('Signed in as Bob (Member)').waitFor();
    await bob.page.getByRole('button', { name: 'Sign out' }).click();
    await bob.page.getByLabel('API key').fill(bobKey);
    await bob.page.getByRole('button', { name: 'Sign in with API key' }).click();
    await bob.page.getByText('Signed in as Bob (Member)').waitFor();
    // A key of his own, and a paid call with it through the HTTP door.
    await bob.page.getByLabel('Name of a new key').fill('bob-laptop');
    await bob.page.getByRole('button', { name: 'Create a key' }).click();
    const laptop = ((await bob.page.locator('#new-api-key').textContent()) as string).trim();
    const { keyId: laptopId } = await accountOf(laptop);
    const { keyId: bobKeyId } = await accountOf(bobKey);
    const bobCall = await t.post('/api/run/scraperC/scrape', { url: 'http://127.0.0.1:9/' }, { key: laptop });
    expect(bobCall.status).toBe(200);
    expect(bobCall.body.charged_cents).toBe(1);
    const adaCall = await t.post(
      '/api/run/propstats/value-estimate',
      { address: '1 Main St, Austin, TX 78701' },
      { key: adaKey },
    );
    expect(adaCall.status).toBe(200);
    // Bob sees his call, not Ada's, and no team sections (a GET: reloading the key's page would post it again).
    await bob.page.goto(`${t.url}/account`);
    const bobTx = (await bob.page.locator('#tx-table').textContent()) as string;
    expect(bobTx).toContain(bobCall.body.transaction_id);
    expect(bobTx).not.toContain(adaCall.body.transaction_id);
    expect(await bob.page.locator('#team, #spend, #events, #payments').count()).toBe(0);
    expect(await bob.page.locator('#keys-table tbody tr').count()).toBe(2);
    await shot(bob.page, '04-member-dashboard');

    // ---- Ada sees spend per member and per key, as the ledger says ---------------------------------------------
    await ada.page.goto(`${t.url}/account#spend`);
    const spend = await t.gw.ledger.spendByPrincipal(accountId, {});
    const byKey = Object.fromEntries(spend.map((s) => [s.principal, s.micros]));
    expect(byKey).toEqual({ [laptopId]: 10_000, [adaKeyId]: 350_000 });
    expect(await rowsMicros(ada.page, '#spend-keys', 'data-key')).toEqual({
      [adaKeyId]: 350_000,
      [laptopId]: 10_000,
      [bobKeyId]: 0,
    });
    const members = await rowsMicros(ada.page, '#spend-members', 'data-member');
    expect(Object.values(members).sort((a, b) => a - b)).toEqual([10_000, 350_000]);
    expect(
      await ada.page
        .locator('#spend-members tr', { hasText: 'Bob' })
        .locator('td[data-micros]')
        .textContent(),
    ).toBe('$0.01');
    expect(Number(await ada.page.locator('#spend-total').getAttribute('data-micros'))).toBe(360_000);
    // The keys table says whose each key is.
    expect(await ada.page.locator(`#keys-table tr[data-key="${laptopId}"]`).textContent()).toContain('Bob');
    await ada.page.locator('#spend').screenshot({ path: join(SHOTS, '05-spend-per-member-and-key.png') });

    // ---- the CSV has them too ------------------------------------------------------------------------------------
    const download = ada.page.waitForEvent('download');
    await ada.page.getByRole('link', { name: 'Download spend CSV' }).click();
    const csv = readFileSync((await (await download).path()) as string, 'utf8');
    const lines = csv.trim().split('\r\n');
    expect(lines[0]).toBe(
      'scope,member_id,member_name,member_role,member_status,key_id,key_prefix,key_name,principal,calls,spent_usd,spent_micros,from,to',
    );
    expect(lines.find((l) => l.startsWith('member,') && l.includes(',Bob,'))).toMatch(
      /^member,mbr_[^,]+,Bob,member,active,,,,,1,0\.01,10000,/,
    );
    expect(lines.find((l) => l.includes(`,${laptopId},`))).toMatch(
      new RegExp(`^key,mbr_[^,]+,Bob,member,active,${laptopId},[^,]+,bob-laptop,${laptopId},1,0\\.01,10000,`),
    );
    expect(lines.find((l) => l.includes(`,${adaKeyId},`))).toContain(',1,0.35,350000,');

    // ---- Ada removes Bob: his keys and his session stop at once -----------------------------------------------
    await ada.page.goto(`${t.url}/account#team`);
    await ada.page.getByRole('button', { name: 'Remove Bob' }).click();
    await ada.page.getByText('The member was removed').waitFor();
    expect(
      (await t.post('/api/run/scraperC/scrape', { url: 'http://127.0.0.1:9/' }, { key: laptop })).status,
    ).toBe(401);
    expect((await t.post('/api/run/platform/balance', {}, { key: bobKey })).status).toBe(401);
    await bob.page.goto(`${t.url}/account`);
    await bob.page.getByRole('heading', { name: 'Sign in to your account' }).waitFor();
    await bob.page.getByLabel('API key').fill(bobKey);
    await bob.page.getByRole('button', { name: 'Sign in with API key' }).click();
    await bob.page.getByText('That API key was not accepted').waitFor();
    await shot(bob.page, '06-removed-member-signed-out');

    // ---- the log says who did what ---------------------------------------------------------------------------------
    await ada.page.goto(`${t.url}/account#events`);
    const log = await ada.page.locator('#events-table tbody tr td.lead').allTextContents();
    expect(log).toEqual([
      'Ada & Co removed Bob (2 key(s) revoked)',
      `Bob created key ${laptop.slice(0, 10)}…`,
      `Bob created key ${bobKey.slice(0, 10)}…`,
      'Bob joined as member, invited by Ada & Co',
      'Ada & Co invited Bob as member',
    ]);
    // Bob still counts in what was spent, marked removed.
    expect(await ada.page.locator('#spend-members tr', { hasText: 'Bob' }).textContent()).toContain(
      '(removed)',
    );
    await shot(ada.page, '07-owner-after-removal');

    // Bob's refused sign-in is a 401 page, as it should be; nothing else may complain.
    expect([...ada.problems, ...bob.problems.filter((p) => !p.includes('status of 401'))]).toEqual([]);
    await ada.context.close();
    await bob.context.close();
  }, 120_000);

  it('[pages:any-width] [team:in-browser] the team pages at 390 px: the dashboard with a link shown, the join page, the key once', async () => {
    const { key, accountId } = await t.account('1');
    const phone = await open(390, 844);
    await phone.page.goto(`${t.url}/account/signin`);
    await phone.page.getByLabel('API key').fill(key);
    await phone.page.getByRole('button', { name: 'Sign in with API key' }).click();
    await phone.page.getByLabel('Their name').fill('Someone with a rather long name to wrap');
    await phone.page.getByRole('button', { name: 'Make an invitation link' }).click();
    const link = ((await phone.page.locator('#invite-link').textContent()) as string).trim();
    await noSidewaysScroll(phone.page, 'dashboard with an invitation link');
    for (const id of ['#team', '#spend', '#events', '#invites-table', '#members-table']) {
      const box = (await phone.page.locator(id).boundingBox()) as { x: number; width: number };
      expect(box.x + box.width, `${id} inside the window`).toBeLessThanOrEqual(390);
    }
    await shot(phone.page, '08-phone-dashboard-team');
    await phone.page.locator('#team').screenshot({ path: join(SHOTS, '08a-phone-team-section.png') });

    const joiner = await open(390, 844);
    await joiner.page.goto(link);
    await noSidewaysScroll(joiner.page, 'join page');
    await shot(joiner.page, '09-phone-join');
    await joiner.page.getByRole('button', { name: 'Join the account' }).click();
    await joiner.page.locator('#api-key').waitFor();
    await noSidewaysScroll(joiner.page, 'the key shown once after joining');
    await joiner.page.getByRole('link', { name: 'I stored it: go to the dashboard' }).click();
    await noSidewaysScroll(joiner.page, "a member's dashboard");
    await shot(joiner.page, '10-phone-member-dashboard');
    // The owner's page with two members and the log.
    await phone.page.goto(`${t.url}/account`);
    await noSidewaysScroll(phone.page, 'dashboard with two members');
    expect(await phone.page.locator('#members-table tbody tr').count()).toBe(2);
    await phone.page.locator('#spend').screenshot({ path: join(SHOTS, '11-phone-spend.png') });
    expect((await t.gw.ledger.listApiKeys(accountId)).length).toBe(2);
    expect([...phone.problems, ...joiner.problems]).toEqual([]);
    await phone.context.close();
    await joiner.context.close();
  }, 120_000);
});
