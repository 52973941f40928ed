import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actions } from '../../catalog/index.js';
import { CARD_META_KEY, REGISTRY_META_KEY } from '../../src/mcp/server-card.js';
import { runCli } from '../helpers/cli.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

// One story everywhere (docs/decisions.md "One listing rule", "Refusals say nothing was charged"): the five
// listings of what this gateway sells (GET /api/run, tools/list, /openapi.json, the MCP server card, and the CLI's
// `catalog` and `server-json`) hide or mark the actions it cannot run by the same rule; every refusal of a paid
// path says in words that nothing was charged, over the HTTP shim and MCP; the loopback refusal names the
// variable that allows it.

const work = mkdtempSync(join(tmpdir(), 'tollgate-story-'));
let hide: TestGateway;
let mark: TestGateway;
let key: string;
let markKey: string;

beforeAll(async () => {
  hide = await startGateway({ env: { TOLLGATE_FETCH_ALLOW: '' } });
  mark = await startGateway({ env: { TOLLGATE_LIST_UNAVAILABLE: 'mark' } });
  ({ key } = await hide.account('1'));
  ({ key: markKey } = await mark.account('1'));
});
afterAll(async () => {
  await hide?.close();
  await mark?.close();
  rmSync(work, { recursive: true, force: true });
});

const toolOf = new Map<string, string>(actions.map((a) => [a.toolName, a.id]));
const byTool = (names: string[]) => names.map((n) => toolOf.get(n) ?? n).sort();

