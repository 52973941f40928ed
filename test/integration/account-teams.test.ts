import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyApiKey } from '../../auth/api-keys.js';
import { INVITE_TTL_MS } from '../../src/account/team.js';
import { founderId } from '../../src/account/team-store.js';
import {
  CookieJar,
  connectedClient,
  formOf,
  type Hop,
  hop,
  INITIALIZE,
  mcpPost,
} from '../e2e/oauth-helpers.js';
import { listenUpstream, type Upstream, upstreamEnv } from '../e2e/oauth-upstream.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

// Team accounts over raw HTTP (the browser story is test/e2e/account-teams.test.ts): one-time invitation links,
// every team route checked by role, CSRF on the new forms, attempts across accounts refused, removal that stops
// keys and sessions at once, the last owner kept, and the first owner's upstream identity let go when removed.

let t: TestGateway;
let up: Upstream;
const offset = { ms: 0 };

beforeAll(async () => {
  up = await listenUpstream();
  t = await startGateway({
    env: { ...upstreamEnv(up), TOLLGATE_OAUTH_SIGNIN_ATTEMPTS_PER_MINUTE: '1000' },
    clock: { now: () => Date.now() + offset.ms },
    handlers: { 'scraperC/scrape': { run: async () => ({ raw: 'ok' }) } },
  });
  up.start(`${t.url}/oauth/federated/callback`);
});
afterAll(async () => {
  await t?.close();
  await up?.close();
});

interface Person {
  jar: CookieJar;
  key: string;
}

async function signIn(key: string): Promise<Person> {
  const jar = new CookieJar();
  const page = await hop(jar, `${t.url}/account/signin`);
  const f = formOf(page.text, '/account/signin');
  const r = await hop(jar, `${t.url}${f.action}`, { form: { csrf: f.csrf, api_key: key } });
  expect(r.status).toBe(303);
  return { jar, key };
}

/** A POST from the signed-in dashboard, with that browser's CSRF token. */
async function post(p: Person, path: string, fields: Record<string, string> = {}): Promise<Hop> {
  const dash = await hop(p.jar, `${t.url}/account`);
  const { csrf } = formOf(dash.text, '/account/keys');
  return hop(p.jar, `${t.url}${path}`, { form: { csrf, ...fields } });
}

async function accountOf(key: string): Promise<string> {
  const check = await verifyApiKey(t.gw.ledger, key);
  if (!check.ok) throw new Error(check.reason);
  return check.principal.accountId;
}

const linkIn = (html: string) =>
  /id="invite-link">([^<]+)</.exec(html)?.[1]?.replaceAll('&amp;', '&') as string;

/** An owner invites `name` as `role`; the invitee accepts in a browser of its own. */
async function join(owner: Person, name: string, role: string): Promise<Person & { link: string }> {
  const made = await post(owner, '/account/team/invite', { name, role });
  expect(made.status).toBe(201);
  const link = linkIn(made.text);
  expect(link).toMatch(new RegExp(`^${t.url}/account/join\\?token=[A-Za-z0-9_-]{43}$`));
  const jar = new CookieJar();
  const page = await hop(jar, link);
  expect(page.status).toBe(200);
  const f = formOf(page.text, '/account/join');
  const token = new URL(link).searchParams.get('token') as string;
  const r = await hop(jar, `${t.url}${f.action}`, { form: { csrf: f.csrf, token, name } });
  expect(r.status).toBe(201);
  const key = /id="api-key">(tg_sk_[^<]+)</.exec(r.text)?.[1] as string;
  return { jar, key, link };
}

async function team(label: string) {
  const { accountId, key } = await t.account('5');
  await t.gw.ledger.credit(accountId, 1, label);
  const owner = await signIn(key);
  return { accountId, owner };
}

