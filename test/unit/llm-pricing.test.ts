import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors.js';
import { PriceCatalog, parseListing } from '../../src/llm/pricing.js';
import { LlmRouter, type TiersConfig, tierView } from '../../src/llm/router.js';
import type { LlmUpstream } from '../../src/llm/upstream.js';
import { ManualClock } from '../helpers/clock.js';

// The price list (upstream listing + overrides, cached and refreshed) and tier resolution.

const log = pino({ level: 'silent' });
const entry = (id: string, pricing: Record<string, string> | undefined, outputs = ['text']) => ({
  id,
  created: 1,
  architecture: { output_modalities: outputs },
  pricing,
});

function catalog(listing: () => unknown, clock = new ManualClock(), overrides = {}) {
  let calls = 0;
  const c = new PriceCatalog({
    listModels: async () => {
      calls++;
      return listing();
    },
    overrides,
    refreshMs: 60_000,
    clock,
    log,
  });
  return { c, calls: () => calls };
}

describe('[llm:prices-refreshed] the upstream listing', () => {
  it('reads string prices per token, fees and modalities; unknown parts make a price unknown', () => {
    const m = parseListing({
      data: [
        entry('a/x', { prompt: '0.000003', completion: '0.000015', request: '0', image: '0.001' }),
        entry('a/variable', { prompt: '-1', completion: '-1' }),
        entry('a/nofee', { prompt: '0.000001', completion: '0.000002', request: '-1' }),
        entry('a/none', undefined),
        entry('a/reason', { prompt: '0.000001', completion: '0.000002', internal_reasoning: '0.000005' }),
        entry('a/img', { prompt: '0.000001', completion: '0.000002' }, ['image', 'text']),
        { id: 42 },
        null,
      ],
    });
    expect(m.get('a/x')?.price).toEqual({
      promptPerM: 3_000_000,
      completionPerM: 15_000_000,
      requestMicros: 0,
      imageMicros: 1000,
    });
    expect(m.get('a/variable')?.price).toBeUndefined();
    expect(m.get('a/nofee')?.price).toBeUndefined();
    expect(m.get('a/none')?.price).toBeUndefined();
    expect(m.get('a/reason')?.price?.completionPerM).toBe(5_000_000);
    expect(m.get('a/img')?.generatesMedia).toBe(true);
    expect(m.size).toBe(6);
    expect(() => parseListing({ models: [] })).toThrow();
  });

  it('is loaded once, refreshed on demand, and keeps the last good prices when a refresh fails', async () => {
    let price = '0.000001';
    let fail = false;
    const { c, calls } = catalog(() => {
      if (fail) throw new Error('down');
      return { data: [entry('a/x', { prompt: price, completion: price })] };
    });
    await Promise.all([c.ensureLoaded(), c.ensureLoaded()]);
    expect(calls()).toBe(1);
    expect(c.lookup('a/x')?.price?.promptPerM).toBe(1_000_000);
    price = '0.000002';
    await c.refresh();
    expect(c.lookup('a/x')?.price?.promptPerM).toBe(2_000_000);
    fail = true;
    await expect(c.refresh()).rejects.toBeInstanceOf(GatewayError);
    expect(c.lookup('a/x')?.price?.promptPerM).toBe(2_000_000);
  });

  it('answers 503 while the listing cannot be had, failing fast for 5 s between attempts', async () => {
    const clock = new ManualClock();
    let up = false;
    const { c, calls } = catalog(() => {
      if (!up) throw new Error('down');
      return { data: [] };
    }, clock);
    const first = await c.ensureLoaded().catch((e) => e);
    expect(first).toMatchObject({ code: 'upstream_unavailable', retryAfterSeconds: 5 });
    await expect(c.ensureLoaded()).rejects.toBe(first);
    expect(calls()).toBe(1);
    clock.advance(5_000);
    up = true;
    await c.ensureLoaded();
    expect(calls()).toBe(2);
  });

  it('[llm:price-override] overrides replace token prices, keep listed fees, and exist without the listing', async () => {
    const { c } = catalog(
      () => ({ data: [entry('a/x', { prompt: '0.000003', completion: '0.000015', request: '0.002' })] }),
      new ManualClock(),
      { 'a/x': { promptPerM: 1, completionPerM: 2 }, 'private/y': { promptPerM: 5, completionPerM: 6 } },
    );
    expect(c.lookup('private/y')).toMatchObject({ source: 'override', price: { promptPerM: 5 } });
    await c.ensureLoaded();
    expect(c.lookup('a/x')).toMatchObject({
      source: 'override',
      price: { promptPerM: 1, completionPerM: 2, requestMicros: 2000 },
    });
  });
});

