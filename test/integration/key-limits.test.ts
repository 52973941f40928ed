import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../../auth/api-keys.js';
import { connectClient } from '../e2e/mcp-clients.js';
import {
  CookieJar,
  connectedClient,
  formOf,
  hop,
  nativeClient,
  pkce,
  register,
} from '../e2e/oauth-helpers.js';
import { type FakeOpenRouter, llmEnv, startFakeOpenRouter, TEST_MODELS } from '../fakes/openrouter.js';
import { runCli } from '../helpers/cli.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

// Limits per API key through the real doors of one gateway (SQLite): the HTTP shim, MCP and the model router, the
// CLI beside it. A daily or monthly cap refuses with 429 + Retry-After naming the limit and when it resets; a call
// above the key's maximum per call (a metered call's worst case included) or outside its allowed actions with
// 403; nothing is charged for any refusal. Then 1,000 parallel calls against each cap (the SQLite race).

const CHAT = '/api/llm/v1/chat/completions';
const SCRAPE = '/api/run/scraperC/scrape';
const ARGS = { url: 'http://127.0.0.1:9/' };
const offset = { ms: 0 };
let fake: FakeOpenRouter;
let t: TestGateway;
let cwd: string;

beforeAll(async () => {
  fake = await startFakeOpenRouter(TEST_MODELS);
  t = await startGateway({
    env: { ...llmEnv(fake), TOLLGATE_KEY_CACHE_SECONDS: '1' },
    clock: { now: () => Date.now() + offset.ms },
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
  cwd = mkdtempSync(join(tmpdir(), 'tg-key-limits-'));
});
afterAll(async () => {
  await t?.close();
  await fake?.close();
  rmSync(cwd, { recursive: true, force: true });
});

function cli(...args: string[]) {
  return runCli(args, { cwd, env: t.cliEnv() });
}

/** An account with `usd` and a key with these limits (set in this process: they apply at once). */
async function limitedKey(
  usd: string,
  limits: Parameters<TestGateway['gw']['ledger']['setApiKeyLimits']>[1],
) {
  const acct = await t.account(usd);
  const [row] = await t.gw.ledger.listApiKeys(acct.accountId);
  await t.gw.ledger.setApiKeyLimits(row?.id as string, limits);
  return { ...acct, keyId: row?.id as string };
}

const balance = async (accountId: string) => (await t.gw.ledger.balance(accountId)).balance_micros;

describe('limits per API key, through the doors', () => {
  it('[keys:cap-refusal] a daily limit: the call past it is a 429 naming the limit, when it resets (Retry-After), and nothing charged', async () => {
    const { accountId, key } = await limitedKey('1', { daily_limit_micros: 30_000 });
    for (let i = 0; i < 3; i++) expect((await t.post(SCRAPE, ARGS, { key })).status).toBe(200);
    const refused = await t.post(SCRAPE, ARGS, { key });
    expect(refused.status).toBe(429);
    const midnight = new Date(
      Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate() + 1),
    );
    const resets = midnight.toISOString().replace('.000Z', 'Z');
    expect(refused.body).toMatchObject({
      ok: false,
      charged_cents: 0,
      error: {
        code: 'daily_cap_exceeded',
        retryable: true,
        details: {
          limit: 'daily',
          scope: 'key',
          limit_micros: 30_000,
          spent_micros: 30_000,
          resets_at: resets,
        },
      },
    });
    expect(refused.body.error.message).toContain("This API key's daily limit of $0.03 is reached");
    expect(refused.body.error.message).toContain(`resets at ${resets}`);
    expect(refused.body.error.message).toContain('Nothing was charged');
    const retry = Number(refused.headers['retry-after']);
    expect(Math.abs(retry - (midnight.getTime() - Date.now()) / 1000)).toBeLessThan(5);
    expect(await balance(accountId)).toBe(1_000_000 - 30_000);
    // Another key of the same account is not limited by it.
    const other = await t.gw.ledger.insertApiKey({ accountId, hash: 'x'.repeat(64), prefix: 'tg_sk_x' });
    expect(other.daily_limit_micros).toBeNull();
  });

  it('[keys:cap-refusal] a monthly limit: 429 monthly_cap_exceeded, resetting on the 1st; the next month it runs again', async () => {
    const { accountId, key } = await limitedKey('1', { monthly_limit_micros: 20_000 });
    expect((await t.post(SCRAPE, ARGS, { key })).status).toBe(200);
    expect((await t.post(SCRAPE, ARGS, { key })).status).toBe(200);
    const refused = await t.post(SCRAPE, ARGS, { key });
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({ code: 'monthly_cap_exceeded', details: { limit: 'monthly' } });
    expect(refused.body.error.message).toMatch(
      /This API key's monthly limit of \$0\.02 is reached .*resets at \d{4}-\d\d-01T00:00:00Z/,
    );
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(await balance(accountId)).toBe(1_000_000 - 20_000);
    // 32 days on, the month is another.
    offset.ms = 32 * 86_400_000;
    try {
      expect((await t.post(SCRAPE, ARGS, { key })).status).toBe(200);
    } finally {
      offset.ms = 0;
    }
  });

  it('[keys:max-call] a maximum per call: a flat price above it is a 403; a metered call above it too (lower max_tokens), below it runs', async () => {
    const { accountId, key } = await limitedKey('1', { max_call_micros: 5_000 });
    const flat = await t.post(SCRAPE, ARGS, { key });
    expect(flat.status).toBe(403);
    expect(flat.body.error).toMatchObject({
      code: 'call_limit_exceeded',
      retryable: false,
      details: { limit: 'max_call', limit_micros: 5_000, required_micros: 10_000 },
    });
    expect(flat.body.error.message).toContain("This API key's maximum per call is $0.005");
    // test/flat: 1 micro-USD per completion token, so a call's worst case is its max_tokens in micro-USD.
    fake.scenario('test/flat', { cost: 0.000002 });
    const ask = (maxTokens: number) =>
      t.post(
        CHAT,
        { model: 'test/flat', messages: [{ role: 'user', content: 'hi' }], max_tokens: maxTokens },
        { key },
      );
    const over = await ask(5_001);
    expect(over.status).toBe(403);
    expect(over.body.error).toMatchObject({ type: 'permission_error', code: 'call_limit_exceeded' });
    expect(over.body.error.message).toMatch(/holds up to \$0\.005001 .*lower max_tokens/);
    const requests = fake.requests.length;
    expect((await ask(5_000)).status).toBe(200);
    expect(fake.requests.length).toBe(requests + 1);
    expect(await balance(accountId)).toBe(1_000_000 - 2);
  });

  it('[keys:max-call] a call whose price alone is above a daily or monthly limit is a 403, not a 429 to wait out', async () => {
    const { accountId, key, keyId } = await limitedKey('1', { daily_limit_micros: 5_000 });
    const r = await t.post(SCRAPE, ARGS, { key });
    expect(r.status).toBe(403);
    expect(r.headers['retry-after']).toBeUndefined();
    expect(r.body.error).toMatchObject({
      code: 'call_limit_exceeded',
      details: { limit: 'daily', limit_micros: 5_000, required_micros: 10_000, key_id: keyId },
    });
    expect(r.body.error.message).toContain(
      "This API key's daily limit is $0.005 and scraperC/scrape costs $0.01",
    );
    await t.gw.ledger.setApiKeyLimits(keyId, { daily_limit_micros: null, monthly_limit_micros: 9_999 });
    expect((await t.post(SCRAPE, ARGS, { key })).body.error.details.limit).toBe('monthly');
    expect(await balance(accountId)).toBe(1_000_000);
  });

  it('[keys:dashboard] a key with limits cannot connect an OAuth app (it would hand the app spending beyond them)', async () => {
    const { key, accountId } = await limitedKey('1', { monthly_limit_micros: 1_000_000 });
    const redirectUri = 'http://127.0.0.1:9/callback';
    const client = await register(t.url, nativeClient(redirectUri));
    const params = new URLSearchParams({
      response_type: 'code',
      client_id: client.client_id as string,
      redirect_uri: redirectUri,
      scope: 'mcp',
      resource: `${t.url}/mcp`,
      code_challenge: pkce().challenge,
      code_challenge_method: 'S256',
      state: 's',
    });
    const jar = new CookieJar();
    let page = await hop(jar, `${t.url}/oauth/authorize?${params}`);
    while (page.location) page = await hop(jar, page.location);
    const login = formOf(page.text, '/login');
    const refused = await hop(jar, login.action, { form: { csrf: login.csrf, api_key: key } });
    expect(refused.status).toBe(403);
    expect(refused.text).toContain('That key has limits');
    // An unrestricted key of the same account signs in on the same page.
    const { key: owner } = await createApiKey(t.gw.ledger, accountId, 'owner');
    const again = formOf(refused.text, '/login');
    const ok = await hop(jar, again.action, { form: { csrf: again.csrf, api_key: owner } });
    expect(ok.status).toBeLessThan(400);
    await expect(connectedClient(t.url, key)).rejects.toThrow(/unexpected 403/);
  });

  it('[keys:actions] allowed actions: others are a 403 before anything runs, the model router included unless llm is listed', async () => {
    const { accountId, key, keyId } = await limitedKey('1', {
      actions: ['scraperC', 'propstats/value-estimate'],
    });
    expect((await t.post(SCRAPE, ARGS, { key })).status).toBe(200);
    const other = await t.post('/api/run/propstats/rent-estimate', { address: '1 Main St' }, { key });
    expect(other.status).toBe(403);
    expect(other.body.error).toMatchObject({
      code: 'action_not_allowed',
      details: {
        action: 'propstats/rent-estimate',
        allowed: ['scraperC', 'propstats/value-estimate'],
        key_id: keyId,
      },
    });
    expect(other.body.error.message).toContain(
      'This API key may call only scraperC, propstats/value-estimate',
    );
    const chat = await t.post(
      CHAT,
      { model: 'test/flat', messages: [{ role: 'user', content: 'hi' }] },
      { key },
    );
    expect(chat.status).toBe(403);
    expect(chat.body.error).toMatchObject({ type: 'permission_error', code: 'action_not_allowed' });
    await t.gw.ledger.setApiKeyLimits(keyId, { actions: ['llm'] });
    fake.scenario('test/flat', { cost: 0.000001 });
    expect(
      (await t.post(CHAT, { model: 'test/flat', messages: [{ role: 'user', content: 'hi' }] }, { key }))
        .status,
    ).toBe(200);
    expect((await t.post(SCRAPE, ARGS, { key })).status).toBe(403);
    expect(await balance(accountId)).toBe(1_000_000 - 10_000 - 1);
  });

  it('[keys:mcp] over MCP the same refusals are tool errors naming the limit, nothing charged', async () => {
    const { accountId, key } = await limitedKey('1', { daily_limit_micros: 10_000, actions: ['scraperC'] });
    const client = await connectClient('v2-modern', t.url, key);
    try {
      expect((await client.callTool('scraperC_scrape', ARGS)).isError).toBeFalsy();
      const capped = await client.callTool('scraperC_scrape', ARGS);
      expect(capped.isError).toBe(true);
      expect(capped.structuredContent).toMatchObject({
        error: { code: 'daily_cap_exceeded', details: { scope: 'key', limit: 'daily' } },
        charged_cents: 0,
      });
      expect(JSON.stringify(capped.content)).toContain("This API key's daily limit of $0.01 is reached");
      const other = await client.callTool('propstats_value-estimate', { address: '1 Main St' });
      expect(other.isError).toBe(true);
      expect(other.structuredContent).toMatchObject({
        error: { code: 'action_not_allowed' },
        charged_cents: 0,
      });
    } finally {
      await client.close();
    }
    expect(await balance(accountId)).toBe(1_000_000 - 10_000);
  });

  it('[keys:limit-change-cache] a change made in this process applies to the next call; the CLI beside it within TOLLGATE_KEY_CACHE_SECONDS', async () => {
    const { key, keyId } = await limitedKey('1', { daily_limit_micros: 10_000 });
    expect((await t.post(SCRAPE, ARGS, { key })).status).toBe(200);
    expect((await t.post(SCRAPE, ARGS, { key })).status).toBe(429);
    await t.gw.ledger.setApiKeyLimits(keyId, { daily_limit_micros: null });
    expect((await t.post(SCRAPE, ARGS, { key })).status).toBe(200);
    // The CLI writes the same database from its own process: the gateway sees it once its cached entry is 1 s old.
    const r = cli('keys', 'limit', keyId, '--daily-limit-usd', '0.02', '--json');
    expect(r.code, r.stderr).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect((await t.post(SCRAPE, ARGS, { key })).status).toBe(429);
  });
});

describe('the operator CLI', () => {
  it('[keys:cli] keys create with every limit, keys limit (none removes one), keys list --json with limits and spend', async () => {
    const { accountId } = await t.account('2');
    const created = cli(
      'keys',
      'create',
      accountId,
      '--name',
      'agent',
      '--max-call-usd',
      '0.05',
      '--daily-limit-usd',
      '5',
      '--monthly-limit-usd',
      '50',
      '--actions',
      'scraperC/scrape,llm',
      '--json',
    );
    expect(created.code, created.stderr).toBe(0);
    const made = JSON.parse(created.stdout);
    expect(made).toMatchObject({
      account_id: accountId,
      name: 'agent',
      api_key: expect.stringMatching(/^tg_sk_/),
      limits: {
        max_call_usd: '$0.05',
        daily_limit_usd: '$5.00',
        monthly_limit_usd: '$50.00',
        actions: ['scraperC/scrape', 'llm'],
        max_call_micros: 50_000,
        daily_limit_micros: 5_000_000,
        monthly_limit_micros: 50_000_000,
      },
    });
    expect((await t.post(SCRAPE, ARGS, { key: made.api_key })).status).toBe(200);

    const changed = cli(
      'keys',
      'limit',
      made.key_id,
      '--daily-limit-usd',
      'none',
      '--actions',
      'none',
      '--json',
    );
    expect(changed.code, changed.stderr).toBe(0);
    expect(JSON.parse(changed.stdout).limits).toMatchObject({
      max_call_usd: '$0.05',
      daily_limit_usd: null,
      monthly_limit_usd: '$50.00',
      actions: null,
    });

    const listed = cli('keys', 'list', accountId, '--json');
    expect(listed.code, listed.stderr).toBe(0);
    const agent = JSON.parse(listed.stdout).keys.find((k: { key_id: string }) => k.key_id === made.key_id);
    expect(agent).toMatchObject({
      limits: {
        max_call_micros: 50_000,
        daily_limit_micros: null,
        monthly_limit_micros: 50_000_000,
        actions: null,
      },
      spent: { today_micros: 10_000, today_usd: '$0.01', month_micros: 10_000, month_usd: '$0.01' },
    });
    const human = cli('keys', 'list', accountId);
    const row = human.stdout.split('\n').find((l) => l.startsWith(made.key_id)) as string;
    expect(row).toMatch(/\$0\.05\s+\$0\.01\s+\$0\.01 of \$50\.00\s+all$/);
  }, 60_000); // ten CLI processes, each a Node start: ~13 s here, more on a loaded machine

  it('[keys:cli] bad limits are usage errors naming the flag; an unknown key is not found; a change names at least one limit', () => {
    const bad = cli('keys', 'limit', 'key_x', '--daily-limit-usd', 'five', '--json');
    expect(bad.code).toBe(2);
    expect(JSON.parse(bad.stdout).error.message).toMatch(/^--daily-limit-usd: not a USD amount: "five"/);
    const unknownAction = cli('keys', 'create', 'nobody', '--actions', 'scraperC,nosuch/thing');
    expect(unknownAction.code).toBe(2);
    expect(unknownAction.stderr).toContain(
      '--actions: nosuch/thing is not a service or action of this gateway',
    );
    expect(unknownAction.stderr).toContain('usage: node bin/tollgate.js keys create <account>');
    const nothing = cli('keys', 'limit', 'key_x');
    expect(nothing.code).toBe(2);
    expect(nothing.stderr).toContain('name at least one limit to change');
    const missing = cli('keys', 'limit', 'key_nope', '--max-call-usd', '1', '--json');
    expect(missing.code).toBe(2);
    expect(JSON.parse(missing.stdout).error).toMatchObject({ code: 'not_found' });
  });
});

describe('the race, in one process (SQLite)', () => {
  async function race(limits: { daily_limit_micros?: number; monthly_limit_micros?: number }) {
    const { accountId, key } = await limitedKey('50', limits);
    const replies = await Promise.all(Array.from({ length: 1_000 }, () => t.post(SCRAPE, ARGS, { key })));
    const ok = replies.filter((r) => r.status === 200).length;
    const refused = replies.filter((r) => r.status === 429).length;
    const [usage] = await t.gw.ledger.keyUsage(accountId);
    return { ok, refused, spent: 50_000_000 - (await balance(accountId)), usage };
  }

  it('[keys:race] 1,000 parallel calls against a daily limit of $5.00: exactly 500 run, $5.00 charged, not a cent more', async () => {
    const r = await race({ daily_limit_micros: 5_000_000 });
    expect(r).toMatchObject({ ok: 500, refused: 500, spent: 5_000_000 });
    expect(r.usage?.spent_today_micros).toBe(5_000_000);
  });

  it('[keys:race] 1,000 parallel calls against a monthly limit of $3.00: exactly 300 run, $3.00 charged', async () => {
    const r = await race({ monthly_limit_micros: 3_000_000 });
    expect(r).toMatchObject({ ok: 300, refused: 700, spent: 3_000_000 });
    expect(r.usage?.spent_month_micros).toBe(3_000_000);
  });

  it('[keys:race] 1,000 parallel metered calls against a maximum per call: none above it runs, every one below does', async () => {
    const { accountId, key } = await limitedKey('50', { max_call_micros: 2_000 });
    fake.scenario('test/flat', { cost: 0.000001 });
    // Worst cases 1,500 … 2,499 micro-USD: the 499 above 2,000 are refused, the 501 up to it run.
    const replies = await Promise.all(
      Array.from({ length: 1_000 }, (_, i) =>
        t.post(
          CHAT,
          { model: 'test/flat', messages: [{ role: 'user', content: 'hi' }], max_tokens: 1_500 + i },
          { key },
        ),
      ),
    );
    const byStatus = (s: number) => replies.filter((r) => r.status === s).length;
    expect(byStatus(200)).toBe(501);
    expect(byStatus(403)).toBe(499);
    const calls = await t.gw.ledger.transactions(accountId, 2_000);
    expect(calls).toHaveLength(501);
    expect(Math.max(...calls.map((c) => c.hold_micros))).toBe(2_000);
    expect(Math.max(...calls.map((c) => c.charged_micros))).toBeLessThanOrEqual(2_000);
  });
});
