import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actions } from '../../catalog/index.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { html, startSite, type TestSite } from '../helpers/site.js';
import { CLIENT_KINDS, connectClient } from './mcp-clients.js';

// What an MCP host sees, through the official clients: only the tools this gateway can run (or all, marked,
// when the operator asks), and a compact set (/mcp?tools=compact) of three tools that reach every action.

let hidden: TestGateway;
let marked: TestGateway;
let site: TestSite;
beforeAll(async () => {
  site = await startSite({
    '/page': (_req, res) => {
      res.end(html('<p>compact hello</p>'));
    },
  });
  // No vendor keys: property data, video assembly, media staging and web search cannot run here.
  hidden = await startGateway();
  marked = await startGateway({ env: { TOLLGATE_LIST_UNAVAILABLE: 'mark' } });
});
afterAll(async () => {
  await Promise.all([hidden.close(), marked.close(), site.close()]);
});

const UNAVAILABLE_HERE = [
  'propstats_value-estimate',
  'videoasm_render',
  'videoasm_result',
  'mediastage_upload',
];

describe('[catalog:availability] tools/list follows what this gateway can run', () => {
  it('hides tools whose vendor is not configured; the operator may list them marked instead', async () => {
    const { key } = await hidden.account('1');
    const c = await connectClient('v2-modern', hidden.url, key);
    const names = (await c.listTools()).map((t) => t.name);
    await c.close();
    for (const n of UNAVAILABLE_HERE) expect(names).not.toContain(n);
    for (const n of ['scraperC_scrape', 'files_upload', 'platform_consult', 'scraperA_crawl_status']) {
      expect(names).toContain(n);
    }

    const m = await connectClient('v1', marked.url, (await marked.account('1')).key);
    const all = await m.listTools();
    await m.close();
    expect(all.map((t) => t.name)).toEqual(actions.map((a) => a.toolName));
    const render = all.find((t) => t.name === 'videoasm_render');
    expect(render._meta['tollgate/available']).toBe(false);
    expect(render.description).toMatch(/^Unavailable on this gateway: .*TOLLGATE_CUEFRAME_API_KEY/);
    expect(all.find((t) => t.name === 'scraperC_scrape')._meta['tollgate/available']).toBeUndefined();
  });

  it('platform/discover and platform/consult leave out what cannot run', async () => {
    const d = await hidden.post('/api/run/platform/discover', { query: 'rent estimate property value' });
    const ids = d.body.data.results.map((r: { id: string }) => r.id);
    expect(ids.some((id: string) => id.startsWith('propstats/'))).toBe(false);
    const { key } = await hidden.account('1');
    const goal = 'What would 5500 Grand Lake Dr, San Antonio, TX 78244 rent for per month?';
    const c = await hidden.post('/api/run/platform/consult', { intent: goal }, { key });
    // [consult:no-plan-uncharged] Nothing this gateway can run fits: refused, uncharged.
    expect(c.status).toBe(404);
    expect(c.body.charged_cents).toBe(0);
    expect(c.body.error.message).toContain('platform/discover');
  });
});

describe.each(CLIENT_KINDS)('[mcp:compact-tools] /mcp?tools=compact with the %s client', (kind) => {
  it('lists three tools, describes and runs any action by id, charging exactly its price', async () => {
    const { accountId, key } = await hidden.account('1');
    const c = await connectClient(kind, hidden.url, key, '/mcp?tools=compact');
    try {
      const tools = await c.listTools();
      expect(tools.map((t) => t.name)).toEqual(['platform_discover', 'describe_action', 'run_action']);

      const found = await c.callTool('platform_discover', { query: 'page html', limit: 3 });
      expect(found.structuredContent.results[0]).toMatchObject({ id: expect.stringMatching(/\//) });

      const described = await c.callTool('describe_action', { action: 'scraperC/scrape' });
      expect(described.isError).toBeFalsy();
      expect(described.structuredContent).toMatchObject({
        id: 'scraperC/scrape',
        price_cents: 1,
        available: true,
        input_schema: { type: 'object', required: ['url'] },
      });

      const ran = await c.callTool('run_action', {
        action: 'scraperC/scrape',
        params: { url: `${site.url}/page`, browser: false },
      });
      expect(ran.isError).toBeFalsy();
      expect(ran.structuredContent).toMatchObject({ charged_cents: 1, transaction_id: expect.any(String) });
      expect(ran.structuredContent.raw).toContain('compact hello');
      expect((await hidden.gw.ledger.balance(accountId)).balance_micros).toBe(990_000);

      // Bad input is the action's own validation, uncharged; an unknown action names the field.
      const bad = await c.callTool('run_action', { action: 'scraperC/scrape', params: { url: 'nope' } });
      expect(bad.isError).toBe(true);
      expect(bad.content[0].text).toContain('url');
      const unknown = await c.callTool('run_action', { action: 'nope/nothing', params: {} });
      expect(unknown.isError).toBe(true);
      expect(unknown.content[0].text).toContain('platform_discover');
      expect((await hidden.gw.ledger.balance(accountId)).balance_micros).toBe(990_000);
    } finally {
      await c.close();
    }
  });
});

describe('[mcp:portable-schemas] a strict host fills every field of the portable schema', () => {
  it('nulls for fields not given and JSON text run the call as its zod body, charged once', async () => {
    const { accountId, key } = await hidden.account('1');
    const c = await connectClient('v2-modern', hidden.url, key);
    const compact = await connectClient('v1', hidden.url, key, '/mcp?tools=compact');
    try {
      const tool = (await c.listTools()).find((t) => t.name === 'scraperC_scrape');
      const fields = Object.keys(tool.inputSchema.properties);
      expect(tool.inputSchema.required).toEqual(fields);
      // What OpenAI's strict mode makes a model send: every field, null where it has no value.
      const args = Object.fromEntries(fields.map((f) => [f, null]));
      const r = await c.callTool('scraperC_scrape', { ...args, url: `${site.url}/page`, browser: false });
      expect(r.isError).toBeFalsy();
      expect(r.structuredContent).toMatchObject({ charged_cents: 1 });
      // The compact set's params as JSON text (an open object is outside strict hosts' subset).
      const ran = await compact.callTool('run_action', {
        action: 'scraperC/scrape',
        params: JSON.stringify({ url: `${site.url}/page`, browser: false }),
      });
      expect(ran.structuredContent).toMatchObject({
        charged_cents: 1,
        raw: expect.stringContaining('compact hello'),
      });
      const notJson = await compact.callTool('run_action', { action: 'scraperC/scrape', params: '{url:' });
      expect(notJson.isError).toBe(true);
      expect(notJson.content[0].text).toContain('params');
      expect((await hidden.gw.ledger.balance(accountId)).balance_micros).toBe(980_000);
    } finally {
      await Promise.all([c.close(), compact.close()]);
    }
  });
});

describe('[mcp:compact-tools] the compact set costs a host far fewer tokens', () => {
  it('cuts the tools/list tokens by at least 80 % against the full list', async () => {
    const { key } = await marked.account('1');
    const full = await connectClient('v2-modern', marked.url, key);
    const compact = await connectClient('v2-modern', marked.url, key, '/mcp?tools=compact');
    const fullTokens = countTokens(JSON.stringify(await full.listTools()));
    const compactTokens = countTokens(JSON.stringify(await compact.listTools()));
    await Promise.all([full.close(), compact.close()]);
    expect(compactTokens).toBeLessThanOrEqual(fullTokens * 0.2);
  });
});