async function mcp(t: TestGateway, body: unknown, headers: Record<string, string> = {}) {
  const res = await request(`${t.url}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-06-18',
      ...headers,
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.body.text();
  const data = text.startsWith('{') ? text : (/^data: (.*)$/m.exec(text)?.[1] ?? 'null');
  return { status: res.statusCode, body: JSON.parse(data) };
}

/** What each of the five listings says: the listed action ids, and those marked unavailable. */
async function listings(t: TestGateway, env: Record<string, string>) {
  const run = (await t.get('/api/run')).body as { actions: Array<{ id: string; available: boolean }> };
  const openapi = (await t.get('/openapi.json')).body as {
    paths: Record<string, { post: { 'x-available'?: boolean } }>;
  };
  const card = (await t.get('/mcp/server-card')).body as { _meta: Record<string, Meta> };
  const auth = { authorization: `Bearer ${t === mark ? markKey : key}` };
  const tools = await mcp(t, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, auth);
  const cliEnv = { TOLLGATE_DATA_DIR: join(work, 'data'), ...env };
  const catalog = JSON.parse(runCli(['catalog', '--json'], { cwd: work, env: cliEnv }).stdout) as {
    actions: Array<{ id: string; available: boolean }>;
  };
  const entry = JSON.parse(runCli(['server-json'], { cwd: work, env: cliEnv }).stdout) as {
    _meta: Record<string, Meta>;
  };
  const cardMeta = card._meta[CARD_META_KEY] as Meta;
  const entryMeta = entry._meta[REGISTRY_META_KEY] as Meta;
  const paths = Object.entries(openapi.paths).map(([p, item]) => [p.replace('/api/run/', ''), item] as const);
  return {
    listed: {
      'GET /api/run': run.actions.map((a) => a.id).sort(),
      '/openapi.json': paths.map(([id]) => id).sort(),
      'server card': byTool(Object.keys(cardMeta.price_cents)),
      'tools/list': byTool((tools.body.result.tools as Array<{ name: string }>).map((x) => x.name)),
      'tollgate catalog': catalog.actions.map((a) => a.id).sort(),
      'tollgate server-json': byTool(Object.keys(entryMeta.price_cents)),
    },
    unavailable: {
      'GET /api/run': run.actions
        .filter((a) => !a.available)
        .map((a) => a.id)
        .sort(),
      '/openapi.json': paths
        .filter(([, i]) => i.post['x-available'] === false)
        .map(([id]) => id)
        .sort(),
      'server card': byTool(Object.keys(cardMeta.unavailable ?? {})),
      'tollgate catalog': catalog.actions
        .filter((a) => !a.available)
        .map((a) => a.id)
        .sort(),
      'tollgate server-json': byTool(Object.keys(entryMeta.unavailable ?? {})),
    },
  };
}

interface Meta {
  price_cents: Record<string, number>;
  unavailable?: Record<string, string>;
}

describe('one listing rule', () => {
  it('[catalog:one-listing-rule] hide (the default): every listing leaves out the same actions', async () => {
    const { listed, unavailable } = await listings(hide, { TOLLGATE_FETCH_ALLOW: '' });
    const expected = listed['GET /api/run'];
    expect(expected.length).toBeGreaterThan(5);
    expect(expected.length, 'some actions need a vendor this gateway has not').toBeLessThan(actions.length);
    for (const [where, ids] of Object.entries(listed)) expect(ids, where).toEqual(expected);
    for (const [where, ids] of Object.entries(unavailable)) expect(ids, where).toEqual([]);
  }, 120_000);

  it('[catalog:one-listing-rule] mark: every listing lists every action and marks the same ones unavailable', async () => {
    const { listed, unavailable } = await listings(mark, { TOLLGATE_LIST_UNAVAILABLE: 'mark' });
    const all = actions.map((a) => a.id).sort();
    for (const [where, ids] of Object.entries(listed)) expect(ids, where).toEqual(all);
    const expected = unavailable['GET /api/run'];
    expect(expected.length).toBeGreaterThan(0);
    for (const [where, ids] of Object.entries(unavailable)) expect(ids, where).toEqual(expected);
    // The reason travels with the mark, in the same words.
    const run = (await mark.get('/api/run')).body.actions.find((a: { id: string }) => a.id === expected[0]);
    const op = (await mark.get('/openapi.json')).body.paths[`/api/run/${expected[0]}`].post;
    expect(op['x-availability-note']).toBe(run.availability_note);
  }, 120_000);
});

describe('refusals say nothing was charged', () => {
  const NOTHING = /nothing was charged/i;
  const post = (path: string, body: string, auth = `Bearer ${key}`) =>
    request(`${hide.url}${path}`, {
      method: 'POST',
      headers: { authorization: auth, 'content-type': 'application/json' },
      body,
    }).then(async (r) => ({
      status: r.statusCode,
      body: (await r.body.json()) as { error: { message: string } },
    }));

  it('[http:refusals-say-not-charged] over the HTTP shim: 401, invalid JSON, unknown action (with did-you-mean), invalid input, no credentials', async () => {
    const bad = await post(
      '/api/run/scraperC/markdown',
      '{"url":"https://example.com/"}',
      'Bearer tg_sk_nope',
    );
    expect(bad.status).toBe(401);
    expect(bad.body.error.message).toMatch(NOTHING);
    const json = await post('/api/run/scraperC/markdown', '{"url":');
    expect(json.status).toBe(400);
    expect(json.body.error.message).toMatch(NOTHING);
    const unknown = await post('/api/run/scraperC/markdwn', '{}');
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.message).toBe(
      'Unknown action "scraperC/markdwn" — did you mean scraperC/markdown? GET /api/run lists the catalog. Nothing was charged.',
    );
    const invalid = await post('/api/run/scraperC/markdown', '{"browser":"no"}');
    expect(invalid.status).toBe(400);
    expect(invalid.body.error.message).toMatch(/^Invalid input: url is required.*\. Nothing was charged\.$/);
    const anonymous = await request(`${hide.url}/api/run/scraperC/markdown`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"url":"https://example.com/"}',
    });
    expect(anonymous.statusCode).toBe(402);
    expect(((await anonymous.body.json()) as { error: { message: string } }).error.message).toMatch(NOTHING);
  });

  it('[mcp:refusals-say-not-charged] over MCP: 401, invalid JSON, unknown tool (with did-you-mean), invalid input', async () => {
    const noKey = await mcp(hide, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect(noKey.status).toBe(401);
    expect(noKey.body.error_description).toMatch(NOTHING);
    const auth = { authorization: `Bearer ${key}` };
    const json = await mcp(hide, '{"jsonrpc":', auth);
    expect(json.status).toBe(400);
    expect(json.body.error.message).toMatch(NOTHING);
    const unknown = await mcp(
      hide,
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'scraperC_markdwn', arguments: {} } },
      auth,
    );
    expect(unknown.body.error.code).toBe(-32602);
    expect(unknown.body.error.message).toBe(
      'Unknown tool "scraperC_markdwn" — did you mean scraperC_markdown? tools/list lists the tools. Nothing was charged.',
    );
    const invalid = await mcp(
      hide,
      { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'scraperC_markdown', arguments: {} } },
      auth,
    );
    expect(invalid.body.result.isError).toBe(true);
    expect(invalid.body.result.content[0].text).toMatch(/^Error \(invalid_input\): .*Nothing was charged\./);
  });

  it('[ssrf:names-fetch-allow] a loopback URL is refused naming TOLLGATE_FETCH_ALLOW, uncharged', async () => {
    const r = await post(
      '/api/run/scraperC/markdown',
      JSON.stringify({ url: 'http://127.0.0.1:9/', browser: false }),
    );
    expect(r.status).toBe(400);
    expect(r.body.error.message).toContain('TOLLGATE_FETCH_ALLOW');
    expect(r.body.error.message).toMatch(NOTHING);
    expect((await hide.post('/api/run/platform/balance', {}, { key })).body.data.balance_usd).toBe('$1.00');
  });
});
