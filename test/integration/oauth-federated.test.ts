import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.js';
import { connectClient } from '../e2e/mcp-clients.js';
import {
  CookieJar,
  codeFlow,
  formOf,
  hop,
  INITIALIZE,
  mcpPost,
  nativeClient,
  register,
  tokenRequest,
} from '../e2e/oauth-helpers.js';
import { listenUpstream, type Upstream, upstreamEnv } from '../e2e/oauth-upstream.js';
import { startGateway, storedText, type TestGateway } from '../helpers/gateway.js';

// Federated sign-in against a real OpenID Connect provider run by the test (oidc-provider on 127.0.0.1).

const REDIRECT = 'http://127.0.0.1:9/callback';
let up: Upstream;
let t: TestGateway;
const logLines: string[] = [];
const sink = new Writable({
  write(chunk, _enc, done) {
    logLines.push(String(chunk));
    done();
  },
});

beforeAll(async () => {
  up = await listenUpstream();
  t = await startGateway({
    env: {
      ...upstreamEnv(up),
      TOLLGATE_OAUTH_SIGNIN_ATTEMPTS_PER_MINUTE: '1000',
    },
    log: createLogger('trace', sink),
    handlers: { 'scraperC/scrape': { run: async () => ({ raw: 'ok' }) } },
  });
  up.start(`${t.url}/oauth/federated/callback`);
});
afterAll(async () => {
  await t.close();
  await up.close();
});

async function federatedTokens(jar = new CookieJar()) {
  const client = await register(t.url, nativeClient(REDIRECT));
  const flow = await codeFlow(t.url, client.client_id as string, {
    apiKey: '',
    federated: true,
    redirectUri: REDIRECT,
    jar,
  });
  const tok = await tokenRequest(t.url, {
    grant_type: 'authorization_code',
    code: flow.code,
    code_verifier: flow.verifier,
    redirect_uri: REDIRECT,
    client_id: client.client_id as string,
  });
  expect(tok.status).toBe(200);
  return tok.body as { access_token: string };
}

/**
 * The account a token acts for, found by calling a paid tool with it. An account made by upstream sign-in starts
 * empty (its welcome credit line comes with a card on file): the first call of a new account is refused for lack
 * of credit, naming the account; it is then given 1 USD and the call runs.
 */
async function accountOf(token: string): Promise<string> {
  const client = await connectClient('v2-legacy', t.url, token);
  try {
    let r = await client.callTool('scraperC_scrape', { url: 'http://127.0.0.1:9/' });
    if (r.isError) {
      expect(r.structuredContent.error.code).toBe('insufficient_credit');
      const fresh = r.structuredContent.error.details.account_id as string;
      expect(await t.gw.ledger.balance(fresh)).toEqual({
        balance_micros: 0,
        held_micros: 0,
        available_micros: 0,
      });
      await t.gw.ledger.credit(fresh, 1_000_000, 'test credit');
      r = await client.callTool('scraperC_scrape', { url: 'http://127.0.0.1:9/' });
    }
    expect(r.isError).toBeFalsy();
    const tx = await t.gw.ledger.getCall(r.structuredContent.transaction_id);
    return tx?.account_id as string;
  } finally {
    await client.close();
  }
}

describe('sign in with an upstream OpenID Connect provider', () => {
  it('[oauth:federated-sign-in] the first sign-in creates an empty account (its welcome line comes with a card); the next finds it', async () => {
    up.user = 'alice';
    const first = await federatedTokens();
    const accountId = await accountOf(first.access_token);
    expect((await t.gw.ledger.getAccount(accountId))?.name).toBe('alice@example.test');
    expect((await t.gw.ledger.balance(accountId)).balance_micros).toBe(1_000_000 - 10_000);
    expect((await t.gw.ledger.creditLine(accountId)).limit_micros).toBe(0);
    // A second sign-in (another host, a fresh browser) lands on the same account.
    const again = await federatedTokens();
    expect(await accountOf(again.access_token)).toBe(accountId);
    expect((await t.gw.ledger.balance(accountId)).balance_micros).toBe(1_000_000 - 20_000);
    up.user = 'bob';
    expect(await accountOf((await federatedTokens()).access_token)).not.toBe(accountId);
  });

  it('[oauth:no-token-passthrough] the upstream tokens are neither stored, logged, passed on, nor accepted at /mcp', async () => {
    up.user = 'carol';
    up.issuedTokens.length = 0;
    const ours = await federatedTokens();
    expect(up.issuedTokens.length).toBeGreaterThan(0);
    const db = await storedText(t.gw);
    for (const upstream of up.issuedTokens) {
      expect(ours.access_token).not.toBe(upstream);
      expect(db.includes(upstream)).toBe(false);
      expect(logLines.join('').includes(upstream)).toBe(false);
      expect((await mcpPost(t.url, upstream, INITIALIZE)).status).toBe(401);
    }
  });

  it('[oauth:federated-sign-in] an upstream refusal brings the user back to the sign-in page with an alert', async () => {
    up.denies = true;
    try {
      const jar = new CookieJar();
      const client = await register(t.url, nativeClient(REDIRECT));
      const q = new URLSearchParams({
        response_type: 'code',
        client_id: client.client_id as string,
        redirect_uri: REDIRECT,
        scope: 'mcp',
        code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
        code_challenge_method: 'S256',
      });
      let r = await hop(jar, `${t.url}/oauth/authorize?${q}`);
      r = await hop(jar, r.location as string);
      expect(r.text).toContain('Sign in with Example ID');
      const f = formOf(r.text, '/federated');
      r = await hop(jar, f.action, { form: { csrf: f.csrf } });
      while (r.status === 303) r = await hop(jar, r.location as string);
      expect(r.status).toBe(200);
      expect(r.text).toContain('role="alert"');
      expect(r.text).toContain('Sign-in with Example ID did not complete');
    } finally {
      up.denies = false;
    }
  });

  it('[oauth:federated-state-bound] the upstream callback is refused without its browser-bound state, and works once', async () => {
    const jar = new CookieJar();
    const client = await register(t.url, nativeClient(REDIRECT));
    const q = new URLSearchParams({
      response_type: 'code',
      client_id: client.client_id as string,
      redirect_uri: REDIRECT,
      scope: 'mcp',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
    });
    let r = await hop(jar, `${t.url}/oauth/authorize?${q}`);
    r = await hop(jar, r.location as string);
    const f = formOf(r.text, '/federated');
    r = await hop(jar, f.action, { form: { csrf: f.csrf } });
    while (r.status === 303 && !r.location?.includes('/oauth/federated/callback'))
      r = await hop(jar, r.location as string);
    const callbackUrl = r.location as string;
    // Another browser (no state cookie) cannot complete it.
    expect((await hop(new CookieJar(), callbackUrl)).status).toBe(403);
    const done = await hop(jar, callbackUrl);
    expect(done.status).toBe(303);
    expect(done.location).toContain('/oauth/authorize/');
    // Replaying the callback: the state was single-use and its cookie is gone.
    expect((await hop(jar, callbackUrl)).status).toBe(403);
  });
});
