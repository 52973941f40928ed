import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actions } from '../../catalog/index.js';
import { inputJsonSchema } from '../../catalog/json-schema.js';
import { GatewayError } from '../../src/errors.js';
import { withToolNames } from '../../src/mcp/tools.js';
import type { HandlerContext } from '../../tools/context.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { html, startSite, type TestSite } from '../helpers/site.js';
import { CLIENT_KINDS, connectClient, type TestClient } from './mcp-clients.js';

// The MCP door end to end: the official clients (v2 in both eras, v1) over a real socket against a real
// gateway. scraperC/scrape (1 cent) is the paid tool; its handler is replaced where a test needs to control
// the "upstream", and runs for real (built-in engine against a local site) where it does not.

type Behaviour = (input: { url: string }, ctx: HandlerContext) => Promise<{ raw: string }>;
let behaviour: Behaviour | undefined;

let t: TestGateway;
let site: TestSite;
beforeAll(async () => {
  site = await startSite({
    '/page': (_req, res) => {
      res.end(html('<p>hello from the site</p>'));
    },
  });
  t = await startGateway({
    // Every tool listed, the unavailable ones marked (the default hides them: test/e2e/mcp-agents.test.ts).
    env: { TOLLGATE_LIST_UNAVAILABLE: 'mark' },
    handlers: {
      'scraperC/scrape': {
        run: async (input, ctx) => {
          if (behaviour) return behaviour(input, ctx);
          const page = await ctx.services.web.fetchPage(input.url, { signal: ctx.signal });
          return { raw: page.body };
        },
      },
    },
  });
});
afterAll(async () => {
  await t.close();
  await site.close();
});

async function ledgerState(accountId: string) {
  return {
    balance: await t.gw.ledger.balance(accountId),
    txs: await t.gw.ledger.transactions(accountId, 10),
  };
}

describe.each(CLIENT_KINDS)('MCP with the %s client', (kind) => {
  let client: TestClient;
  let account: { accountId: string; key: string };
  beforeAll(async () => {
    account = await t.account('1');
    client = await connectClient(kind, t.url, account.key);
  });
  afterAll(() => client.close());

  it('[mcp:both-eras] negotiates its era on the one /mcp endpoint and gets the instructions', () => {
    if (kind === 'v2-modern') expect(client.protocolVersion).toBe('2026-07-28');
    if (kind === 'v2-legacy') expect(client.protocolVersion).toMatch(/^2025-/);
    expect(client.instructions).toContain('platform_discover');
    expect(client.instructions).toContain('charged only');
    expect(client.instructions).toMatch(/poll/i);
  });

  it('[mcp:tools-from-catalog] [mcp:no-output-schema] lists every catalog action in catalog order with schema, annotations and price', async () => {
    const tools = await client.listTools();
    expect(tools.map((x) => x.name)).toEqual(actions.map((a) => a.toolName));
    for (const name of tools.map((x) => x.name)) expect(name).toMatch(/^[A-Za-z_][A-Za-z0-9_-]{0,63}$/);
    for (const a of actions) {
      const tool = tools.find((x) => x.name === a.toolName);
      expect(tool.title).toBe(a.title);
      expect(tool.description).toContain(withToolNames(a.description));
      expect(Object.keys(tool.inputSchema.properties)).toEqual(
        Object.keys(inputJsonSchema(a).properties as object),
      );
      // The portable rendering (catalog/portable-schema.ts): every field listed, optional ones nullable.
      expect(tool.inputSchema.required).toEqual(Object.keys(inputJsonSchema(a).properties as object));
      expect(tool.inputSchema.additionalProperties).toBe(false);
      expect(tool.inputSchema.properties.max_cost_cents).toBeDefined();
      expect(tool.annotations).toMatchObject(a.annotations);
      for (const hint of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint']) {
        expect(typeof tool.annotations[hint], `${tool.name}.${hint}`).toBe('boolean');
      }
      expect(tool._meta['tollgate/price']).toEqual({ cents: a.priceCents, currency: 'USD' });
      expect(tool.outputSchema).toBeUndefined();
      // Agents read the field descriptions to fill arguments: every top-level field has one.
      for (const [field, schema] of Object.entries(
        tool.inputSchema.properties as Record<string, { description?: string }>,
      )) {
        expect(schema.description, `${tool.name}.${field}`).toMatch(/\S/);
      }
    }
    const scrape = tools.find((x) => x.name === 'scraperC_scrape');
    expect(scrape.description).toContain('$0.01 per successful call; nothing is charged on failure.');
  });

  it('[mcp:paid-call-charged] [billing:charge-only-on-success] a paid tool call is charged and recorded', async () => {
    behaviour = undefined;
    const before = await ledgerState(account.accountId);
    const r = await client.callTool('scraperC_scrape', { url: `${site.url}/page`, browser: false });
    expect(r.isError).toBeFalsy();
    expect(r.structuredContent).toEqual({
      raw: expect.stringContaining('hello from the site'),
      charged_cents: 1,
      transaction_id: expect.stringMatching(/^txn_/),
    });
    expect(JSON.parse(r.content[0].text)).toEqual(r.structuredContent);
    const after = await ledgerState(account.accountId);
    expect(after.balance.balance_micros).toBe(before.balance.balance_micros - 10_000);
    expect(after.balance.held_micros).toBe(0);
    expect(after.txs[0]).toMatchObject({
      id: r.structuredContent.transaction_id,
      action: 'scraperC/scrape',
      status: 'succeeded',
      charged_micros: 10_000,
      payment_method: 'api_key',
    });
  });

  it('[mcp:invalid-args-iserror] invalid arguments answer isError with field paths, uncharged', async () => {
    const before = await ledgerState(account.accountId);
    const r = await client.callTool('scraperC_scrape', { url: 'not a url', timeout: 999, colour: 'red' });
    expect(r.isError).toBe(true);
    const text: string = r.content[0].text;
    expect(text).toMatch(/^Error \(invalid_input\): Invalid input: /);
    expect(text).toContain('url: ');
    expect(text).toContain('timeout: ');
    expect(text).not.toMatch(/Input validation error|ZodError|at .*\.ts:\d+/);
    expect(r.structuredContent.error.details.issues.map((i: { path: string }) => i.path)).toEqual(
      expect.arrayContaining(['url', 'timeout']),
    );
    expect(await ledgerState(account.accountId)).toEqual(before);
  });

  it('[mcp:iserror-ours] upstream failures are classified with our message, never vendor text', async () => {
    behaviour = async () => {
      throw new GatewayError('upstream_error', 'The upstream failed; nothing was charged.', {
        cause: new Error('vendor says: internal db password=hunter2'),
      });
    };
    const r1 = await client.callTool('scraperC_scrape', { url: 'https://example.com/', browser: false });
    behaviour = async () => {
      throw new Error('raw vendor stack trace secret-token-xyz');
    };
    const r2 = await client.callTool('scraperC_scrape', { url: 'https://example.com/', browser: false });
    behaviour = undefined;
    expect(r1.isError).toBe(true);
    expect(r1.content[0].text).toBe(
      'Error (upstream_error): The upstream failed; nothing was charged. You may retry.',
    );
    expect(r2.isError).toBe(true);
    expect(r2.content[0].text).toContain('Error (internal): The gateway hit an internal error');
    expect(JSON.stringify(r2)).not.toContain('secret-token-xyz');
    expect(JSON.stringify(r1)).not.toContain('hunter2');
  });

  it('[mcp:not-configured] [http:not-configured] not_configured tells the operator what to set', async () => {
    const r = await client.callTool('platform_supersearch', { query: 'node releases' });
    expect(r.isError).toBe(true);
    expect(r.content[0].text).toMatch(/^Error \(not_configured\): .*TOLLGATE_FIRECRAWL_API_KEY/);
    expect(r.structuredContent).toMatchObject({ error: { code: 'not_configured' }, charged_cents: 0 });
  });

  it('[mcp:resources] serves the price list and the caller’s own account', async () => {
    const list = await client.listResources();
    expect(list.map((r) => r.uri)).toEqual(['tollgate://catalog', 'tollgate://account']);
    const cat = JSON.parse((await client.readResource('tollgate://catalog')).contents[0].text);
    expect(cat.tools.map((x: { tool: string }) => x.tool)).toEqual(actions.map((a) => a.toolName));
    expect(cat.tools.find((x: { id: string }) => x.id === 'scraperC/scrape')).toMatchObject({
      price_cents: 1,
    });
    const acct = JSON.parse((await client.readResource('tollgate://account')).contents[0].text);
    const { balance } = await ledgerState(account.accountId);
    expect(acct).toMatchObject({ account_id: account.accountId, balance_micros: balance.balance_micros });
    expect(acct.transactions.length).toBeGreaterThan(0);
    expect(acct.transactions[0].action).toBe('scraperC/scrape');
  });
});

