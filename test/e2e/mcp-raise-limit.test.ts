import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey, verifyApiKey } from '../../auth/api-keys.js';
import { BACKEND_NAMES, type BillingRig, startBillingRig } from '../integration/billing-stripe-rig.js';
import { connectClient } from './mcp-clients.js';
import { CookieJar, connectedClient, formOf, hop } from './oauth-helpers.js';

// A call refused by its caller's own limit asks the host to open the page that raises it (docs/decisions.md
// "Teams × limits…": `details.fix` raise_limit), exactly as a top-up does (test/e2e/mcp-top-up.test.ts): one case
// per era through the official SDK clients, the member who is told an owner must raise it, and an OAuth app's
// daily limit. The paid action is propstats_value-estimate at 35 cents; card payments are on (the Stripe fake).

const TOOL = 'propstats_value-estimate';
const ARGS = { address: '1 Main St, Austin, TX' };
const PRICE = 350_000;

interface Asked {
  mode: string;
  url: string;
  message: string;
}

describe.each(BACKEND_NAMES)('raise a limit without leaving the host ($name)', ({ name }) => {
  let rig: BillingRig;
  beforeAll(async () => {
    rig = await startBillingRig(name, { TOLLGATE_OAUTH_SIGNIN_ATTEMPTS_PER_MINUTE: '1000' });
  });
  afterAll(async () => rig?.close());
  const url = () => rig.t.url;

  /** An account with $5 and, besides its owner's key, a key with these limits (the owner's too: no member). */
  async function limited(limits: Parameters<typeof createApiKey>[3]) {
    const { accountId, key: ownerKey } = await rig.account({ card: false });
    await rig.t.gw.money.credit(accountId, 5_000_000, 'operator', 'test credit');
    const agent = await createApiKey(rig.t.gw.ledger, accountId, 'agent', limits);
    return { accountId, ownerKey, agent: agent.key, keyId: agent.row.id };
  }

  async function modern(key: string, person: (asked: Asked) => Promise<'accept' | 'decline'>) {
    const client = new Client(
      { name: 'raise-limit-test', version: '1' },
      { versionNegotiation: { mode: 'auto' }, capabilities: { elicitation: { url: {} } } },
    );
    const asked: Asked[] = [];
    client.setRequestHandler('elicitation/create', async (r) => {
      const p = r.params as unknown as Asked;
      asked.push(p);
      return { action: await person(p) };
    });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${url()}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${key}` } },
      }),
    );
    expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    return { client, asked };
  }

  /** The person opens the page signed out, signs in with `key` and comes straight back to it. */
  async function signInThrough(page: string, key: string): Promise<{ jar: CookieJar; html: string }> {
    const jar = new CookieJar();
    const path = new URL(page).pathname + new URL(page).search;
    const first = await hop(jar, page);
    expect(first.location).toBe(`${url()}/account/signin?next=${encodeURIComponent(path)}`);
    const f = formOf((await hop(jar, first.location as string)).text, '/account/signin');
    const back = await hop(jar, `${url()}${f.action}`, { form: { csrf: f.csrf, api_key: key, next: path } });
    expect(back.location).toBe(page);
    const shown = await hop(jar, page);
    expect(shown.status).toBe(200);
    return { jar, html: shown.text };
  }

  async function charged(accountId: string) {
    const calls = (await rig.t.gw.ledger.transactions(accountId, 50)).filter((c) => c.status === 'succeeded');
    return { calls: calls.length, micros: calls.reduce((n, c) => n + c.charged_micros, 0) };
  }

  it('[keys:raise-limit-fix] 2026-07-28: a key at its daily limit asks for its page; the owner raises it there and the call runs once', async () => {
    const { accountId, ownerKey, agent, keyId } = await limited({ daily_limit_micros: PRICE });
    // Over HTTP the refusal carries the fix and names the page.
    expect((await rig.t.post(`/api/run/propstats/value-estimate`, ARGS, { key: agent })).status).toBe(200);
    const page = `${url()}/account/limit?key=${keyId}`;
    const http = await rig.t.post(`/api/run/propstats/value-estimate`, ARGS, { key: agent });
    expect(http.status).toBe(429);
    expect(http.body.error.details.fix).toEqual({ action: 'raise_limit', url: page });
    expect(http.body.error.message).toContain(
      `An owner of the account can raise it at ${page}. Nothing was charged.`,
    );

    const { client, asked } = await modern(agent, async (p) => {
      const { jar, html } = await signInThrough(p.url, ownerKey);
      expect(html).toContain('Raise this key’s limit to continue');
      expect(html).toContain('$0.35 of $0.35 today');
      const f = formOf(html, '/account/keys/limits');
      const saved = await hop(jar, `${url()}${f.action}`, {
        form: { csrf: f.csrf, key_id: keyId, back: 'limit', daily_limit_usd: '1' },
      });
      expect(saved.location).toBe(`${page}&done=key_limits_changed`);
      expect((await hop(jar, saved.location as string)).text).toContain('The key’s limits were changed');
      return 'accept';
    });
    const r = await client.callTool({ name: TOOL, arguments: ARGS });
    await client.close();
    expect(r.isError).toBeFalsy();
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatchObject({ mode: 'url', url: page });
    expect(asked[0]?.message).toContain('Raise the limit on your dashboard');
    expect(await charged(accountId)).toEqual({ calls: 2, micros: 2 * PRICE });
    expect(
      (await rig.t.gw.ledger.listApiKeys(accountId)).find((k) => k.id === keyId)?.daily_limit_micros,
    ).toBe(1_000_000);
  });

  it.each(['v1', 'v2-legacy'] as const)(
    '[keys:raise-limit-fix] 2025 era (%s): -32042 with the page of a key whose maximum per call is too low; raised, the retry runs once',
    async (kind) => {
      const { accountId, agent, keyId } = await limited({ max_call_micros: 100_000 });
      const caps = { capabilities: { elicitation: { url: {} } } };
      const requestInit = { headers: { authorization: `Bearer ${agent}` } };
      const transportUrl = new URL(`${url()}/mcp`);
      let call: () => Promise<unknown>;
      let close: () => Promise<void>;
      if (kind === 'v1') {
        const c = new V1Client({ name: 'raise-v1', version: '1' }, caps);
        c.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept' as const }));
        await c.connect(new V1Transport(transportUrl, { requestInit }));
        call = () => c.callTool({ name: TOOL, arguments: ARGS });
        close = () => c.close();
      } else {
        const c = new Client(
          { name: 'raise-v2', version: '1' },
          { versionNegotiation: { mode: 'legacy' }, ...caps },
        );
        await c.connect(new StreamableHTTPClientTransport(transportUrl, { requestInit }));
        call = () => c.callTool({ name: TOOL, arguments: ARGS });
        close = () => c.close();
      }
      const err = (await call().catch((e: unknown) => e)) as {
        code: number;
        message: string;
        elicitations: Asked[];
      };
      const page = `${url()}/account/limit?key=${keyId}`;
      expect(err.code).toBe(-32042);
      expect(err.elicitations).toHaveLength(1);
      expect(err.elicitations[0]).toMatchObject({ mode: 'url', url: page });
      expect(err.message).toContain("This API key's maximum per call is $0.10");
      expect(err.message).toContain(`An owner of the account can raise it at ${page}. Nothing was charged.`);
      expect(await charged(accountId)).toEqual({ calls: 0, micros: 0 });
      // The owner raises it (as the page's form does); the host's retry runs.
      await rig.t.gw.ledger.setApiKeyLimits(keyId, { max_call_micros: 500_000 });
      const done = (await call()) as { isError?: boolean };
      await close();
      expect(done.isError).toBeFalsy();
      expect(await charged(accountId)).toEqual({ calls: 1, micros: PRICE });
    },
  );

  it("[keys:raise-limit-fix] [keys:teams-signin] a member's limited key: the page it opens says an owner must raise it, and who", async () => {
    const { key: ownerKey } = await rig.account({ card: false });
    const owner = new CookieJar();
    const f = formOf((await hop(owner, `${url()}/account/signin`)).text, '/account/signin');
    await hop(owner, `${url()}${f.action}`, { form: { csrf: f.csrf, api_key: ownerKey } });
    // The owner invites Mo, who joins with a key of its own; the owner limits it to 10 cents a call.
    const { csrf } = formOf((await hop(owner, `${url()}/account`)).text, '/account/keys');
    const made = await hop(owner, `${url()}/account/team/invite`, {
      form: { csrf, name: 'Mo', role: 'member' },
    });
    const link = (/id="invite-link">([^<]+)</.exec(made.text)?.[1] ?? '').replaceAll('&amp;', '&');
    const mo = new CookieJar();
    const jf = formOf((await hop(mo, link)).text, '/account/join');
    const joined = await hop(mo, `${url()}${jf.action}`, {
      form: { csrf: jf.csrf, token: new URL(link).searchParams.get('token') as string, name: 'Mo' },
    });
    const moKey = /id="api-key">(tg_sk_[^<]+)</.exec(joined.text)?.[1] as string;
    const check = await verifyApiKey(rig.t.gw.ledger, moKey);
    const moKeyId = check.ok ? check.principal.keyId : '';
    await hop(owner, `${url()}/account/keys/limits`, {
      form: { csrf, key_id: moKeyId, max_call_usd: '0.10' },
    });

    const { client, asked } = await modern(moKey, async (p) => {
      const { html } = await signInThrough(p.url, moKey);
      expect(html).toContain('An owner must raise this limit');
      expect(html).toMatch(/ask an owner of the account \(test\) to raise it/);
      expect(html).not.toContain('action="/account/keys/limits"');
      return 'decline';
    });
    const r = await client.callTool({ name: TOOL, arguments: ARGS });
    await client.close();
    expect(asked).toHaveLength(1);
    expect(r.isError).toBe(true);
    expect((r.content as Array<{ text: string }>)[0]?.text).toContain(
      'The page was not opened (declined), so the call did not run. Nothing was charged.',
    );
  });

  it("[keys:raise-limit-fix] an OAuth app's daily limit points to the app's page, where an owner raises it", async () => {
    const { accountId, key: ownerKey } = await rig.account({ card: false });
    await rig.t.gw.money.credit(accountId, 5_000_000, 'operator', 'test credit');
    const app = await connectedClient(url(), ownerKey, { dailyLimit: 'custom', customUsd: '0.35' });
    const host = await connectClient('v2-modern', url(), app.accessToken);
    try {
      expect((await host.callTool(TOOL, ARGS)).isError).toBeFalsy();
      const refused = await host.callTool(TOOL, ARGS);
      const page = `${url()}/account/limit?app=${encodeURIComponent(app.clientId)}`;
      expect(refused.isError).toBe(true);
      expect(refused.structuredContent).toMatchObject({
        error: { code: 'daily_cap_exceeded', details: { fix: { action: 'raise_limit', url: page } } },
        charged_cents: 0,
      });
      const { jar, html } = await signInThrough(page, ownerKey);
      expect(html).toContain('Raise this app’s daily limit to continue');
      const f = formOf(html, '/account/apps/limit');
      const saved = await hop(jar, `${url()}${f.action}`, {
        form: { csrf: f.csrf, client_id: app.clientId, back: 'limit', daily_limit: '5' },
      });
      expect(saved.location).toBe(`${page}&done=limit_changed`);
      expect((await host.callTool(TOOL, ARGS)).isError).toBeFalsy();
    } finally {
      await host.close();
    }
    expect(await charged(accountId)).toEqual({ calls: 2, micros: 2 * PRICE });
  });
});
