import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

// The /mcp endpoint as raw HTTP: the auth challenge and its metadata, DNS-rebinding guards, body limits, and
// the stateless transport's answers, which no SDK client shows directly.

let t: TestGateway;
let key: string;
beforeAll(async () => {
  t = await startGateway({
    env: {
      TOLLGATE_ALLOWED_HOSTS: 'mcp.example.com,gw.internal:8443',
      TOLLGATE_ALLOWED_ORIGINS: 'http://inspector.example:6274',
      TOLLGATE_MAX_BODY_BYTES: '4096',
    },
  });
  ({ key } = await t.account('1'));
});
afterAll(() => t.close());

const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};

async function mcp(opts: {
  body?: unknown;
  raw?: string;
  headers?: Record<string, string>;
  method?: string;
}) {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    ...opts.headers,
  };
  const res = await request(`${t.url}/mcp`, {
    method: (opts.method ?? 'POST') as 'POST',
    headers,
    body: opts.raw ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body)),
  });
  const text = await res.body.text();
  return { status: res.statusCode, headers: res.headers, text };
}

const auth = () => ({ authorization: `Bearer ${key}` });

describe('MCP auth', () => {
  it('[mcp:no-key-401] no key → 401 whose WWW-Authenticate points at the protected-resource metadata', async () => {
    const r = await mcp({ body: INIT });
    expect(r.status).toBe(401);
    const challenge = String(r.headers['www-authenticate']);
    expect(challenge).toMatch(/^Bearer /);
    expect(challenge).toContain('error="invalid_token"');
    expect(challenge).toContain(`resource_metadata="${t.url}/.well-known/oauth-protected-resource/mcp"`);
    expect(JSON.parse(r.text)).toMatchObject({ error: 'invalid_token' });
  });

  it('[mcp:no-key-401] [auth:api-key] a malformed, unknown or revoked key is a 401 too', async () => {
    const acct = await t.account('1');
    const rows = await t.gw.ledger.listApiKeys(acct.accountId);
    await t.gw.ledger.revokeApiKey(rows[0]?.id as string);
    for (const token of ['nope', `tg_sk_${'A'.repeat(43)}`, acct.key]) {
      const r = await mcp({ body: INIT, headers: { authorization: `Bearer ${token}` } });
      expect(r.status).toBe(401);
      expect(String(r.headers['www-authenticate'])).toContain('resource_metadata=');
    }
    const wrongScheme = await mcp({ body: INIT, headers: { authorization: `Basic ${key}` } });
    expect(wrongScheme.status).toBe(401);
  });

  it('[mcp:protected-resource-metadata] serves RFC 9728 metadata for /mcp without authentication', async () => {
    const res = await request(`${t.url}/.well-known/oauth-protected-resource/mcp`);
    expect(res.statusCode).toBe(200);
    const doc = (await res.body.json()) as Record<string, unknown>;
    expect(doc).toMatchObject({
      resource: `${t.url}/mcp`,
      bearer_methods_supported: ['header'],
      resource_name: 'tollgate',
    });
    // The authorization server (the OAuth module) is listed, so OAuth-capable hosts can start there.
    expect(doc.authorization_servers).toEqual([expect.stringMatching(/^http/)]);
  });

  it('[mcp:both-eras] a valid key initializes a 2025-era session statelessly', async () => {
    const r = await mcp({ body: INIT, headers: auth() });
    expect(r.status).toBe(200);
    expect(r.headers['mcp-session-id']).toBeUndefined();
    const msg = parse(r.text);
    expect(msg.result.serverInfo.name).toBe('tollgate');
    expect(msg.result.capabilities).toMatchObject({ tools: {}, resources: {} });
    expect(msg.result.instructions).toContain('platform_consult');
  });
});

