import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND_NAMES, type BillingRig, startBillingRig } from '../integration/billing-stripe-rig.js';
import { CookieJar, formOf, hop } from './oauth-helpers.js';

// Top up without leaving the host (src/mcp/top-up.ts): a paid call the account cannot cover asks a host that
// declared URL-mode elicitation to open the dashboard page that fixes it, through the official SDK clients of
// both eras, against the Stripe fake. The "person" follows the URL with a cookie jar: sign-in and straight back,
// the page, Checkout, the page Checkout returns to. The paid action is propstats_value-estimate at 35 cents.

const TOOL = 'propstats_value-estimate';
const ARGS = { address: '1 Main St, Austin, TX' };
const PRICE = 350_000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

interface Asked {
  mode: string;
  url: string;
  message: string;
}
type Answer = 'accept' | 'decline' | 'cancel';

describe.each(BACKEND_NAMES)('top up without leaving the host ($name)', ({ name }) => {
  let rig: BillingRig;
  beforeAll(async () => {
    rig = await startBillingRig(name, { TOLLGATE_MCP_TOPUP_WAIT_SECONDS: '2' });
  });
  afterAll(async () => rig?.close());

  const url = () => rig.t.url;

  /** A 2026-07-28 client (v2 SDK); with `person`, it declares URL elicitation and lets the person answer. */
  async function modern(key: string, person?: (asked: Asked) => Promise<Answer>) {
    const client = new Client(
      { name: 'top-up-test', version: '1' },
      {
        versionNegotiation: { mode: 'auto' },
        ...(person ? { capabilities: { elicitation: { url: {} } } } : {}),
      },
    );
    const asked: Asked[] = [];
    if (person) {
      client.setRequestHandler('elicitation/create', async (r) => {
        const p = r.params as unknown as Asked;
        asked.push(p);
        return { action: await person(p) };
      });
    }
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${url()}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${key}` } },
      }),
    );
    expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    return { client, asked };
  }

  /** A 2025-era client: the v1 SDK, or the v2 SDK pinned to the 2025 handshake. */
  async function legacy(kind: 'v1' | 'v2-legacy', key: string, urlCapable: boolean) {
    const caps = urlCapable ? { capabilities: { elicitation: { url: {} } } } : {};
    const transportUrl = new URL(`${url()}/mcp`);
    const requestInit = { headers: { authorization: `Bearer ${key}` } };
    if (kind === 'v1') {
      const c = new V1Client({ name: 'top-up-v1', version: '1' }, caps);
      if (urlCapable) c.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept' as const }));
      await c.connect(new V1Transport(transportUrl, { requestInit }));
      return {
        call: (meta?: Record<string, unknown>) =>
          c.callTool({ name: TOOL, arguments: ARGS, ...(meta ? { _meta: meta } : {}) }),
        close: () => c.close(),
      };
    }
    const c = new Client(
      { name: 'top-up-v2', version: '1' },
      { versionNegotiation: { mode: 'legacy' }, ...caps },
    );
    await c.connect(new StreamableHTTPClientTransport(transportUrl, { requestInit }));
    return {
      call: (meta?: Record<string, unknown>) =>
        c.callTool({ name: TOOL, arguments: ARGS, ...(meta ? { _meta: meta } : {}) }),
      close: () => c.close(),
    };
  }

  /** What the account was charged: its succeeded calls, and the micros they took. */
  async function charged(accountId: string) {
    const calls = (await rig.t.gw.ledger.transactions(accountId, 50)).filter((c) => c.status === 'succeeded');
    return { calls: calls.length, micros: calls.reduce((n, c) => n + c.charged_micros, 0) };
  }

  /** The person, in a browser with no session: opens the page, signs in (and is sent straight back to it). */
  async function signInThrough(page: string, key: string): Promise<{ jar: CookieJar; html: string }> {
    const jar = new CookieJar();
    const path = new URL(page).pathname;
    const first = await hop(jar, page);
    expect(first.status).toBe(303);
    expect(first.location).toBe(`${url()}/account/signin?next=${encodeURIComponent(path)}`);
    const signin = await hop(jar, first.location as string);
    expect(signin.text).toContain(`<input type="hidden" name="next" value="${path}">`);
    const f = formOf(signin.text, '/account/signin');
    const back = await hop(jar, `${url()}${f.action}`, { form: { csrf: f.csrf, api_key: key, next: path } });
    expect(back.location).toBe(page);
    const shown = await hop(jar, page);
    expect(shown.status).toBe(200);
    return { jar, html: shown.text };
  }

  /** Submits a dashboard form of `html` and pays on the fake's Checkout page with a test card. */
  async function payThrough(jar: CookieJar, html: string, action: string, fields: Record<string, string>) {
    const f = formOf(html, action);
    const toCheckout = await hop(jar, `${url()}${f.action}`, { form: { csrf: f.csrf, ...fields } });
    expect(toCheckout.location).toContain(rig.fake.url);
    const paid = await hop(jar, toCheckout.location as string, { form: { card: '4242424242424242' } });
    expect(paid.status).toBe(303);
    const returned = await hop(jar, paid.location as string);
    expect(returned.text).toContain('If an agent was waiting for this, go back to it');
  }

  it('[mcp:top-up-url-elicitation] [account:fix-pages] [account:sign-in-returns] 2026-07-28: the host opens the top-up page, the person signs in and pays, the call runs once', async () => {
    const { accountId, key } = await rig.account({ card: false });
    const { client, asked } = await modern(key, async (p) => {
      // The page the host opens: signed out, one sign-in away; it names the account and its money.
      const { jar, html } = await signInThrough(p.url, key);
      expect(html).toContain(accountId);
      expect(html).toContain('id="available" data-micros="0"');
      expect(html).toContain('Top up to continue');
      expect(html).toContain('Saving one gives you a $2.00 credit line');
      await payThrough(jar, html, '/account/topup', { amount_usd: '5' });
      return 'accept';
    });
    const r = await client.callTool({ name: TOOL, arguments: ARGS });
    await client.close();
    expect(r.isError).toBeFalsy();
    expect((r.structuredContent as { charged_cents: number }).charged_cents).toBe(35);
    expect(asked).toHaveLength(1);
    const [ask] = asked as [Asked];
    expect(ask.mode).toBe('url');
    expect(ask.url).toBe(`${url()}/account/top-up`);
    expect(ask.message).toContain('needs $0.35; your tollgate account has $0.00 available');
    expect(ask.message).toContain('Nothing has been charged');
    // No credential, account or token in the URL.
    expect(ask.url).not.toMatch(/tg_sk_|acct_|token|key=/);
    expect(await charged(accountId)).toEqual({ calls: 1, micros: PRICE });
    expect((await rig.t.gw.ledger.balance(accountId)).balance_micros).toBe(5_000_000 - PRICE);
  });

  it('[mcp:top-up-url-elicitation] 2026-07-28: the retry waits for money that lands after the person went ahead, then runs once', async () => {
    const { accountId, key } = await rig.account({ card: false });
    const { client, asked } = await modern(key, async () => {
      // The operator's credit lands a moment after the host answered: the retried call waits for it.
      setTimeout(() => void rig.t.gw.money.credit(accountId, 1_000_000, 'operator', 'test top-up'), 400);
      return 'accept';
    });
    const r = await client.callTool({
      name: TOOL,
      arguments: ARGS,
      _meta: { 'tollgate/idempotency-key': 'w-1' },
    });
    await client.close();
    expect(r.isError).toBeFalsy();
    expect(asked).toHaveLength(1);
    expect(await charged(accountId)).toEqual({ calls: 1, micros: PRICE });
  });

  it('[mcp:top-up-url-elicitation] [mcp:refusals-say-not-charged] 2026-07-28: a declined page, or money that never comes, ends in the refusal with the URL, uncharged', async () => {
    const { accountId, key } = await rig.account({ card: false });
    const declined = await modern(key, async () => 'decline');
    const no = await declined.client.callTool({ name: TOOL, arguments: ARGS });
    await declined.client.close();
    expect(no.isError).toBe(true);
    const text = (no.content as Array<{ text: string }>)[0]?.text as string;
    expect(text).toMatch(/^Error \(insufficient_credit\): Insufficient credit/);
    expect(text).toContain(`Top up or add a card at ${url()}/account/top-up.`);
    expect(text).toContain(
      'The page was not opened (declined), so the call did not run. Nothing was charged.',
    );
    expect(declined.asked).toHaveLength(1);
    // Going ahead without paying: asked again after each bounded wait, three times in all, then refused.
    const idle = await modern(key, async () => 'accept');
    const late = await idle.client.callTool({ name: TOOL, arguments: ARGS });
    await idle.client.close();
    expect(late.isError).toBe(true);
    expect((late.content as Array<{ text: string }>)[0]?.text).toContain(`${url()}/account/top-up`);
    expect(idle.asked).toHaveLength(3);
    expect(await charged(accountId)).toEqual({ calls: 0, micros: 0 });
    expect((await rig.t.gw.ledger.balance(accountId)).held_micros).toBe(0);
  });

  it('[mcp:top-up-url-elicitation] a frozen credit line asks for the card page; a new card unfreezes it and the call runs on the line', async () => {
    const { accountId, key } = await rig.account();
    await rig.t.gw.money.freezeLine(accountId, 'the card ending 4242 was declined (card_declined)');
    const { client, asked } = await modern(key, async (p) => {
      expect(p.url).toBe(`${url()}/account/card`);
      expect(p.message).toContain('Update your card (or top up)');
      const { jar, html } = await signInThrough(p.url, key);
      expect(html).toContain('Update your card to continue');
      expect(html).toContain('Your credit line is frozen:');
      await payThrough(jar, html, '/account/card', {});
      return 'accept';
    });
    const r = await client.callTool({ name: TOOL, arguments: ARGS });
    await client.close();
    expect(r.isError).toBeFalsy();
    expect(asked).toHaveLength(1);
    expect((await rig.t.gw.ledger.creditLine(accountId)).frozen).toBeNull();
    expect(await charged(accountId)).toEqual({ calls: 1, micros: PRICE });
    expect((await rig.t.gw.ledger.balance(accountId)).balance_micros).toBe(-PRICE);
  });

  it.each(['v1', 'v2-legacy'] as const)(
    '[mcp:top-up-url-elicitation] [billing:idempotent-replay] 2025 era (%s): -32042 with the URL; after the top-up a retry runs once, a second retry is replayed',
    async (kind) => {
      const { accountId, key } = await rig.account({ card: false });
      const c = await legacy(kind, key, true);
      const meta = { 'tollgate/idempotency-key': `legacy-${kind}` };
      const err = (await c.call(meta).catch((e: unknown) => e)) as {
        code: number;
        message: string;
        elicitations: Asked[] & Array<{ elicitationId: string }>;
      };
      expect(err.code).toBe(-32042);
      expect(err.elicitations).toHaveLength(1);
      expect(err.elicitations[0]).toMatchObject({ mode: 'url', url: `${url()}/account/top-up` });
      expect(err.elicitations[0]?.elicitationId).toMatch(UUID);
      // Hosts that show only the message still get the URL, and that nothing was charged.
      expect(err.message).toContain(`Top up or add a card at ${url()}/account/top-up. Nothing was charged.`);
      expect(await charged(accountId)).toEqual({ calls: 0, micros: 0 });
      await rig.t.gw.money.credit(accountId, 1_000_000, 'operator', 'test top-up');
      const first = await c.call(meta);
      const again = await c.call(meta);
      await c.close();
      expect(first.isError).toBeFalsy();
      expect(again.structuredContent).toEqual(first.structuredContent);
      expect(await charged(accountId)).toEqual({ calls: 1, micros: PRICE });
    },
  );

  it('[account:sign-in-returns] sign-in returns only to a dashboard page: a forged next lands on the dashboard', async () => {
    const { key } = await rig.account({ card: false });
    for (const evil of ['https://evil.example/x', '//evil.example', '/\\evil.example', '/account/../../x']) {
      const jar = new CookieJar();
      const page = await hop(jar, `${url()}/account/signin?next=${encodeURIComponent(evil)}`);
      expect(page.text).not.toContain('name="next"');
      const f = formOf(page.text, '/account/signin');
      const r = await hop(jar, `${url()}${f.action}`, { form: { csrf: f.csrf, api_key: key, next: evil } });
      expect(r.location).toBe(`${url()}/account`);
      // Signed in already: the same.
      expect((await hop(jar, `${url()}/account/signin?next=${encodeURIComponent(evil)}`)).location).toBe(
        `${url()}/account`,
      );
    }
  });

  /** A raw tools/call (or initialize) over HTTP: with `slow`, an allowed browser Origin sends it the SDK way. */
  function rpc(
    era: 'modern' | 'legacy',
    key: string,
    body: { method: string; params: Record<string, unknown>; id?: number },
    slow = false,
  ) {
    const headers: Record<string, string> = {
      authorization: `Bearer ${key}`,
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': era === 'modern' ? '2026-07-28' : '2025-11-25',
    };
    if (era === 'modern') {
      headers['mcp-method'] = body.method;
      headers['mcp-name'] = body.params.name as string;
    }
    if (slow) headers.origin = 'http://127.0.0.1';
    return rig.t.post('/mcp', { jsonrpc: '2.0', id: body.id ?? 1, ...body }, { headers });
  }
  const ENVELOPE = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
    'io.modelcontextprotocol/clientCapabilities': { elicitation: { url: {} } },
  };
  /** The JSON-RPC message of an answer (JSON, or one SSE message). */
  function message(r: { headers: Record<string, unknown>; text: string }): Record<string, unknown> {
    const sse = String(r.headers['content-type']).startsWith('text/event-stream');
    return JSON.parse(sse ? (/^event: message\ndata: (.*)\n\n$/s.exec(r.text)?.[1] ?? '') : r.text);
  }
  const normalised = (m: Record<string, unknown>) =>
    JSON.parse(
      JSON.stringify(m)
        .replace(/"requestState":"[^"]+"/, '"requestState":"STATE"')
        .replace(/"elicitationId":"[^"]+"/, '"elicitationId":"ID"'),
    );

  it('[mcp:fast-path] [mcp:top-up-url-elicitation] the fast path asks exactly as the SDK path does; retries with answers go the SDK way', async () => {
    const { accountId, key } = await rig.account({ card: false });
    const hot = rig.t.gw.mcp.hot;
    const call = { method: 'tools/call', params: { name: TOOL, arguments: ARGS, _meta: ENVELOPE } };
    let before = hot.served;
    const fast = await rpc('modern', key, call);
    expect(hot.served).toBe(before + 1);
    const slow = await rpc('modern', key, call, true);
    expect(normalised(message(fast))).toEqual(normalised(message(slow)));
    const asked = message(fast).result as {
      resultType: string;
      requestState: string;
      inputRequests: unknown;
    };
    expect(asked.resultType).toBe('input_required');
    expect(asked.inputRequests).toMatchObject({
      tollgate_top_up: {
        method: 'elicitation/create',
        params: { mode: 'url', url: `${url()}/account/top-up` },
      },
    });

    // 2025 era: the handshake (the SDK's) declares URL elicitation; then the same -32042 on both paths.
    await rpc('legacy', key, {
      method: 'initialize',
      params: {
        protocolVersion: '2025-11-25',
        capabilities: { elicitation: { url: {} } },
        clientInfo: { name: 'raw', version: '1' },
      },
    });
    const legacyCall = { method: 'tools/call', params: { name: TOOL, arguments: ARGS } };
    before = hot.served;
    const fastLegacy = await rpc('legacy', key, legacyCall);
    expect(hot.served).toBe(before + 1);
    const slowLegacy = await rpc('legacy', key, legacyCall, true);
    expect(normalised(message(fastLegacy))).toEqual(normalised(message(slowLegacy)));
    expect((message(fastLegacy).error as { code: number }).code).toBe(-32042);

    // A forged or foreign state is no state: the call is simply asked again, without waiting.
    before = hot.served;
    const forged = await rpc('modern', key, {
      method: 'tools/call',
      params: {
        ...call.params,
        inputResponses: { tollgate_top_up: { action: 'accept' } },
        requestState: 'tg1.x.y',
      },
    });
    expect((message(forged).result as { resultType: string }).resultType).toBe('input_required');
    // The retry with the answer and the state it was given: the SDK path runs it once the money is there.
    await rig.t.gw.money.credit(accountId, 1_000_000, 'operator', 'test top-up');
    const retried = await rpc('modern', key, {
      method: 'tools/call',
      params: {
        ...call.params,
        inputResponses: { tollgate_top_up: { action: 'accept' } },
        requestState: asked.requestState,
      },
    });
    expect(hot.served).toBe(before);
    expect(
      (message(retried).result as { structuredContent: { charged_cents: number } }).structuredContent
        .charged_cents,
    ).toBe(35);
    // The state is bound to its caller: another account's retry with it is asked anew.
    const other = await rig.account({ card: false });
    const stolen = await rpc('modern', other.key, {
      method: 'tools/call',
      params: {
        ...call.params,
        inputResponses: { tollgate_top_up: { action: 'accept' } },
        requestState: asked.requestState,
      },
    });
    expect((message(stolen).result as { resultType: string }).resultType).toBe('input_required');
    expect(await charged(accountId)).toEqual({ calls: 1, micros: PRICE });
    expect(await charged(other.accountId)).toEqual({ calls: 0, micros: 0 });
  });

  it('[mcp:top-up-url-in-words] [mcp:insufficient-credit] clients that declared no URL elicitation get the refusal with the same URL in words, uncharged', async () => {
    const { accountId, key } = await rig.account({ card: false });
    const texts: string[] = [];
    const m = await modern(key);
    texts.push(
      ((await m.client.callTool({ name: TOOL, arguments: ARGS })).content as Array<{ text: string }>)[0]
        ?.text ?? '',
    );
    await m.client.close();
    for (const kind of ['v1', 'v2-legacy'] as const) {
      const c = await legacy(kind, key, false);
      const r = await c.call();
      await c.close();
      expect(r.isError).toBe(true);
      texts.push((r.content as Array<{ text: string }>)[0]?.text ?? '');
    }
    for (const text of texts) {
      expect(text).toBe(
        `Error (insufficient_credit): Insufficient credit: ${'propstats/value-estimate'} needs $0.35 and $0.00 is available. Top up or add a card at ${url()}/account/top-up. Nothing was charged.`,
      );
    }
    expect(await charged(accountId)).toEqual({ calls: 0, micros: 0 });
  });
});