describe('invitations', () => {
  it('[team:invite-once] [account:csrf] a link shows its invitation, is accepted once with its token, and expires', async () => {
    const { accountId, owner } = await team('invites');
    // Without its token the invitation form is refused.
    expect((await hop(owner.jar, `${t.url}/account/team/invite`, { form: { role: 'member' } })).status).toBe(
      403,
    );
    const made = await post(owner, '/account/team/invite', { name: 'Bo', role: 'member' });
    const link = linkIn(made.text);
    // Shown once: the dashboard does not show it again, and it is not stored.
    expect((await hop(owner.jar, `${t.url}/account`)).text).not.toContain(link);
    const token = new URL(link).searchParams.get('token') as string;

    const bo = new CookieJar();
    const page = await hop(bo, link);
    expect(page.text).toContain('invites you to this tollgate account as <strong>Member</strong>');
    const f = formOf(page.text, '/account/join');
    // No token, or another browser's: refused, and the link still works.
    expect((await hop(bo, `${t.url}/account/join`, { form: { token, name: 'Bo' } })).status).toBe(403);
    expect(
      (await hop(new CookieJar(), `${t.url}/account/join`, { form: { csrf: f.csrf, token, name: 'Bo' } }))
        .status,
    ).toBe(403);
    // A name is needed.
    expect(
      (await hop(bo, `${t.url}/account/join`, { form: { csrf: f.csrf, token, name: ' ' } })).status,
    ).toBe(400);
    const joined = await hop(bo, `${t.url}/account/join`, { form: { csrf: f.csrf, token, name: 'Bo' } });
    expect(joined.status).toBe(201);
    expect(joined.res.headers.get('cache-control')).toBe('no-store');
    const key = /id="api-key">(tg_sk_[^<]+)</.exec(joined.text)?.[1] as string;
    expect((await t.post('/api/run/platform/balance', {}, { key })).status).toBe(200);
    // Signed in as Bo at once.
    expect((await hop(bo, `${t.url}/account`)).text).toContain('Signed in as <strong>Bo</strong> (Member)');

    // Used: the link shows nothing and accepts nothing, in any browser.
    const again = new CookieJar();
    expect((await hop(again, link)).status).toBe(410);
    const pre = formOf((await hop(again, `${t.url}/account/signin`)).text, '/account/signin');
    expect(
      (await hop(again, `${t.url}/account/join`, { form: { csrf: pre.csrf, token, name: 'Eve' } })).status,
    ).toBe(410);
    expect((await t.gw.ledger.listApiKeys(accountId)).length).toBe(2);

    // Expired: a week later the link is gone.
    const late = linkIn((await post(owner, '/account/team/invite', { role: 'billing' })).text);
    offset.ms = INVITE_TTL_MS + 1;
    try {
      expect((await hop(new CookieJar(), late)).status).toBe(410);
    } finally {
      offset.ms = 0;
    }
    // Withdrawn by the owner.
    const withdrawn = linkIn((await post(owner, '/account/team/invite', { role: 'member' })).text);
    const dash = await hop(owner.jar, `${t.url}/account`);
    const ids = [...dash.text.matchAll(/name="invite_id" value="([^"]+)"/g)].map((m) => m[1] as string);
    expect(ids).toHaveLength(2);
    for (const id of ids)
      expect((await post(owner, '/account/team/invites/revoke', { invite_id: id })).status).toBe(303);
    expect((await hop(new CookieJar(), withdrawn)).status).toBe(410);
  });
});

