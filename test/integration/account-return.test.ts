import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CookieJar, formOf, hop } from '../e2e/oauth-helpers.js';
import { listenUpstream, type Upstream, upstreamEnv } from '../e2e/oauth-upstream.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

// Sign-in returns to the page that sent the person there (src/account/next.ts), through the upstream provider's
// sign-in too (the page rides in a cookie on the upstream callback's path). The API-key sign-in's return, and
// forged return paths, are in test/e2e/mcp-top-up.test.ts and test/unit/account-next.test.ts.

let t: TestGateway;
let up: Upstream;

beforeAll(async () => {
  up = await listenUpstream();
  t = await startGateway({ env: { ...upstreamEnv(up), TOLLGATE_OAUTH_SIGNIN_ATTEMPTS_PER_MINUTE: '1000' } });
  up.start(`${t.url}/oauth/federated/callback`);
});
afterAll(async () => {
  await t?.close();
  await up?.close();
});

/** Follows redirects from `r` until one lands on `stop` (or there are no more). */
async function follow(jar: CookieJar, r: Awaited<ReturnType<typeof hop>>, stop: string) {
  for (let i = 0; i < 10 && r.status >= 300 && r.status < 400 && r.location; i++) {
    if (r.location === stop) break;
    r = await hop(jar, r.location);
  }
  return r;
}

describe('[account:sign-in-returns] sign-in with the upstream provider', () => {
  it('returns to the page the person opened signed out', async () => {
    up.user = 'frank';
    // The account exists (a first sign-in made it).
    const first = new CookieJar();
    const signup = await hop(first, `${t.url}/account/signup`);
    const f0 = formOf(signup.text, '/account/federated');
    expect(
      (await follow(first, await hop(first, `${t.url}${f0.action}`, { form: { csrf: f0.csrf } }), '')).status,
    ).toBe(201);

    const jar = new CookieJar();
    const opened = await hop(jar, `${t.url}/account/top-up`);
    expect(opened.location).toBe(`${t.url}/account/signin?next=%2Faccount%2Ftop-up`);
    const page = await hop(jar, opened.location as string);
    expect(page.text).toContain('<input type="hidden" name="next" value="/account/top-up">');
    const f = formOf(page.text, '/account/federated');
    const start = await hop(jar, `${t.url}${f.action}`, { form: { csrf: f.csrf, next: '/account/top-up' } });
    const back = await follow(jar, start, `${t.url}/account/top-up`);
    expect(back.location).toBe(`${t.url}/account/top-up`);
    expect(jar.names()).not.toContain('tg_account_next');
    const shown = await hop(jar, `${t.url}/account/top-up`);
    expect(shown.status).toBe(200);
    // Card payments are off on this gateway: the page says who adds credit.
    expect(shown.text).toContain('ask its operator to add credit');
  });
});
