import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actions } from '../../catalog/index.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

// docs/spec.md §5: "Every paid operation declares x402 as its payment protocol and a fixed price mode". For every paid
// action of the catalog, present and future: the descriptor, the catalog listing, /openapi.json and the MCP
// tool list state x402 (exact, fixed price: amount, asset, network, pay-to) beside the API key, with the
// amounts the 402 challenge will ask for. Free actions declare no payment.

const PAY_TO = '0x1AFD115e14C3D8137C7341a159D1F9a0391DB502';
const USDC = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';
let t: TestGateway;
let bare: TestGateway;

beforeAll(async () => {
  // Nothing here pays, so the facilitator is never asked: an unreachable URL is fine.
  t = await startGateway({
    env: {
      TOLLGATE_X402_PAY_TO: PAY_TO,
      TOLLGATE_X402_FACILITATOR_URL: 'http://127.0.0.1:9/facilitator',
      // Every action listed, those this test gateway cannot run too (marked): each must declare its terms.
      TOLLGATE_LIST_UNAVAILABLE: 'mark',
    },
  });
  bare = await startGateway();
});
afterAll(async () => {
  await t?.close();
  await bare?.close();
});

const paid = actions.filter((a) => a.access === 'paid');

function x402Of(terms: { protocols: Array<Record<string, unknown>> }) {
  return terms.protocols.find((p) => p.protocol === 'x402');
}

function expectTerms(terms: unknown, priceCents: number) {
  expect(terms).toMatchObject({ price_mode: 'fixed', price_cents: priceCents, currency: 'USD' });
  const p = terms as { protocols: Array<Record<string, unknown>> };
  expect(x402Of(p)).toMatchObject({
    protocol: 'x402',
    x402_version: 2,
    scheme: 'exact',
    price_mode: 'fixed',
    network: 'eip155:8453',
    asset: USDC,
    amount: String(priceCents * 10_000),
    pay_to: PAY_TO,
  });
  expect(p.protocols.map((x) => x.protocol)).toContain('api_key');
}

describe('every paid operation declares x402 and a fixed price', () => {
  it('[x402:declared] descriptors and the catalog listing', async () => {
    expect(paid.length).toBeGreaterThan(10);
    const listing = (await t.get('/api/run')).body as { actions: Array<{ id: string; payment?: unknown }> };
    for (const a of actions) {
      const d = (await t.get(`/api/run/${a.id}`)).body;
      const entry = listing.actions.find((x) => x.id === a.id);
      if (a.access !== 'paid') {
        expect(d.payment, a.id).toBeUndefined();
        expect(entry?.payment, a.id).toBeUndefined();
        continue;
      }
      expectTerms(d.payment, a.priceCents);
      expectTerms(entry?.payment, a.priceCents);
    }
  });

  it('[x402:declared] /openapi.json: x-payment-info and the x402 security scheme beside the API key', async () => {
    const doc = (await t.get('/openapi.json')).body;
    expect(doc.components.securitySchemes.x402).toMatchObject({
      type: 'apiKey',
      in: 'header',
      name: 'PAYMENT-SIGNATURE',
    });
    expect(doc.servers).toEqual([{ url: t.url }]);
    for (const a of paid) {
      const op = doc.paths[`/api/run/${a.id}`].post;
      expect(op.security, a.id).toEqual([{ apiKey: [] }, { x402: [] }]);
      expect(op['x-payment-info'], a.id).toMatchObject({
        pricingMode: 'fixed',
        price: (a.priceCents / 100).toFixed(2),
        currency: 'USD',
      });
      const x402 = op['x-payment-info'].protocols.find((p: Record<string, unknown>) => 'x402' in p).x402;
      expect(x402, a.id).toMatchObject({
        scheme: 'exact',
        network: 'eip155:8453',
        asset: USDC,
        amount: String(a.priceCents * 10_000),
      });
    }
  });

  it('[x402:declared] the MCP tool list: terms and the x402 requirements in each paid tool', async () => {
    const c = new Client({ name: 'contract', version: '1' });
    await c.connect(new StreamableHTTPClientTransport(new URL(`${t.url}/mcp/x402`)));
    try {
      const tools = (await c.listTools()).tools;
      for (const a of actions) {
        const tool = tools.find((x) => x.name === a.toolName);
        if (a.access !== 'paid') {
          expect(tool?._meta?.['tollgate/payment'], a.id).toBeUndefined();
          continue;
        }
        expectTerms(tool?._meta?.['tollgate/payment'], a.priceCents);
        expect(tool?._meta?.['x402/payment-requirements'], a.id).toEqual([
          expect.objectContaining({ scheme: 'exact', amount: String(a.priceCents * 10_000), asset: USDC }),
        ]);
      }
    } finally {
      await c.close();
    }
  });

  it('[x402:declared] without x402 configured only the API key is declared (nothing advertised that would be refused)', async () => {
    const doc = (await bare.get('/openapi.json')).body;
    // A paid action this gateway lists (it hides those it cannot run).
    const a = paid.find((x) => doc.paths[`/api/run/${x.id}`]);
    if (!a) throw new Error('no paid action listed');
    const d = (await bare.get(`/api/run/${a.id}`)).body;
    expect(d.payment.protocols).toEqual([expect.objectContaining({ protocol: 'api_key' })]);
    expect(doc.components.securitySchemes.x402).toBeUndefined();
    expect(doc.paths[`/api/run/${a.id}`].post['x-payment-info'].pricingMode).toBe('fixed');
  });
});
