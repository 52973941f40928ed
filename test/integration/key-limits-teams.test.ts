import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join as joinPath } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyApiKey } from '../../auth/api-keys.js';
import { CookieJar, formOf, type Hop, hop } from '../e2e/oauth-helpers.js';
import { runCli } from '../helpers/cli.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

// Limits per API key in a team account (docs/decisions.md "Teams × limits"), over raw HTTP: only owners set
// limits (on any key, on the event log; the CLI's change too), a member cannot escape its key's limits by making
// a key, and a limited key signs in unless its member is an owner.

const SCRAPE = '/api/run/scraperC/scrape';
const ARGS = { url: 'http://127.0.0.1:9/' };
let t: TestGateway;
let cwd: string;

beforeAll(async () => {
  t = await startGateway({
    env: { TOLLGATE_OAUTH_SIGNIN_ATTEMPTS_PER_MINUTE: '1000' },
    handlers: { 'scraperC/scrape': { run: async () => ({ raw: 'ok' }) } },
  });
  cwd = mkdtempSync(joinPath(tmpdir(), 'tg-key-limits-teams-'));
});
afterAll(async () => {
  await t?.close();
  rmSync(cwd, { recursive: true, force: true });
});

interface Person {
  jar: CookieJar;
  key: string;
}

async function signIn(key: string): Promise<Hop & { jar: CookieJar }> {
  const jar = new CookieJar();
  const f = formOf((await hop(jar, `${t.url}/account/signin`)).text, '/account/signin');
  return { ...(await hop(jar, `${t.url}${f.action}`, { form: { csrf: f.csrf, api_key: key } })), jar };
}

async function post(p: Person, path: string, fields: Record<string, string> = {}): Promise<Hop> {
  const { csrf } = formOf((await hop(p.jar, `${t.url}/account`)).text, '/account/keys');
  return hop(p.jar, `${t.url}${path}`, { form: { csrf, ...fields } });
}

async function keyIdOf(key: string): Promise<string> {
  const check = await verifyApiKey(t.gw.ledger, key);
  if (!check.ok) throw new Error(check.reason);
  return check.principal.keyId;
}

async function join(owner: Person, name: string, role: string): Promise<Person> {
  const made = await post(owner, '/account/team/invite', { name, role });
  const link = (/id="invite-link">([^<]+)</.exec(made.text)?.[1] ?? '').replaceAll('&amp;', '&');
  const jar = new CookieJar();
  const f = formOf((await hop(jar, link)).text, '/account/join');
  const token = new URL(link).searchParams.get('token') as string;
  const r = await hop(jar, `${t.url}${f.action}`, { form: { csrf: f.csrf, token, name } });
  expect(r.status).toBe(201);
  return { jar, key: /id="api-key">(tg_sk_[^<]+)</.exec(r.text)?.[1] as string };
}

async function team() {
  const { accountId, key } = await t.account('5');
  const s = await signIn(key);
  expect(s.status).toBe(303);
  return { accountId, owner: { jar: s.jar, key } };
}

const memberIdIn = (html: string, name: string) =>
  new RegExp(`data-member="(mbr_[^"]+)"><td class="lead">${name}`).exec(html)?.[1] as string;

const keyRow = async (id: string) => (await t.gw.ledger.listApiKeys()).find((k) => k.id === id);

