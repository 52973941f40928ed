import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { html, startSite, type TestSite } from '../helpers/site.js';

// [mcp:fast-path] A plain tools/call is answered without the SDK's per-request machinery (src/mcp/fast-call.ts).
// Its answers must be the SDK's: every case is sent twice, once as a fast-path request and once with an allowed
// browser Origin (which the fast path leaves to the SDK), and the two answers are compared after the parts that
// differ by nature (transaction ids) are normalised. Requests the fast path must not take still answer as the
// SDK does (401, -32602, progress notifications).

const MODERN = '2026-07-28';
const LEGACY = '2025-11-25';
const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientInfo': { name: 'fast-path-test', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

let t: TestGateway;
let site: TestSite;
let key: string;

beforeAll(async () => {
  site = await startSite({
    '/page': (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' }).end(html('<p>fast</p>'));
    },
  });
  t = await startGateway();
  ({ key } = await t.account('1'));
});
afterAll(async () => {
  await t.close();
  await site.close();
});

function rpc(
  era: 'modern' | 'legacy',
  params: Record<string, unknown>,
  o: { slow?: boolean; auth?: string; id?: number } = {},
) {
  const headers: Record<string, string> = {
    authorization: o.auth ?? `Bearer ${key}`,
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': era === 'modern' ? MODERN : LEGACY,
  };
  if (era === 'modern') {
    headers['mcp-method'] = 'tools/call';
    headers['mcp-name'] = params.name as string;
  }
  // An allowed browser origin sends the request down the SDK path (it needs CORS handling).
  if (o.slow) headers.origin = 'http://127.0.0.1';
  const meta = { ...(params._meta as object | undefined), ...(era === 'modern' ? ENVELOPE : {}) };
  const body = { jsonrpc: '2.0', id: o.id ?? 1, method: 'tools/call', params: { ...params, _meta: meta } };
  return t.post('/mcp', body, { headers });
}

/** The JSON-RPC message of an answer (plain JSON or one SSE message), transaction ids normalised. */
function message(r: { headers: Record<string, unknown>; text: string }): unknown {
  const sse = String(r.headers['content-type']).startsWith('text/event-stream');
  const json = sse ? /^event: message\ndata: (.*)\n\n$/s.exec(r.text)?.[1] : r.text;
  expect(json, r.text).toBeDefined();
  // Ids and receipts (signed per call: src/run/receipts.ts) differ between two calls; their presence does not.
  return JSON.parse(
    (json as string)
      .replace(/txn_[0-9a-z]+/g, 'txn_X')
      .replace(/"tollgate\/receipt":"[\w-]+\.[\w-]+\.[\w-]+"/g, '"tollgate/receipt":"JWS"'),
  );
}

describe('[mcp:fast-path] plain tools/call without the SDK machinery', () => {
  const cases: Array<[string, 'modern' | 'legacy', Record<string, unknown>]> = [
    ['modern, a paid success', 'modern', { name: 'scraperC_scrape', arguments: { browser: false } }],
    ['modern, invalid input', 'modern', { name: 'scraperC_scrape', arguments: { url: 'nope' } }],
    ['modern, a free tool', 'modern', { name: 'platform_discover', arguments: { query: 'scrape a page' } }],
    ['2025 era, a paid success', 'legacy', { name: 'scraperC_scrape', arguments: { browser: false } }],
    ['2025 era, invalid input', 'legacy', { name: 'scraperC_scrape', arguments: { url: 'nope' } }],
  ];

  it.each(cases)('%s: the same answer as the SDK', async (_name, era, params) => {
    const args = params.arguments as Record<string, unknown>;
    const p =
      args.browser === false ? { ...params, arguments: { ...args, url: `${site.url}/page` } } : params;
    const before = t.gw.mcp.hot.served;
    const fast = await rpc(era, p);
    expect(t.gw.mcp.hot.served).toBe(before + 1);
    const slow = await rpc(era, p, { slow: true });
    expect(t.gw.mcp.hot.served).toBe(before + 1);
    expect(fast.status).toBe(slow.status);
    expect(String(fast.headers['content-type'])).toBe(String(slow.headers['content-type']));
    expect(message(fast)).toEqual(message(slow));
  });

  it('an idempotent replay answers the same on both paths, charged once', async () => {
    const params = {
      name: 'scraperC_scrape',
      arguments: { url: `${site.url}/page`, browser: false },
      _meta: { 'tollgate/idempotency-key': 'fast-path-replay' },
    };
    const first = message(await rpc('modern', params));
    const again = message(await rpc('modern', params));
    const slow = message(await rpc('modern', params, { slow: true }));
    expect(again).toEqual(first);
    expect(slow).toEqual(first);
    const balance = await t.gw.ledger.balance(
      (await t.gw.ledger.listAccounts('customer')).at(-1)?.id as string,
    );
    expect(balance.held_micros).toBe(0);
  });

  it('a bad key still gets the SDK path’s 401 with the resource metadata, though the body was read', async () => {
    const before = t.gw.mcp.hot.served;
    const r = await rpc(
      'modern',
      { name: 'platform_discover', arguments: { query: 'x' } },
      { auth: 'Bearer tg_sk_nope' },
    );
    expect(r.status).toBe(401);
    expect(String(r.headers['www-authenticate'])).toContain('resource_metadata=');
    expect(t.gw.mcp.hot.served).toBe(before);
  });

  it('an unknown tool is the SDK’s -32602; a mismatched Mcp-Name header is the SDK’s refusal', async () => {
    const unknown = await rpc('modern', { name: 'nope_nope', arguments: {} });
    expect(JSON.stringify(message(unknown))).toContain('-32602');
    const mismatched = await t.post(
      '/mcp',
      {
        jsonrpc: '2.0',
        id: 3,
        method: 'tools/call',
        params: { name: 'platform_discover', arguments: { query: 'x' }, _meta: ENVELOPE },
      },
      {
        headers: {
          authorization: `Bearer ${key}`,
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': MODERN,
          'mcp-method': 'tools/call',
          'mcp-name': 'platform_balance',
        },
      },
    );
    expect(mismatched.status).toBeGreaterThanOrEqual(400);
  });

  it('official clients of both eras are served by it, and progress requests still stream through the SDK', async () => {
    for (const mode of ['auto', 'legacy'] as const) {
      const client = new Client(
        { name: 'fast', version: '1' },
        mode === 'auto' ? { versionNegotiation: { mode: 'auto' } } : undefined,
      );
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`), {
          requestInit: { headers: { authorization: `Bearer ${key}` } },
        }),
      );
      const before = t.gw.mcp.hot.served;
      const r = await client.callTool({
        name: 'scraperC_scrape',
        arguments: { url: `${site.url}/page`, browser: false },
      });
      expect(r.isError).toBeFalsy();
      expect((r.structuredContent as { charged_cents: number }).charged_cents).toBe(1);
      expect(t.gw.mcp.hot.served).toBe(before + 1);
      const progress: number[] = [];
      const slow = await client.callTool(
        { name: 'platform_discover', arguments: { query: 'scrape' } },
        { onprogress: (p) => progress.push(p.progress) },
      );
      expect(slow.isError).toBeFalsy();
      expect(t.gw.mcp.hot.served).toBe(before + 1);
      await client.close();
    }
  });
});