describe('MCP 2026-07-28 on the wire', () => {
  it('[mcp:tools-from-catalog] [mcp:both-eras] a 2026-era tools/list is one page, cacheable by anyone for 5 minutes', async () => {
    const envelope = {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
      'io.modelcontextprotocol/clientCapabilities': {},
    };
    const r = await mcp({
      body: { jsonrpc: '2.0', id: 3, method: 'tools/list', params: { _meta: envelope } },
      headers: { ...auth(), 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list' },
    });
    expect(r.status).toBe(200);
    const msg = parse(r.text);
    expect(msg.result).toMatchObject({ ttlMs: 300_000, cacheScope: 'public' });
    expect(msg.result.nextCursor).toBeUndefined();
    // Payment terms (test/contract/x402-declared.test.ts): without x402 configured, the API key only.
    expect(msg.result.tools.find((x: { name: string }) => x.name === 'scraperC_scrape')._meta).toEqual({
      'tollgate/price': { cents: 1, currency: 'USD' },
      'tollgate/payment': expect.objectContaining({
        price_mode: 'fixed',
        protocols: [expect.objectContaining({ protocol: 'api_key' })],
      }),
    });
  });
});

describe('MCP DNS-rebinding and origin guards', () => {
  it('[mcp:dns-rebinding] a foreign Host is refused with 403 before authentication', async () => {
    const r = await mcp({ body: INIT, headers: { ...auth(), host: 'evil.example' } });
    expect(r.status).toBe(403);
    expect(r.text).toContain('Invalid Host');
  });

  it('[mcp:dns-rebinding] configured hosts (TOLLGATE_ALLOWED_HOSTS, port-agnostic) are accepted', async () => {
    for (const host of ['mcp.example.com', 'mcp.example.com:443', 'gw.internal:9999', 'localhost:1']) {
      const r = await mcp({ body: INIT, headers: { ...auth(), host } });
      expect(r.status, host).toBe(200);
    }
  });

  it('[mcp:dns-rebinding] a foreign or opaque Origin is refused; configured and loopback origins pass with CORS', async () => {
    for (const origin of ['https://evil.example', 'null']) {
      const r = await mcp({ body: INIT, headers: { ...auth(), origin } });
      expect(r.status, origin).toBe(403);
    }
    const ok = await mcp({ body: INIT, headers: { ...auth(), origin: 'http://inspector.example:6274' } });
    expect(ok.status).toBe(200);
    expect(ok.headers['access-control-allow-origin']).toBe('http://inspector.example:6274');
    const local = await mcp({ body: INIT, headers: { ...auth(), origin: 'http://localhost:6274' } });
    expect(local.status).toBe(200);
    const preflight = await mcp({ method: 'OPTIONS', headers: { origin: 'http://localhost:6274' } });
    expect(preflight.status).toBe(204);
    expect(String(preflight.headers['access-control-allow-headers'])).toContain('authorization');
  });
});

describe('MCP transport edges', () => {
  it('[mcp:transport-edges] GET and DELETE on the stateless endpoint answer 405', async () => {
    for (const method of ['GET', 'DELETE']) {
      const r = await mcp({ method, headers: auth() });
      expect(r.status, method).toBe(405);
    }
  });

  it('[mcp:transport-edges] [http:hostile-input] oversized, malformed and deeply nested bodies get JSON-RPC errors', async () => {
    const big = await mcp({ raw: JSON.stringify({ ...INIT, pad: 'x'.repeat(8000) }), headers: auth() });
    expect(big.status).toBe(413);
    expect(JSON.parse(big.text).error.message).toContain('larger than 4096 bytes');
    const bad = await mcp({ raw: '{"jsonrpc": "2.0", ', headers: auth() });
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.text).error.code).toBe(-32700);
    let deep: unknown = 1;
    for (let i = 0; i < 60; i++) deep = [deep];
    const nested = await mcp({ body: { ...INIT, params: { ...INIT.params, deep } }, headers: auth() });
    expect(nested.status).toBe(400);
    expect(JSON.parse(nested.text).error.message).toContain('nested deeper than');
    const text = await mcp({ raw: 'hello', headers: { ...auth(), 'content-type': 'text/plain' } });
    expect(text.status).toBe(415);
  });

  it('[mcp:transport-edges] an unknown tool is a JSON-RPC invalid-params error in our words', async () => {
    const r = await mcp({
      body: { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'nope_nothing', arguments: {} } },
      headers: { ...auth(), 'mcp-protocol-version': '2025-06-18' },
    });
    const msg = parse(r.text);
    expect(msg.error.code).toBe(-32602);
    expect(msg.error.message).toContain('Unknown tool "nope_nothing"');
  });

  it('[mcp:invalid-args-iserror] arguments nested beyond the HTTP door’s limit are an isError result', async () => {
    let deep: unknown = 1;
    for (let i = 0; i < 32; i++) deep = { a: deep };
    const r = await mcp({
      body: {
        jsonrpc: '2.0',
        id: 8,
        method: 'tools/call',
        params: { name: 'scraperC_scrape', arguments: { url: 'https://example.com/', deep } },
      },
      headers: { ...auth(), 'mcp-protocol-version': '2025-06-18' },
    });
    const msg = parse(r.text);
    expect(msg.result.isError).toBe(true);
    expect(msg.result.content[0].text).toContain('nested deeper than 32');
  });
});

/** A JSON body, or the first message of an SSE stream. */
function parse(text: string) {
  const data = text.startsWith('{') ? text : /^data: (.*)$/m.exec(text)?.[1];
  return JSON.parse(data ?? 'null');
}
