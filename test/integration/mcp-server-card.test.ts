import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actions } from '../../catalog/index.js';
import { VERSION } from '../../src/main.js';
import { CARD_META_KEY } from '../../src/mcp/server-card.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { serverCardSchema } from '../helpers/mcp-schemas.js';

// The MCP server card (SEP-2127, experimental extension schema v1) as a client fetches it before connecting:
// its media type, CORS, caching and ETag revalidation; and what it claims held to the live server: the remote it
// names answers, with the version it states, every protocol revision it lists, and the tools its prices name.

let t: TestGateway;
let key: string;
beforeAll(async () => {
  t = await startGateway();
  key = (await t.account('1')).key;
});
afterAll(() => t.close());

async function getCard(path = '/mcp/server-card', headers: Record<string, string> = {}) {
  const res = await fetch(`${t.url}${path}`, {
    headers: { accept: 'application/mcp-server-card+json', ...headers },
  });
  return { res, text: await res.text() };
}

type Card = ReturnType<typeof serverCardSchema.parse>;

describe('[mcp:server-card] the server card', () => {
  it('is served at <MCP URL>/server-card with its media type, CORS, an hour of caching and an ETag', async () => {
    const { res, text } = await getCard();
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/mcp-server-card\+json/);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-expose-headers')).toBe('ETag');
    expect(res.headers.get('cache-control')).toBe('public, max-age=3600');
    expect(res.headers.get('etag')).toMatch(/^"[0-9a-f]{32}"$/);
    const card = serverCardSchema.parse(JSON.parse(text));
    expect(card).toMatchObject({
      name: 'localhost/tollgate',
      version: VERSION,
      title: 'tollgate',
      remotes: [{ type: 'streamable-http', url: `${t.url}/mcp` }],
    });
    // No credentials needed, and no x402 endpoint when x402 is not configured.
    expect(card.remotes).toHaveLength(1);
    // The well-known location of the SEP's first drafts serves the same card.
    const known = await getCard('/.well-known/mcp/server-card.json');
    expect(known.res.status).toBe(200);
    expect(known.text).toBe(text);
  });

  it('revalidates: If-None-Match with its ETag is 304 without a body; a browser preflight is answered', async () => {
    const { res } = await getCard();
    const etag = res.headers.get('etag') as string;
    for (const inm of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const again = await getCard('/mcp/server-card', { 'if-none-match': inm });
      expect(again.res.status, inm).toBe(304);
      expect(again.text).toBe('');
    }
    expect((await getCard('/mcp/server-card', { 'if-none-match': '"stale"' })).res.status).toBe(200);
    const preflight = await fetch(`${t.url}/mcp/server-card`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://catalog.example',
        'access-control-request-method': 'GET',
        'access-control-request-headers': 'if-none-match',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
    expect(preflight.headers.get('access-control-allow-headers')).toContain('If-None-Match');
  });

  it('holds to the live server: version, every listed protocol revision, and the tools its prices name', async () => {
    const card = serverCardSchema.parse(JSON.parse((await getCard()).text)) as Card;
    const remote = card.remotes?.[0];
    const versions = remote?.supportedProtocolVersions ?? [];
    expect(versions[0]).toBe('2026-07-28');
    const auth = { requestInit: { headers: { Authorization: `Bearer ${key}` } } };

    // A 2026-era client negotiates the card's first revision; the server's version is the card's.
    const modern = new Client(
      { name: 'card reader', version: '1' },
      { versionNegotiation: { mode: 'auto' } },
    );
    await modern.connect(new StreamableHTTPClientTransport(new URL(remote?.url as string), auth));
    expect(modern.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    expect(modern.getServerVersion()?.version).toBe(card.version);
    const { tools } = await modern.listTools();
    await modern.close();
    const prices =
      (card._meta?.[CARD_META_KEY] as { price_cents: Record<string, number> } | undefined)?.price_cents ?? {};
    // The card prices exactly what this gateway lists now (actions it cannot run are left out of both).
    expect(Object.keys(prices).sort()).toEqual(tools.map((tool) => tool.name).sort());
    for (const a of actions) if (a.toolName in prices) expect(prices[a.toolName]).toBe(a.priceCents);

    // Every 2025-era revision listed is the one the server answers with when asked for it.
    for (const protocolVersion of versions.slice(1)) {
      const res = await fetch(remote?.url as string, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
        }),
      });
      const body = await res.text();
      expect(body, protocolVersion).toContain(`"protocolVersion":"${protocolVersion}"`);
    }
    // And the client most hosts ship (v1) connects to the same URL.
    const v1 = new V1Client({ name: 'v1 card reader', version: '1' });
    await v1.connect(new V1Transport(new URL(remote?.url as string), auth));
    expect(v1.getServerVersion()?.version).toBe(card.version);
    await v1.close();
  });

  it('names the x402 endpoint when x402 is configured, and the operator-chosen name', async () => {
    const paid = await startGateway({
      env: {
        TOLLGATE_X402_PAY_TO: '0x209693Bc6afc0C5328bA36FaF03C514EF312287C',
        TOLLGATE_X402_FACILITATOR_URL: 'http://127.0.0.1:9',
        TOLLGATE_MCP_SERVER_NAME: 'com.example.gateway/tollgate',
      },
    });
    try {
      const res = await fetch(`${paid.url}/mcp/server-card`);
      const card = serverCardSchema.parse(await res.json());
      expect(card.name).toBe('com.example.gateway/tollgate');
      expect(card.remotes?.map((r) => r.url)).toEqual([`${paid.url}/mcp`, `${paid.url}/mcp/x402`]);
      expect(card.remotes?.[1]?.headers).toBeUndefined();
      expect(card._meta?.[CARD_META_KEY]).toMatchObject({
        catalog_url: `${paid.url}/api/run`,
        payment: ['api_key', 'oauth', 'x402'],
      });
      // The accountless endpoint it names answers an anonymous client.
      const wallet = new Client({ name: 'wallet', version: '1' });
      await wallet.connect(new StreamableHTTPClientTransport(new URL(card.remotes?.[1]?.url as string)));
      const listed = (await wallet.listTools()).tools.map((t) => t.name).sort();
      const meta = card._meta?.[CARD_META_KEY] as { price_cents: Record<string, number> } | undefined;
      const priced = Object.keys(meta?.price_cents ?? {}).sort();
      expect(listed).toEqual(priced);
      await wallet.close();
    } finally {
      await paid.close();
    }
  });
});