describe('teams × limits', () => {
  it("[keys:teams-owners-set] only owners change a key's limits, any key of the account, on the event log; others read them", async () => {
    const { owner } = await team();
    const mia = await join(owner, 'Mia', 'member');
    const bill = await join(owner, 'Bill', 'billing');
    const miaKey = await keyIdOf(mia.key);
    const billKey = await keyIdOf(bill.key);

    // The owner limits Mia's key: 5 cents a day.
    const set = await post(owner, '/account/keys/limits', {
      key_id: miaKey,
      daily_limit_usd: '0.05',
      max_call_usd: '0.02',
    });
    expect(set.status).toBe(303);
    expect(await keyRow(miaKey)).toMatchObject({ daily_limit_micros: 50_000, max_call_micros: 20_000 });
    const log = (await hop(owner.jar, `${t.url}/account`)).text;
    expect(log).toMatch(/changed the limits of key tg_sk_[\w-]+…: max \$0\.02\/call, \$0\.05\/day/);

    // Members and billing: refused (403), nothing changes, on their own key or another's.
    for (const [p, id] of [
      [mia, miaKey],
      [bill, billKey],
      [bill, miaKey],
    ] as const) {
      expect((await post(p, '/account/keys/limits', { key_id: id, daily_limit_usd: '' })).status).toBe(403);
    }
    expect((await keyRow(miaKey))?.daily_limit_micros).toBe(50_000);
    expect((await keyRow(billKey))?.daily_limit_micros).toBeNull();

    // Mia sees her key's limit and spend, read only; the owner has the change form.
    expect((await t.post(SCRAPE, ARGS, { key: mia.key })).status).toBe(200);
    const miaDash = (await hop(mia.jar, `${t.url}/account`)).text;
    expect(miaDash).toMatch(
      new RegExp(
        `data-key-id="${miaKey}".*?class="num price today" data-micros="10000" data-limit-micros="50000"`,
        's',
      ),
    );
    expect(miaDash).not.toContain('action="/account/keys/limits"');
    expect(miaDash).toContain('limits are set by an owner of the account');
    expect(log).toContain('action="/account/keys/limits"');

    // The operator's change with the CLI is on the account's log too.
    const cli = runCli(['keys', 'limit', billKey, '--monthly-limit-usd', '7', '--json'], {
      cwd,
      env: t.cliEnv(),
    });
    expect(cli.code, cli.stderr).toBe(0);
    expect((await hop(owner.jar, `${t.url}/account`)).text).toMatch(
      /the operator changed the limits of key tg_sk_[\w-]+…: \$7\.00\/month/,
    );
  });

  it("[keys:teams-inherit] a member's new key has its session key's limits; its own limits in the form are refused; an owner's for a member are kept", async () => {
    const { accountId, owner } = await team();
    const bo = await join(owner, 'Bo', 'member');
    const boKey = await keyIdOf(bo.key);
    expect(
      (
        await post(owner, '/account/keys/limits', {
          key_id: boKey,
          daily_limit_usd: '0.02',
          actions: 'scraperC',
        })
      ).status,
    ).toBe(303);
    // Bo signs in with the limited key (a member may) and makes a key: it has the same limits.
    const s = await signIn(bo.key);
    expect(s.status).toBe(303);
    const limitedBo = { jar: s.jar, key: bo.key };
    const made = await post(limitedBo, '/account/keys', { name: 'escape' });
    expect(made.status).toBe(201);
    const fresh = /id="new-api-key">(tg_sk_[^<]+)</.exec(made.text)?.[1] as string;
    expect(await keyRow(await keyIdOf(fresh))).toMatchObject({
      daily_limit_micros: 20_000,
      monthly_limit_micros: null,
      max_call_micros: null,
      actions: ['scraperC'],
    });
    // And it is held to them: two calls of a cent, then the day's limit.
    expect((await t.post(SCRAPE, ARGS, { key: fresh })).status).toBe(200);
    expect((await t.post(SCRAPE, ARGS, { key: fresh })).status).toBe(200);
    expect((await t.post(SCRAPE, ARGS, { key: fresh })).status).toBe(429);
    // Limits of its own choosing in the form: refused, no key made.
    const before = (await t.gw.ledger.listApiKeys(accountId)).length;
    expect((await post(limitedBo, '/account/keys', { name: 'x', daily_limit_usd: '100' })).status).toBe(403);
    expect((await t.gw.ledger.listApiKeys(accountId)).length).toBe(before);

    // The owner makes a key for Bo with limits of its choosing: Bo's, with them.
    const boId = memberIdIn((await hop(owner.jar, `${t.url}/account`)).text, 'Bo');
    const forBo = await post(owner, '/account/keys', {
      member_id: boId,
      name: 'for bo',
      monthly_limit_usd: '3',
    });
    expect(forBo.status).toBe(201);
    const given = /id="new-api-key">(tg_sk_[^<]+)</.exec(forBo.text)?.[1] as string;
    expect(await keyRow(await keyIdOf(given))).toMatchObject({
      monthly_limit_micros: 3_000_000,
      daily_limit_micros: null,
    });
    expect((await hop(owner.jar, `${t.url}/account`)).text).toMatch(
      /created key tg_sk_[\w-]+… for Bo with limits: \$3\.00\/month/,
    );
    // Signed in with an unrestricted key, Bo's new key has none (limits are per key).
    const owners = await post(owner, '/account/keys', { member_id: boId, name: 'open' });
    const open = /id="new-api-key">(tg_sk_[^<]+)</.exec(owners.text)?.[1] as string;
    const s2 = await signIn(open);
    const plain = await post({ jar: s2.jar, key: open }, '/account/keys', { name: 'plain' });
    const plainKey = /id="new-api-key">(tg_sk_[^<]+)</.exec(plain.text)?.[1] as string;
    expect((await keyRow(await keyIdOf(plainKey)))?.daily_limit_micros).toBeNull();
  });

  it("[keys:teams-signin] a limited key signs in unless its member is an owner; an owner's session ends when its key gains limits", async () => {
    const { owner } = await team();
    const bill = await join(owner, 'Bea', 'billing');
    const beaKey = await keyIdOf(bill.key);
    await post(owner, '/account/keys/limits', { key_id: beaKey, monthly_limit_usd: '1' });
    // Billing with a limited key: signs in, and its session goes on.
    const bea = await signIn(bill.key);
    expect(bea.status).toBe(303);
    expect((await hop(bea.jar, `${t.url}/account`)).status).toBe(200);
    expect((await hop(bill.jar, `${t.url}/account`)).status).toBe(200);

    // An owner's second key, signed in, then given limits by the first: that session ends.
    const second = await post(owner, '/account/keys', { name: 'second' });
    const secondKey = /id="new-api-key">(tg_sk_[^<]+)</.exec(second.text)?.[1] as string;
    const s = await signIn(secondKey);
    expect(s.status).toBe(303);
    expect((await hop(s.jar, `${t.url}/account`)).status).toBe(200);
    await post(owner, '/account/keys/limits', { key_id: await keyIdOf(secondKey), daily_limit_usd: '1' });
    const ended = await hop(s.jar, `${t.url}/account`);
    expect(ended.status).toBe(303);
    expect(ended.res.headers.get('location')).toContain('done=session_ended');
    expect((await hop(s.jar, `${t.url}/account/signin?done=session_ended`)).text).toContain(
      'given limits while its member is an owner',
    );
    // And it cannot sign in again.
    const refused = await signIn(secondKey);
    expect(refused.status).toBe(403);
    expect(refused.text).toContain('belongs to an owner of the account');

    // A limited billing member made an owner: its session ends there too (it could lift its own limits now).
    const beaId = memberIdIn((await hop(owner.jar, `${t.url}/account`)).text, 'Bea');
    expect((await post(owner, '/account/team/role', { member_id: beaId, role: 'owner' })).status).toBe(303);
    expect((await hop(bea.jar, `${t.url}/account`)).status).toBe(303);
  });
});
