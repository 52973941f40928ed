import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { PaymentRequired } from '@x402/core/types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors.js';
import { startChain, type TestChain } from '../helpers/anvil.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { encodePayment, newPayer, officialPayment, x402Env } from '../helpers/x402.js';

// x402's MCP transport on a real chain: stock MCP clients (v2 and v1 SDKs) connect to the accountless
// endpoint with no credentials, get the challenge as an isError result, pay with _meta["x402/payment"] and get
// the receipt in _meta["x402/payment-response"]. Balances are read from the chain.

const PRICE = 10_000n;
let chain: TestChain;
let t: TestGateway;
const merchant = newPayer().address;
let failScrape = false;
let scrapes = 0;

beforeAll(async () => {
  chain = await startChain();
  t = await startGateway({
    env: x402Env(chain, merchant),
    handlers: {
      'scraperC/scrape': async () => {
        scrapes++;
        if (failScrape) throw new GatewayError('upstream_error', 'the page failed');
        return { raw: '<html>paid</html>' };
      },
    },
  });
});
afterAll(async () => {
  await t?.close();
  await chain?.close();
});

async function v2Client(): Promise<Client> {
  const c = new Client({ name: 'x402-wallet', version: '1' });
  await c.connect(new StreamableHTTPClientTransport(new URL(`${t.url}/mcp/x402`)));
  return c;
}

async function fundedPayer() {
  const payer = newPayer();
  await chain.mint(payer.address, 1_000_000n);
  return payer;
}

const scrapeArgs = { url: 'https://example.com/', browser: false };

describe('x402 over MCP', () => {
  it('[x402:mcp-pays-through-meta] a stock v2 client: challenge as isError, paid retry with the receipt in _meta', async () => {
    const c = await v2Client();
    try {
      const tools = (await c.listTools()).tools;
      const consult = tools.find((tool) => tool.name === 'platform_consult');
      expect(consult?._meta?.['x402/payment-requirements']).toEqual([
        expect.objectContaining({
          scheme: 'exact',
          network: 'eip155:8453',
          amount: '10000',
          payTo: merchant,
        }),
      ]);

      const unpaid = await c.callTool({ name: 'platform_consult', arguments: { intent: 'crawl a website' } });
      expect(unpaid.isError).toBe(true);
      const challenge = unpaid.structuredContent as unknown as PaymentRequired;
      expect(challenge).toMatchObject({
        x402Version: 2,
        resource: { url: 'mcp://tool/platform_consult' },
        accepts: [{ amount: '10000', payTo: merchant }],
      });
      // content[0].text carries the same challenge, for clients that read text only.
      expect(JSON.parse((unpaid.content as Array<{ text: string }>)[0]?.text ?? '')).toEqual(challenge);

      const payer = await fundedPayer();
      const before = await chain.balanceOf(merchant);
      const payment = await officialPayment(payer, challenge);
      const paid = await c.callTool({
        name: 'platform_consult',
        arguments: { intent: 'crawl a website' },
        _meta: { 'x402/payment': payment },
      });
      expect(paid.isError).toBeFalsy();
      expect(paid.structuredContent).toMatchObject({
        charged_cents: 1,
        transaction_id: expect.stringMatching(/^txn_/),
      });
      expect(paid._meta?.['x402/payment-response']).toMatchObject({ success: true, network: 'eip155:8453' });
      expect(await chain.balanceOf(payer.address)).toBe(1_000_000n - PRICE);
      expect(await chain.balanceOf(merchant)).toBe(before + PRICE);

      // The same signed payment presented again runs nothing new and moves nothing.
      const again = await c.callTool({
        name: 'platform_consult',
        arguments: { intent: 'crawl a website' },
        _meta: { 'x402/payment': payment },
      });
      expect(again.structuredContent).toMatchObject({
        transaction_id: (paid.structuredContent as { transaction_id: string }).transaction_id,
      });
      expect(await chain.balanceOf(payer.address)).toBe(1_000_000n - PRICE);
    } finally {
      await c.close();
    }
  });

  it('[x402:mcp-pays-through-meta] a v1 client paying with a base64 string; a failing tool moves nothing', async () => {
    const c = new V1Client({ name: 'x402-wallet-v1', version: '1' });
    await c.connect(new V1Transport(new URL(`${t.url}/mcp/x402`)));
    try {
      const unpaid = await c.callTool({ name: 'scraperC_scrape', arguments: scrapeArgs });
      expect(unpaid.isError).toBe(true);
      const challenge = unpaid.structuredContent as unknown as PaymentRequired;

      const payer = await fundedPayer();
      failScrape = true;
      const failed = await c.callTool({
        name: 'scraperC_scrape',
        arguments: scrapeArgs,
        _meta: { 'x402/payment': encodePayment(await officialPayment(payer, challenge)) },
      });
      expect(failed.isError).toBe(true);
      expect(JSON.stringify(failed)).not.toContain('paid</html>');
      expect(await chain.balanceOf(payer.address)).toBe(1_000_000n);

      failScrape = false;
      const before = scrapes;
      const paid = await c.callTool({
        name: 'scraperC_scrape',
        arguments: scrapeArgs,
        _meta: { 'x402/payment': encodePayment(await officialPayment(payer, challenge)) },
      });
      expect(paid.isError).toBeFalsy();
      expect(paid.structuredContent).toMatchObject({ raw: '<html>paid</html>', charged_cents: 1 });
      expect(paid._meta?.['x402/payment-response']).toMatchObject({ success: true });
      expect(scrapes).toBe(before + 1);
      expect(await chain.balanceOf(payer.address)).toBe(1_000_000n - PRICE);
    } finally {
      await c.close();
    }
  });

  it('[x402:mcp-pays-through-meta] a refused payment is a challenge with the reason; nothing runs', async () => {
    const c = await v2Client();
    try {
      const before = scrapes;
      const r = await c.callTool({
        name: 'scraperC_scrape',
        arguments: scrapeArgs,
        _meta: { 'x402/payment': 'not-a-payment' },
      });
      expect(r.isError).toBe(true);
      expect(r.structuredContent).toMatchObject({ x402Version: 2, error: expect.any(String) });
      expect(scrapes).toBe(before);
      // Free tools need no payment here.
      const free = await c.callTool({ name: 'platform_discover', arguments: { query: 'crawl' } });
      expect(free.isError).toBeFalsy();
    } finally {
      await c.close();
    }
  });

  it('/mcp itself still asks for credentials (the 401 that starts OAuth)', async () => {
    const r = await t.post(
      '/mcp',
      { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      { headers: { accept: 'application/json, text/event-stream' } },
    );
    expect(r.status).toBe(401);
    expect(String(r.headers['www-authenticate'])).toContain('resource_metadata=');
  });
});
