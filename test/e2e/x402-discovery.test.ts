import { validateDiscoveryExtension } from '@x402/extensions/bazaar';
import {
  appendPaymentIdentifierToExtensions,
  generatePaymentId,
  validatePaymentIdentifier,
} from '@x402/extensions/payment-identifier';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { actions } from '../../catalog/index.js';
import type { X402Config } from '../../src/config/index.js';
import { encodeChallenge } from '../../src/run/x402/codec.js';
import { BAZAAR_MAX_BYTES, discoveryFor } from '../../src/run/x402/discovery.js';
import { challengeFor, offerFor, priceDescription } from '../../src/run/x402/requirements.js';
import { startChain, type TestChain } from '../helpers/anvil.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { challengeOf, encodePayment, newPayer, officialPayment, x402Env } from '../helpers/x402.js';

// The challenge's extensions: `bazaar` (how to call the resource) checked with the official validator of
// @x402/extensions for every paid action and both transports, within a header budget; and `payment-identifier`
// with the official client helper, on a real chain: a retry that re-signs keeps its id and gets the first
// call, so exactly one payment moves.

const CFG = {
  payTo: '0x1AFD115e14C3D8137C7341a159D1F9a0391DB502',
  network: 'eip155:8453',
  chainId: 8453,
  asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
  assetName: 'USD Coin',
  assetVersion: '2',
  maxTimeoutSeconds: 300,
} as unknown as X402Config;
/** What a challenge header may grow to: Node and undici refuse response/request heads above 16 KiB in all. */
const HEADER_BUDGET = 8 * 1024;

describe('bazaar discovery in every challenge', () => {
  it('[x402:bazaar] valid per the official validator, schemas included, under the header budget for every paid action', () => {
    // The validator's ajv warns about formats it does not check (uri, email); the schemas are still checked.
    vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    let largest = { id: '', bytes: 0 };
    for (const a of actions.filter((x) => x.access === 'paid')) {
      for (const transport of ['http', 'mcp'] as const) {
        const { extensions, detail } = discoveryFor(a, transport);
        const bazaar = extensions.bazaar as Parameters<typeof validateDiscoveryExtension>[0];
        const v = validateDiscoveryExtension(bazaar);
        expect(v.errors ?? [], `${a.id} ${transport}`).toEqual([]);
        expect(v.valid).toBe(true);
        expect(validatePaymentIdentifier(extensions['payment-identifier']).valid).toBe(true);
        const info = (bazaar as { info: { input: Record<string, unknown> } }).info.input;
        if (transport === 'mcp') expect(info.toolName).toBe(a.toolName);
        else expect(info).toMatchObject({ type: 'http', method: 'POST', bodyType: 'json' });
        expect(JSON.stringify(bazaar).length).toBeLessThanOrEqual(BAZAAR_MAX_BYTES);
        if (detail !== 'input-only') {
          expect(
            (bazaar as { schema: { properties: { output?: unknown } } }).schema.properties.output,
          ).toBeDefined();
        }
        const resource = {
          url: `https://gateway.example.com/api/run/${a.id}`,
          description: priceDescription(a),
        };
        const header = encodeChallenge(
          challengeFor(offerFor(CFG, a), resource, 'Payment required', extensions),
        );
        if (header.length > largest.bytes) largest = { id: `${a.id} ${transport}`, bytes: header.length };
        expect(header.length, a.id).toBeLessThanOrEqual(HEADER_BUDGET);
      }
    }
    expect(largest.bytes).toBeGreaterThan(1000);
  });

  it('[x402:bazaar] the largest schema (videoasm/put_composition) is shortened, never dropped', () => {
    const a = actions.find((x) => x.id === 'videoasm/put_composition');
    if (!a) throw new Error('missing action');
    const { detail, extensions } = discoveryFor(a, 'http');
    expect(detail).not.toBe('full');
    const body = (
      extensions.bazaar as { schema: { properties: { input: { properties: { body: unknown } } } } }
    ).schema.properties.input.properties.body as { properties: Record<string, unknown> };
    expect(Object.keys(body.properties)).toEqual(expect.arrayContaining(['project_id']));
  });
});

describe('payment-identifier on a local chain', () => {
  let chain: TestChain;
  let t: TestGateway;
  const merchant = newPayer().address;
  let runs = 0;
  let fail = false;

  beforeAll(async () => {
    chain = await startChain();
    t = await startGateway({
      env: x402Env(chain, merchant),
      handlers: {
        'scraperC/scrape': async () => {
          runs++;
          if (fail) throw new Error('boom');
          return { raw: '<html>ok</html>' };
        },
      },
    });
  });
  afterAll(async () => {
    await t?.close();
    await chain?.close();
  });

  const path = '/api/run/scraperC/scrape';
  const body = { url: 'https://example.com/', browser: false };

  async function signedWithId(payer: ReturnType<typeof newPayer>, id: string, b: unknown = body) {
    const r = await t.post(path, b);
    expect(r.status).toBe(402);
    const challenge = challengeOf(r);
    appendPaymentIdentifierToExtensions(challenge.extensions ?? {}, id);
    return officialPayment(payer, challenge);
  }

  it('[x402:payment-identifier] a re-signed retry with the same id gets the first call; one payment moves', async () => {
    const payer = newPayer();
    await chain.mint(payer.address, 1_000_000n);
    const id = generatePaymentId();
    const first = await t.post(path, body, {
      headers: { 'payment-signature': encodePayment(await signedWithId(payer, id)) },
    });
    expect(first.status).toBe(200);
    const before = runs;
    // The response was "lost": the client signs a fresh payment (new nonce) but keeps its id.
    const again = await t.post(path, body, {
      headers: { 'payment-signature': encodePayment(await signedWithId(payer, id)) },
    });
    expect(again.status).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body.transaction_id).toBe(first.body.transaction_id);
    expect(runs).toBe(before);
    expect(await chain.transfersFrom(payer.address)).toBe(1);
    expect(await chain.balanceOf(payer.address)).toBe(1_000_000n - 10_000n);

    const other = await t.post(
      path,
      { ...body, url: 'https://example.org/' },
      {
        headers: {
          'payment-signature': encodePayment(
            await signedWithId(payer, id, { ...body, url: 'https://example.org/' }),
          ),
        },
      },
    );
    expect(other.status).toBe(422);
    expect(other.body.error.code).toBe('idempotency_mismatch');
    expect(await chain.transfersFrom(payer.address)).toBe(1);
  });

  it('[x402:payment-identifier] an id whose call failed is free again; a malformed id is refused', async () => {
    const payer = newPayer();
    await chain.mint(payer.address, 1_000_000n);
    const id = generatePaymentId();
    fail = true;
    const failed = await t.post(path, body, {
      headers: { 'payment-signature': encodePayment(await signedWithId(payer, id)) },
    });
    fail = false;
    expect(failed.status).toBeGreaterThanOrEqual(500);
    const ok = await t.post(path, body, {
      headers: { 'payment-signature': encodePayment(await signedWithId(payer, id)) },
    });
    expect(ok.status).toBe(200);
    expect(await chain.transfersFrom(payer.address)).toBe(1);

    const r = await t.post(path, body);
    const challenge = challengeOf(r);
    const p = await officialPayment(payer, challenge);
    p.extensions = { ...p.extensions, 'payment-identifier': { info: { required: false, id: 'short' } } };
    const bad = await t.post(path, body, { headers: { 'payment-signature': encodePayment(p) } });
    expect(bad.status).toBe(402);
    expect(challengeOf(bad).error).toBe('invalid_payload');
  });
});
