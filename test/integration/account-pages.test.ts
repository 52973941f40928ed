import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CookieJar, hop } from '../e2e/oauth-helpers.js';
import { listenUpstream, type Upstream, upstreamEnv } from '../e2e/oauth-upstream.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

// The people-facing pages over raw HTTP (the browser test is test/e2e/account-dashboard.test.ts): the landing
// page, sign-up (closed by default, rate limited), sign-in, sessions and their cookies, CSRF on every form, keys,
// and the CSV export.

let open: TestGateway;
let closed: TestGateway;
let up: Upstream;

beforeAll(async () => {
  up = await listenUpstream();
  open = await startGateway({
    env: {
      TOLLGATE_SIGNUP: 'open',
      TOLLGATE_SIGNUPS_PER_HOUR: '3',
      TOLLGATE_OAUTH_SIGNIN_ATTEMPTS_PER_MINUTE: '5',
    },
  });
  closed = await startGateway({
    env: { ...upstreamEnv(up), TOLLGATE_OAUTH_SIGNIN_ATTEMPTS_PER_MINUTE: '1000' },
    handlers: { 'scraperC/scrape': { run: async () => ({ raw: 'ok' }) } },
  });
  up.start(`${closed.url}/oauth/federated/callback`);
});
afterAll(async () => {
  await open?.close();
  await closed?.close();
  await up?.close();
});

/** A POST form of the page whose action ends with `suffix`: its action and CSRF token. */
function form(html: string, suffix: string): { action: string; csrf: string } {
  for (const m of html.matchAll(/<form method="post" action="([^"]+)"[^>]*>([\s\S]*?)<\/form>/g)) {
    if (!(m[1] as string).endsWith(suffix)) continue;
    return { action: m[1] as string, csrf: /name="csrf" value="([^"]+)"/.exec(m[2] as string)?.[1] ?? '' };
  }
  throw new Error(`no form ${suffix} in ${html.slice(0, 1500)}`);
}

async function submit(
  t: TestGateway,
  jar: CookieJar,
  page: string,
  suffix: string,
  fields: Record<string, string>,
) {
  const p = await hop(jar, `${t.url}${page}`);
  const f = form(p.text, suffix);
  return hop(jar, `${t.url}${f.action}`, { form: { csrf: f.csrf, ...fields } });
}

async function signUp(t: TestGateway, jar = new CookieJar(), name = 'sam') {
  const r = await submit(t, jar, '/account/signup', '/account/signup', { name });
  return { r, jar, key: /id="api-key">(tg_sk_[^<]+)</.exec(r.text)?.[1] };
}