describe('[llm:fallback-within-ceiling] tiers', () => {
  const listing = {
    data: [
      entry('t/cheap', { prompt: '0.0000001', completion: '0.0000004' }),
      entry('t/pricey', { prompt: '0.0000001', completion: '0.000002' }),
      entry('t/unpriced', { prompt: '-1', completion: '-1' }),
      entry('t/media', { prompt: '0.0000001', completion: '0.0000001' }, ['image']),
      entry('t/also', { prompt: '0.0000003', completion: '0.0000012' }),
    ],
  };
  const tiers: TiersConfig = {
    'platform/cheap': {
      models: ['t/cheap', 't/pricey', 't/unpriced', 't/media', 't/gone', 't/also'],
      ceiling: { promptPerM: 300_000, completionPerM: 1_200_000 },
    },
    'platform/mid': { models: ['t/pricey'], ceiling: { promptPerM: 100, completionPerM: 100 } },
    'platform/best': { models: [], ceiling: { promptPerM: 0, completionPerM: 0 } },
  };

  it('keep their order and leave out what is above the ceiling, unpriced, media or unknown (at the ceiling is in)', async () => {
    const { c } = catalog(() => listing);
    await c.ensureLoaded();
    const v = tierView('platform/cheap', tiers['platform/cheap'], c);
    expect(v.eligible.map((m) => m.id)).toEqual(['t/cheap', 't/also']);
    expect(v.excluded).toEqual([
      { id: 't/pricey', reason: 'above_ceiling' },
      { id: 't/unpriced', reason: 'no_price' },
      { id: 't/media', reason: 'generates_media' },
      { id: 't/gone', reason: 'unknown_model' },
    ]);
  });

  it('[llm:unknown-price-refused] resolve: tiers, slugs, and the refusals', async () => {
    const { c } = catalog(() => listing);
    const router = new LlmRouter({} as LlmUpstream, c, tiers);
    const signal = new AbortController().signal;
    expect((await router.resolve('platform/cheap', signal)).candidates.map((m) => m.id)).toEqual([
      't/cheap',
      't/also',
    ]);
    expect(await router.resolve('t/pricey', signal)).toMatchObject({
      tier: undefined,
      candidates: [{ id: 't/pricey' }],
    });
    await expect(router.resolve('platform/mid', signal)).rejects.toMatchObject({
      code: 'upstream_unavailable',
    });
    await expect(router.resolve('platform/ultra', signal)).rejects.toMatchObject({ code: 'not_found' });
    await expect(router.resolve('t/unpriced', signal)).rejects.toMatchObject({ code: 'not_found' });
    await expect(router.resolve('t/gone', signal)).rejects.toMatchObject({ code: 'not_found' });
    await expect(router.resolve('t/media', signal)).rejects.toMatchObject({ code: 'invalid_input' });
  });

  it('[llm:price-override] while the listing is down, overridden models stay servable and others get 503', async () => {
    const { c } = catalog(
      () => {
        throw new Error('down');
      },
      new ManualClock(),
      { 'own/model': { promptPerM: 1, completionPerM: 1 } },
    );
    const router = new LlmRouter({} as LlmUpstream, c, tiers);
    const signal = new AbortController().signal;
    expect((await router.resolve('own/model', signal)).candidates[0]?.overridden).toBe(true);
    await expect(router.resolve('t/cheap', signal)).rejects.toMatchObject({ code: 'upstream_unavailable' });
  });
});