describe('MCP money rules', () => {
  it('[mcp:insufficient-credit] an account without credit gets isError with how to top up, nothing charged', async () => {
    const poor = await t.account('0');
    for (const kind of CLIENT_KINDS) {
      const c = await connectClient(kind, t.url, poor.key);
      const r = await c.callTool('scraperC_scrape', { url: 'https://example.com/', browser: false });
      await c.close();
      expect(r.isError).toBe(true);
      expect(r.content[0].text).toMatch(/^Error \(insufficient_credit\): Insufficient credit/);
      expect(r.content[0].text).toContain(`tollgate credit ${poor.accountId}`);
    }
    expect(await ledgerState(poor.accountId)).toEqual({
      balance: { balance_micros: 0, held_micros: 0, available_micros: 0 },
      txs: [],
    });
  });

  it('[mcp:idempotency-meta] [billing:idempotent-replay] the same _meta idempotency key replays without a new charge', async () => {
    behaviour = async () => ({ raw: `<p>${Math.random()}</p>` });
    const acct = await t.account('1');
    const c = await connectClient('v2-modern', t.url, acct.key);
    const meta = { 'tollgate/idempotency-key': 'mcp-idem-1' };
    const args = { url: 'https://example.com/', browser: false };
    const first = await c.callTool('scraperC_scrape', args, { meta });
    const again = await c.callTool('scraperC_scrape', args, { meta });
    const other = await c.callTool('scraperC_scrape', { ...args, timeout: 10 }, { meta });
    await c.close();
    behaviour = undefined;
    expect(again.structuredContent).toEqual(first.structuredContent);
    expect(other.isError).toBe(true);
    expect(other.content[0].text).toMatch(/^Error \(idempotency_mismatch\)/);
    const { balance, txs } = await ledgerState(acct.accountId);
    expect(balance.balance_micros).toBe(990_000);
    expect(txs.filter((x) => x.status === 'succeeded')).toHaveLength(1);
  });

  it('[mcp:max-cost] [billing:max-cost-guard] max_cost_cents below the price refuses the call uncharged', async () => {
    const acct = await t.account('1');
    const c = await connectClient('v1', t.url, acct.key);
    const r = await c.callTool('scraperC_scrape_residential', {
      url: 'https://example.com/',
      max_cost_cents: 3,
    });
    await c.close();
    expect(r.isError).toBe(true);
    expect(r.content[0].text).toMatch(/^Error \(max_cost_exceeded\): This action costs 4 cents/);
    expect((await ledgerState(acct.accountId)).balance.balance_micros).toBe(1_000_000);
  });
});