describe('roles on every route', () => {
  it('[team:authz] a member sees and manages only its own keys and calls; billing pays but makes no keys for others', async () => {
    const { accountId, owner } = await team('roles');
    const mia = await join(owner, 'Mia', 'member');
    const bill = await join(owner, 'Bill', 'billing');
    const ownerKeyId = (await t.gw.ledger.listApiKeys(accountId))[0]?.id as string;
    const mine = await t.post('/api/run/scraperC/scrape', { url: 'http://127.0.0.1:9/' }, { key: mia.key });
    const theirs = await t.post(
      '/api/run/scraperC/scrape',
      { url: 'http://127.0.0.1:9/' },
      { key: owner.key },
    );
    expect([mine.status, theirs.status]).toEqual([200, 200]);

    // What a member sees: its keys and calls, the balance; no team, no apps, no card.
    const dash = (await hop(mia.jar, `${t.url}/account`)).text;
    expect(dash).toContain('Your API keys');
    expect(dash).toContain(mine.body.transaction_id);
    expect(dash).not.toContain(theirs.body.transaction_id);
    expect(dash).not.toContain(ownerKeyId);
    for (const id of ['id="team"', 'id="spend"', 'id="events"', 'id="apps"', 'id="payments"'])
      expect(dash).not.toContain(id);
    expect(dash).toContain('id="available"');
    const csv = (await hop(mia.jar, `${t.url}/account/transactions.csv`)).text;
    expect(csv).toContain(mine.body.transaction_id);
    expect(csv).not.toContain(theirs.body.transaction_id);
    expect(csv).not.toContain(',credit,');

    // What a member may not do: refused, and nothing changes.
    const ownerMember = founderId(accountId);
    expect((await post(mia, '/account/team/remove', { member_id: ownerMember })).status).toBe(403);
    expect((await post(mia, '/account/team/role', { member_id: ownerMember, role: 'member' })).status).toBe(
      403,
    );
    expect((await post(mia, '/account/team/invite', { role: 'owner' })).status).toBe(403);
    expect((await post(mia, '/account/keys/revoke', { key_id: ownerKeyId })).status).toBe(404);
    expect((await post(mia, '/account/keys', { member_id: ownerMember, name: 'x' })).status).toBe(403);
    expect((await post(mia, '/account/card')).status).toBe(403);
    expect((await post(mia, '/account/topup', { amount_usd: '10' })).status).toBe(403);
    expect((await post(mia, '/account/apps/revoke', { client_id: 'x' })).status).toBe(403);
    expect((await hop(mia.jar, `${t.url}/account/team/spend.csv`)).status).toBe(403);
    expect((await t.post('/api/run/platform/balance', {}, { key: owner.key })).status).toBe(200);
    // Its own key it makes and revokes.
    expect((await post(mia, '/account/keys', { name: 'second' })).status).toBe(201);

    // Billing: the whole history, the card, spend per member; keys only for itself; no members or roles.
    const billDash = (await hop(bill.jar, `${t.url}/account`)).text;
    for (const id of ['id="team"', 'id="spend"', 'id="events"', 'id="payments"', theirs.body.transaction_id])
      expect(billDash).toContain(id);
    expect(billDash).not.toContain('id="apps"');
    expect(billDash).not.toContain('/account/team/invite');
    expect(billDash).not.toContain('/account/team/remove');
    const miaMember = /data-member="(mbr_[^"]+)"><td class="lead">Mia/.exec(billDash)?.[1] as string;
    expect((await post(bill, '/account/keys', { member_id: miaMember, name: 'sneaky' })).status).toBe(403);
    expect((await post(bill, '/account/keys', { name: 'mine' })).status).toBe(201);
    expect((await post(bill, '/account/team/remove', { member_id: miaMember })).status).toBe(403);
    expect((await hop(bill.jar, `${t.url}/account/team/spend.csv`)).status).toBe(200);
    expect((await hop(bill.jar, `${t.url}/account/transactions.csv`)).text).toContain(
      theirs.body.transaction_id,
    );

    // The owner makes a key for Mia: it is hers, shown once to the owner to hand over.
    const forMia = await post(owner, '/account/keys', { member_id: miaMember, name: 'from owner' });
    expect(forMia.status).toBe(201);
    expect(forMia.text).toContain('for Mia');
    expect((await hop(mia.jar, `${t.url}/account`)).text).toContain('from owner');
  });

  it('[team:authz] attempts on another account are refused as unknown', async () => {
    const a = await team('a');
    const b = await team('b');
    const bob = await join(b.owner, 'Bob', 'member');
    const bDash = (await hop(b.owner.jar, `${t.url}/account`)).text;
    const bobId = /data-member="(mbr_[^"]+)"><td class="lead">Bob/.exec(bDash)?.[1] as string;
    const bobKey = (await t.gw.ledger.listApiKeys(b.accountId)).at(-1)?.id as string;
    await post(b.owner, '/account/team/invite', { role: 'member', name: 'Pending' });
    const inviteId = /name="invite_id" value="([^"]+)"/.exec(
      (await hop(b.owner.jar, `${t.url}/account`)).text,
    )?.[1];
    expect((await post(a.owner, '/account/team/remove', { member_id: bobId })).status).toBe(404);
    expect((await post(a.owner, '/account/team/role', { member_id: bobId, role: 'owner' })).status).toBe(404);
    expect(
      (await post(a.owner, '/account/team/invites/revoke', { invite_id: inviteId as string })).status,
    ).toBe(404);
    expect((await post(a.owner, '/account/keys', { member_id: bobId, name: 'x' })).status).toBe(404);
    expect((await post(a.owner, '/account/keys/revoke', { key_id: bobKey })).status).toBe(404);
    expect((await t.post('/api/run/platform/balance', {}, { key: bob.key })).status).toBe(200);
    expect((await hop(bob.jar, `${t.url}/account`)).status).toBe(200);
  });
});