describe('the landing page', () => {
  it('[account:landing] says what the gateway is and links to the dashboard, the catalog, /openapi.json and the MCP URL', async () => {
    const r = await hop(new CookieJar(), `${open.url}/`);
    expect(r.status).toBe(200);
    expect(r.res.headers.get('content-type')).toMatch(/text\/html/);
    expect(r.res.headers.get('content-security-policy')).toMatch(/default-src 'none'; style-src 'sha256-/);
    for (const link of ['href="/account"', 'href="/api/run"', 'href="/openapi.json"', `${open.url}/mcp`]) {
      expect(r.text).toContain(link);
    }
    expect(r.text).toContain('pay-per-call services for AI agents');
  });
});

describe('sign-up', () => {
  it('[account:signup] is closed by default: the page says so and a POST is refused', async () => {
    const jar = new CookieJar();
    const page = await hop(jar, `${closed.url}/account/signup`);
    // This gateway has an upstream provider: that is how people sign up here.
    expect(page.text).toContain('Sign up with Example ID');
    expect(page.text).not.toContain('Create my account');
    const csrf = /name="csrf" value="([^"]+)"/.exec(page.text)?.[1] as string;
    const r = await hop(jar, `${closed.url}/account/signup`, { form: { csrf, name: 'x' } });
    expect(r.status).toBe(403);
    expect(r.text).toContain('Sign-up is closed');
  });

  it('[account:signup] [account:session-cookies] open sign-up creates an account, shows its key once, and signs in', async () => {
    const { r, jar, key } = await signUp(open);
    expect(r.status).toBe(201);
    expect(r.res.headers.get('cache-control')).toBe('no-store');
    expect(key).toMatch(/^tg_sk_[A-Za-z0-9_-]{43}$/);
    const cookie = r.res.headers.getSetCookie().find((c) => c.startsWith('tg_session='));
    expect(cookie).toMatch(/; Path=\/account; Max-Age=43200; HttpOnly; SameSite=Lax$/);
    const dash = await hop(jar, `${open.url}/account`);
    expect(dash.status).toBe(200);
    expect(dash.text).toContain('Your account: sam');
    // The key works, and is never shown again.
    expect((await open.post('/api/run/platform/balance', {}, { key })).status).toBe(200);
    expect(dash.text).not.toContain(key as string);
  });

  it('[account:session-cookies] behind TLS every cookie of the pages is Secure too', async () => {
    const PUBLIC = 'https://gw.example';
    const tls = await startGateway({ env: { TOLLGATE_SIGNUP: 'open', TOLLGATE_PUBLIC_URL: PUBLIC } });
    try {
      const jar = new CookieJar();
      jar.rewrite = { from: PUBLIC, to: tls.url };
      const page = await hop(jar, `${PUBLIC}/account/signup`);
      const csrfCookie = page.res.headers.getSetCookie().find((c) => c.startsWith('tg_account_csrf='));
      expect(csrfCookie).toMatch(/; Path=\/account; Max-Age=3600; HttpOnly; SameSite=Lax; Secure$/);
      const f = form(page.text, '/account/signup');
      const r = await hop(jar, `${PUBLIC}${f.action}`, { form: { csrf: f.csrf, name: 'tls' } });
      expect(r.status).toBe(201);
      expect(r.res.headers.getSetCookie().find((c) => c.startsWith('tg_session='))).toMatch(
        /HttpOnly; SameSite=Lax; Secure$/,
      );
    } finally {
      await tls.close();
    }
  });

  it('[account:signup-rate-limit] sign-ups are limited per client IP', async () => {
    // Two more sign-ups fit in this hour's window of 3 (the test above made one), the next is refused.
    for (let i = 0; i < 2; i++) expect((await signUp(open)).r.status).toBe(201);
    const r = (await signUp(open)).r;
    expect(r.status).toBe(429);
    expect(Number(r.res.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});

describe('sign-in and sessions', () => {
  it('[account:sign-in] an API key signs in; a wrong one does not; attempts are rate limited', async () => {
    const { accountId, key } = await open.account('1');
    const jar = new CookieJar();
    expect((await hop(jar, `${open.url}/account`)).location).toBe(`${open.url}/account/signin`);
    const bad = await submit(open, jar, '/account/signin', '/account/signin', { api_key: 'tg_sk_nope' });
    expect(bad.status).toBe(401);
    expect(bad.text).toContain('That API key was not accepted');
    const ok = await submit(open, jar, '/account/signin', '/account/signin', { api_key: key });
    expect(ok.status).toBe(303);
    expect((await hop(jar, `${open.url}/account`)).text).toContain(accountId);
    // 5 attempts a minute from one address: the 6th is refused (two were made above).
    const other = new CookieJar();
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      statuses.push(
        (await submit(open, other, '/account/signin', '/account/signin', { api_key: 'tg_sk_x' })).status,
      );
    }
    expect(statuses).toEqual([401, 401, 401, 429]);
  });

  it('[account:csrf] every form refuses a POST without its token or with another browser’s', async () => {
    const { key } = await closed.account('1');
    const a = new CookieJar();
    await submit(closed, a, '/account/signin', '/account/signin', { api_key: key });
    const dash = await hop(a, `${closed.url}/account`);
    const create = form(dash.text, '/account/keys');
    expect((await hop(a, `${closed.url}/account/keys`, { form: { name: 'x' } })).status).toBe(403);
    expect((await hop(a, `${closed.url}/account/keys`, { form: { name: 'x', csrf: 'forged' } })).status).toBe(
      403,
    );
    // Another browser's session cannot use this one's token, nor can a browser without a session.
    const b = new CookieJar();
    const { key: key2 } = await closed.account('1');
    await submit(closed, b, '/account/signin', '/account/signin', { api_key: key2 });
    expect(
      (await hop(b, `${closed.url}/account/keys`, { form: { name: 'x', csrf: create.csrf } })).status,
    ).toBe(403);
    expect(
      (
        await hop(new CookieJar(), `${closed.url}/account/signin`, {
          form: { api_key: key, csrf: create.csrf },
        })
      ).status,
    ).toBe(403);
    expect(
      (await hop(a, `${closed.url}/account/keys`, { form: { name: 'ok', csrf: create.csrf } })).status,
    ).toBe(201);
  });

  it('[account:keys] a key is shown once at creation; revoking the key a session signed in with ends the session', async () => {
    const { accountId, key } = await closed.account('1');
    const jar = new CookieJar();
    await submit(closed, jar, '/account/signin', '/account/signin', { api_key: key });
    const created = await submit(closed, jar, '/account', '/account/keys', { name: 'ci' });
    expect(created.status).toBe(201);
    const fresh = /id="new-api-key">(tg_sk_[^<]+)</.exec(created.text)?.[1] as string;
    expect((await closed.post('/api/run/platform/balance', {}, { key: fresh })).status).toBe(200);
    const again = await hop(jar, `${closed.url}/account`);
    expect(again.text).not.toContain(fresh);
    // Revoke the new key: it stops working at once.
    const keys = await closed.gw.ledger.listApiKeys(accountId);
    const ci = keys.find((k) => k.name === 'ci') as { id: string };
    const dash = await hop(jar, `${closed.url}/account`);
    const revoke = form(dash.text, '/account/keys/revoke');
    const r = await hop(jar, `${closed.url}${revoke.action}`, { form: { csrf: revoke.csrf, key_id: ci.id } });
    expect(r.status).toBe(303);
    expect((await closed.post('/api/run/platform/balance', {}, { key: fresh })).status).toBe(401);
    // Another account's key cannot be revoked from here.
    const stranger = await closed.account('1');
    const strangerKey = (await closed.gw.ledger.listApiKeys(stranger.accountId))[0] as { id: string };
    const refused = await hop(jar, `${closed.url}${revoke.action}`, {
      form: { csrf: revoke.csrf, key_id: strangerKey.id },
    });
    expect(refused.status).toBe(404);
    expect((await closed.post('/api/run/platform/balance', {}, { key: stranger.key })).status).toBe(200);
    // Revoking the key this session signed in with ends the session.
    const own = (keys.find((k) => k.name !== 'ci') as { id: string }).id;
    await hop(jar, `${closed.url}${revoke.action}`, { form: { csrf: revoke.csrf, key_id: own } });
    const after = await hop(jar, `${closed.url}/account`);
    expect(after.location).toBe(`${closed.url}/account/signin?done=session_ended`);
  });

  it('[account:federated-signup] an upstream sign-in from the dashboard creates the account once and shows its first key once', async () => {
    up.user = 'erin';
    const jar = new CookieJar();
    let r = await submit(closed, jar, '/account/signup', '/account/federated', {});
    for (let i = 0; i < 10 && r.status >= 300 && r.status < 400 && r.location; i++)
      r = await hop(jar, r.location);
    expect(r.status).toBe(201);
    const key = /id="api-key">(tg_sk_[^<]+)</.exec(r.text)?.[1] as string;
    const balance = await closed.post('/api/run/platform/balance', {}, { key });
    expect(balance.status).toBe(200);
    expect((await hop(jar, `${closed.url}/account`)).text).toContain('erin@example.test');
    // The next sign-in finds the account and goes to the dashboard: no second key.
    const again = new CookieJar();
    r = await submit(closed, again, '/account/signin', '/account/federated', {});
    for (let i = 0; i < 10 && r.status >= 300 && r.status < 400 && r.location; i++) {
      if (r.location.endsWith('/account')) break;
      r = await hop(again, r.location);
    }
    expect(r.location).toBe(`${closed.url}/account`);
    const dash = await hop(again, `${closed.url}/account`);
    expect(dash.text).toContain('erin@example.test');
  });
});

describe('transactions export', () => {
  it('[account:csv] exports the filtered history as CSV, formulas defused', async () => {
    const { accountId, key } = await closed.account('1');
    await closed.gw.ledger.credit(accountId, 250_000, 'bonus');
    const jar = new CookieJar();
    await submit(closed, jar, '/account/signin', '/account/signin', { api_key: key });
    // A call whose idempotency key a spreadsheet would run as a formula.
    const call = await closed.post(
      '/api/run/scraperC/scrape',
      { url: 'http://127.0.0.1:9/' },
      { key, headers: { 'idempotency-key': '=HYPERLINK("x")' } },
    );
    expect(call.status).toBe(200);
    const csv = await hop(jar, `${closed.url}/account/transactions.csv`);
    expect(csv.status).toBe(200);
    expect(csv.res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(csv.res.headers.get('content-disposition')).toBe(
      `attachment; filename="tollgate-${accountId}-transactions.csv"`,
    );
    const lines = csv.text.trim().split('\r\n');
    expect(lines[0]).toBe(
      'id,created_at,kind,action,status,amount_usd,amount_micros,price_cents,charged_micros,payment_method,provider,error_code,idempotency_key,memo',
    );
    expect(lines.some((l) => l.includes(',credit,account/credit,succeeded,0.25,250000,'))).toBe(true);
    expect(lines.some((l) => l.includes(',credit,account/credit,succeeded,1.00,1000000,'))).toBe(true);
    expect(
      lines.some(
        (l) =>
          l.includes(`${call.body.transaction_id},`) &&
          l.includes(',call,scraperC/scrape,succeeded,-0.01,-10000,1,10000,api_key,'),
      ),
    ).toBe(true);
    expect(csv.text).toContain(`,"'=HYPERLINK(""x"")",`);
    expect(csv.text).not.toMatch(/,=HYPERLINK/);
    const payments = await hop(jar, `${closed.url}/account/transactions.csv?kind=calls`);
    expect(payments.text).not.toContain(',credit,');
    const none = await hop(jar, `${closed.url}/account/transactions.csv?from=2000-01-01&to=2000-01-02`);
    expect(none.text.trim().split('\r\n')).toHaveLength(1);
    expect((await hop(new CookieJar(), `${closed.url}/account/transactions.csv`)).status).toBe(303);
  });
});
