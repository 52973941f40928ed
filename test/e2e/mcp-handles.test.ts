import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { html, startSite, type TestSite } from '../helpers/site.js';
import { connectClient, type TestClient } from './mcp-clients.js';

// Long-running work through MCP as start + poll tools with the real scraperB crawl (built-in engine against a
// local site): the handle comes back at once, polling it reports progress to completion, and the handle is
// bound to the account that started it: another account polling it gets "not found" and pays nothing.

let t: TestGateway;
let site: TestSite;
beforeAll(async () => {
  site = await startSite({
    '/': (_req, res) => {
      res.setHeader('content-type', 'text/html');
      res.end(html('<h1>home</h1><a href="/a">a</a> <a href="/b">b</a>'));
    },
    '/a': (_req, res) => {
      res.setHeader('content-type', 'text/html');
      res.end(html('<p>page a</p>'));
    },
    '/b': (_req, res) => {
      res.setHeader('content-type', 'text/html');
      res.end(html('<p>page b</p>'));
    },
  });
  t = await startGateway();
});
afterAll(async () => {
  await t.close();
  await site.close();
});

async function pollToEnd(c: TestClient, id: string) {
  for (let i = 0; i < 200; i++) {
    const r = await c.callTool('scraperB_crawl_status', { id });
    expect(r.isError, JSON.stringify(r.content)).toBeFalsy();
    if (r.structuredContent.status !== 'scraping') return r.structuredContent;
    await sleep(25);
  }
  throw new Error('the crawl never finished');
}

describe('start + poll tools', () => {
  it('[mcp:handles-bound-to-account] a crawl handle polls to completion for its owner and is not found for another account', async () => {
    const alice = await t.account('1');
    const bob = await t.account('1');
    const a = await connectClient('v2-modern', t.url, alice.key);
    const b = await connectClient('v1', t.url, bob.key);

    const tools = await a.listTools();
    const start = tools.find((x) => x.name === 'scraperB_crawl');
    expect(start.description).toContain('Poll it with scraperB_crawl_status');

    const started = await a.callTool('scraperB_crawl', { url: `${site.url}/`, maxDepth: 1 });
    expect(started.isError, JSON.stringify(started.content)).toBeFalsy();
    expect(started.structuredContent).toMatchObject({
      charged_cents: 10,
      transaction_id: expect.any(String),
    });
    const id: string = started.structuredContent.id;

    const stolen = await b.callTool('scraperB_crawl_status', { id });
    expect(stolen.isError).toBe(true);
    expect(stolen.content[0].text).toMatch(
      /^Error \(resource_not_found\): No crawl with this id belongs to your account/,
    );

    const done = await pollToEnd(a, id);
    expect(done).toMatchObject({ status: 'completed', completed: 3, total: 3 });

    const stillStolen = await b.callTool('scraperB_crawl_status', { id });
    expect(stillStolen.isError).toBe(true);
    await a.close();
    await b.close();

    // Bob paid nothing for his failed polls; Alice paid the crawl once plus her polls.
    expect(await t.gw.ledger.balance(bob.accountId)).toMatchObject({
      balance_micros: 1_000_000,
      held_micros: 0,
    });
    const aliceTx = await t.gw.ledger.transactions(alice.accountId, 100);
    expect(aliceTx.filter((x) => x.action === 'scraperB/crawl' && x.status === 'succeeded')).toHaveLength(1);
  });
});