describe('removal and roles', () => {
  it('[team:remove-stops-keys] [team:last-owner] removing a member stops its keys and sessions at once; the last owner stays', async () => {
    const { owner } = await team('removal');
    const max = await join(owner, 'Max', 'member');
    const dash = (await hop(owner.jar, `${t.url}/account`)).text;
    const maxId = /data-member="(mbr_[^"]+)"><td class="lead">Max/.exec(dash)?.[1] as string;
    const ownerId = /data-member="(mbr_[^"]+)"><td class="lead">[^<]*<span class="hint">\(you\)/.exec(
      dash,
    )?.[1];

    // The owner is the last owner: it can neither leave nor step down.
    expect((await post(owner, '/account/team/remove', { member_id: ownerId as string })).status).toBe(409);
    expect(
      (await post(owner, '/account/team/role', { member_id: ownerId as string, role: 'member' })).status,
    ).toBe(409);
    // A role change shows at once: Max as billing sees the card section.
    expect((await post(owner, '/account/team/role', { member_id: maxId, role: 'billing' })).status).toBe(303);
    expect((await hop(max.jar, `${t.url}/account`)).text).toContain('id="payments"');

    const maxCsrf = formOf((await hop(max.jar, `${t.url}/account`)).text, '/account/keys').csrf;
    expect((await post(owner, '/account/team/remove', { member_id: maxId })).status).toBe(303);
    const refused = await t.post('/api/run/platform/balance', {}, { key: max.key });
    expect(refused.status).toBe(401);
    // Its sessions were deleted: the next request is sent to sign in.
    const after = await hop(max.jar, `${t.url}/account`);
    expect(after.location).toBe(`${t.url}/account/signin`);
    expect(
      (await hop(max.jar, `${t.url}/account/keys`, { form: { csrf: maxCsrf, name: 'after' } })).status,
    ).toBe(403);
    // Its key no longer signs in either.
    const jar = new CookieJar();
    const f = formOf((await hop(jar, `${t.url}/account/signin`)).text, '/account/signin');
    expect((await hop(jar, `${t.url}${f.action}`, { form: { csrf: f.csrf, api_key: max.key } })).status).toBe(
      401,
    );
    // Removed twice: unknown.
    expect((await post(owner, '/account/team/remove', { member_id: maxId })).status).toBe(404);
    // The log says who did it.
    const log = (await hop(owner.jar, `${t.url}/account`)).text;
    expect(log).toMatch(/removed Max \(1 key\(s\) revoked\)/);
    expect(log).toMatch(/changed the role of Max from member to billing/);
  });

  it('[team:founder-removed] when the first owner is removed, its upstream identity signs in to an account of its own', async () => {
    up.user = 'fay';
    const fay = new CookieJar();
    const pre = formOf((await hop(fay, `${t.url}/account/signin`)).text, '/account/federated');
    let r = await hop(fay, `${t.url}${pre.action}`, { form: { csrf: pre.csrf } });
    for (let i = 0; i < 10 && r.status >= 300 && r.status < 400 && r.location; i++)
      r = await hop(fay, r.location);
    expect(r.status).toBe(201);
    const fayKey = /id="api-key">(tg_sk_[^<]+)</.exec(r.text)?.[1] as string;
    const fayAccount = await accountOf(fayKey);
    const owner: Person = { jar: fay, key: fayKey };
    const oz = await join(owner, 'Oz', 'owner');
    const ozDash = (await hop(oz.jar, `${t.url}/account`)).text;
    expect((await post(oz, '/account/team/remove', { member_id: founderId(fayAccount) })).status).toBe(303);
    expect(ozDash).toContain('fay@example.test');
    // Fay's keys and session stop; signing in upstream again makes a new, empty account.
    expect((await t.post('/api/run/platform/balance', {}, { key: fayKey })).status).toBe(401);
    expect((await hop(fay, `${t.url}/account`)).location).toBe(`${t.url}/account/signin`);
    const again = new CookieJar();
    const f = formOf((await hop(again, `${t.url}/account/signin`)).text, '/account/federated');
    r = await hop(again, `${t.url}${f.action}`, { form: { csrf: f.csrf } });
    for (let i = 0; i < 10 && r.status >= 300 && r.status < 400 && r.location; i++)
      r = await hop(again, r.location);
    expect(r.status).toBe(201);
    const newKey = /id="api-key">(tg_sk_[^<]+)</.exec(r.text)?.[1] as string;
    expect(await accountOf(newKey)).not.toBe(fayAccount);
  });

  it('[team:audit] [team:remove-stops-keys] app changes are recorded; an app a member connected with its key stops with the member', async () => {
    const { owner } = await team('apps');
    const app = await connectedClient(t.url, owner.key, { dailyLimit: '5' });
    expect(
      (
        await post(owner, '/account/apps/limit', {
          client_id: app.clientId,
          daily_limit: 'custom',
          custom_limit_usd: '2',
        })
      ).status,
    ).toBe(303);
    expect((await post(owner, '/account/apps/revoke', { client_id: app.clientId })).status).toBe(303);
    const log = (await hop(owner.jar, `${t.url}/account`)).text;
    expect(log).toMatch(/set the daily limit of app Test MCP host to \$2\.00/);
    expect(log).toMatch(/disconnected app Test MCP host/);

    // A member connects a host by signing in with its own key; removing the member cuts the host off.
    const kim = await join(owner, 'Kim', 'member');
    const hosted = await connectedClient(t.url, kim.key);
    expect((await mcpPost(t.url, hosted.accessToken, INITIALIZE)).status).toBe(200);
    const dash = (await hop(owner.jar, `${t.url}/account`)).text;
    const kimId = /data-member="(mbr_[^"]+)"><td class="lead">Kim/.exec(dash)?.[1] as string;
    expect((await post(owner, '/account/team/remove', { member_id: kimId })).status).toBe(303);
    expect((await mcpPost(t.url, hosted.accessToken, INITIALIZE)).status).toBe(401);
  });
});
