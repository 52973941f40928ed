import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeServer, RENTCAST_KEY, startFakeRentCast } from '../fakes/rentcast.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

// propstats end to end: the real HTTP shim → run path → RentCast client → the fake RentCast on 127.0.0.1.

let fake: FakeServer;
let t: TestGateway;

beforeAll(async () => {
  // RentCast's real limit is 20 requests/second; this file alone can exceed that, and the limit has its own test.
  fake = await startFakeRentCast({ perSecond: 1000 });
  t = await startGateway({
    env: {
      TOLLGATE_RENTCAST_API_KEY: RENTCAST_KEY,
      TOLLGATE_RENTCAST_BASE_URL: fake.url,
      // Short, so the timeout case stays quick; the fake answers everything else at once.
      TOLLGATE_UPSTREAM_TIMEOUT_SECONDS: '1',
    },
  });
});
afterAll(async () => {
  await t?.close();
  await fake?.close();
});

const ADDRESS = '5500 Grand Lake Dr, San Antonio, TX 78244';
const run = (action: string, body: unknown, key: string) =>
  t.post(`/api/run/propstats/${action}`, body, { key });

async function expectUntouched(accountId: string) {
  expect(await t.gw.ledger.balance(accountId)).toEqual({
    balance_micros: 1_000_000,
    held_micros: 0,
    available_micros: 1_000_000,
  });
}

describe('successful calls', () => {
  it('[billing:charge-only-on-success] [billing:recorded-to-the-cent] properties: charged exactly 30 cents and recorded', async () => {
    const { accountId, key } = await t.account('1');
    const r = await run('properties', { address: ADDRESS }, key);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ ok: true, charged_cents: 30, data: { count: 1 } });
    expect(r.body.data.results[0]).toMatchObject({ formattedAddress: ADDRESS, bedrooms: 3 });
    expect((await t.gw.ledger.balance(accountId)).balance_micros).toBe(700_000);
    const [tx] = await t.gw.ledger.transactions(accountId, 1);
    expect(tx).toMatchObject({
      id: r.body.transaction_id,
      action: 'propstats/properties',
      status: 'succeeded',
      charged_micros: 300_000,
      provider: 'rentcast',
    });
    // The fake only answers a correct X-Api-Key; the query uses RentCast's names, defaults filled in.
    const req = fake.last('/properties');
    expect(req?.headers['x-api-key']).toBe(RENTCAST_KEY);
    expect(req?.query).toEqual({ address: ADDRESS, limit: '50' });
  });

  it.each([
    ['value-estimate', { address: ADDRESS }, 35, '/avm/value', { compCount: '15' }],
    [
      'rent-estimate',
      { latitude: 29.47, longitude: -98.35, bedrooms: 0 },
      35,
      '/avm/rent/long-term',
      { bedrooms: '0' },
    ],
    [
      'sale-listings',
      { city: 'San Antonio', state: 'TX', status: 'Active' },
      30,
      '/listings/sale',
      { status: 'Active' },
    ],
    ['rental-listings', { zipCode: '78244', offset: 1 }, 30, '/listings/rental/long-term', { offset: '1' }],
    ['market-stats', { zipCode: '78244' }, 30, '/markets', { dataType: 'All', historyRange: '12' }],
  ])('[billing:charge-only-on-success] %s is charged its price', async (action, body, cents, path, query) => {
    const { accountId, key } = await t.account('1');
    const r = await run(action, body, key);
    expect(r.status).toBe(200);
    expect(r.body.charged_cents).toBe(cents);
    expect((await t.gw.ledger.balance(accountId)).balance_micros).toBe(1_000_000 - cents * 10_000);
    expect(fake.last(path)?.query).toMatchObject(query);
  });

  it('estimates return the spec fields with comparables; listings wrap the vendor array', async () => {
    const { key } = await t.account('1');
    const value = await run('value-estimate', { address: ADDRESS, compCount: 5 }, key);
    expect(value.body.data).toMatchObject({ price: 221000, priceRangeLow: 207740, priceRangeHigh: 234260 });
    expect(value.body.data.comparables[0]).toMatchObject({ correlation: 0.9822 });
    const rent = await run('rent-estimate', { address: ADDRESS }, key);
    expect(rent.body.data).toMatchObject({ rent: 1650, rentRangeLow: 1551, rentRangeHigh: 1749 });
    const market = await run('market-stats', { zipCode: '78244', dataType: 'Sale' }, key);
    expect(market.body.data).toMatchObject({ zipCode: '78244', saleData: { medianPrice: 215000 } });
    expect(market.body.data.rentalData).toBeUndefined();
  });

  it("[propstats:range-syntax] a '2-4' filter reaches RentCast as '2:4'", async () => {
    const { key } = await t.account('1');
    const r = await run('sale-listings', { zipCode: '78244', bedrooms: '3-4', price: '1000-*' }, key);
    expect(r.status).toBe(200);
    expect(fake.last('/listings/sale')?.query).toMatchObject({ bedrooms: '3:4', price: '1000:*' });
    expect(r.body.data.results.map((p: { bedrooms: number }) => p.bedrooms)).toEqual([3, 4]);
  });

  it('[propstats:passthrough] additional fields are forwarded as query parameters', async () => {
    const { key } = await t.account('1');
    const r = await run(
      'properties',
      { zipCode: '78244', includeTotalCount: true, suppressLogging: 'true' },
      key,
    );
    expect(r.status).toBe(200);
    expect(fake.last('/properties')?.query).toMatchObject({
      includeTotalCount: 'true',
      suppressLogging: 'true',
    });
  });

  it('[propstats:passthrough] a non-scalar additional field is a 400 naming it, before any hold', async () => {
    const { accountId, key } = await t.account('1');
    const before = fake.requests.length;
    const r = await run('properties', { zipCode: '78244', filters: { a: 1 } }, key);
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('invalid_input');
    expect(r.body.error.details.issues).toEqual([{ path: 'filters', message: expect.any(String) }]);
    expect(fake.requests.length).toBe(before);
    await expectUntouched(accountId);
    expect(await t.gw.ledger.transactions(accountId, 5)).toEqual([]);
  });
});

describe('failures charge nothing', () => {
  it('[catalog:constraints] [propstats:location-required] invalid input is a 400 naming the field; the vendor is not called', async () => {
    const { accountId, key } = await t.account('1');
    const before = fake.requests.length;
    const r = await run('sale-listings', { city: 'Austin', limit: 500 }, key);
    expect(r.status).toBe(400);
    expect(r.body.error.details.issues.map((i: { path: string }) => i.path).sort()).toEqual([
      'limit',
      'state',
    ]);
    expect(fake.requests.length).toBe(before);
    await expectUntouched(accountId);
  });

  it('[propstats:no-results-uncharged] a search RentCast answers 404 is our 404 resource_not_found, uncharged', async () => {
    const { accountId, key } = await t.account('1');
    const r = await run('sale-listings', { zipCode: '99999' }, key);
    expect(fake.last('/listings/sale')?.query.zipCode).toBe('99999');
    expect(r.status).toBe(404);
    expect(r.body).toMatchObject({ ok: false, charged_cents: 0, error: { code: 'resource_not_found' } });
    await expectUntouched(accountId);
    const [tx] = await t.gw.ledger.transactions(accountId, 1);
    expect(tx).toMatchObject({ status: 'failed', charged_micros: 0, error_code: 'resource_not_found' });
  });

  it('[propstats:no-results-uncharged] market-stats for an unknown zip code is uncharged 404', async () => {
    const { accountId, key } = await t.account('1');
    const r = await run('market-stats', { zipCode: '00001' }, key);
    expect(r.status).toBe(404);
    await expectUntouched(accountId);
  });

  const VENDOR_TEXT = 'SECRET-VENDOR-DETAIL';
  it.each([
    [400, 'resource/bad-request', 422, 'upstream_rejected'],
    [401, 'auth/api-key-invalid', 503, 'upstream_unavailable'],
    [404, 'resource/not-found', 404, 'resource_not_found'],
    [429, 'auth/rate-limit-exceeded', 503, 'upstream_busy'],
    [500, 'server/internal-error', 502, 'upstream_error'],
    [504, 'server/timeout', 504, 'upstream_timeout'],
  ])(
    '[billing:charge-only-on-success] vendor %i → %s… HTTP %i %s, nothing charged',
    async (status, error, http, code) => {
      const { accountId, key } = await t.account('1');
      fake.script({ path: '/avm/value', status, body: { status, error, message: VENDOR_TEXT } });
      const r = await run('value-estimate', { address: ADDRESS }, key);
      expect(r.status).toBe(http);
      expect(r.body).toMatchObject({ ok: false, charged_cents: 0, error: { code } });
      expect(r.text).not.toContain(VENDOR_TEXT);
      await expectUntouched(accountId);
      const [tx] = await t.gw.ledger.transactions(accountId, 1);
      expect(tx).toMatchObject({
        status: 'failed',
        charged_micros: 0,
        error_code: code,
        provider: 'rentcast',
      });
      if (status === 429) expect(r.headers['retry-after']).toBe('5');
    },
  );

  it('[billing:charge-only-on-success] a vendor that does not answer in time → 504, nothing charged', async () => {
    const { accountId, key } = await t.account('1');
    fake.script({ path: '/markets', status: 200, body: { zipCode: '78244' }, delayMs: 2500 });
    const r = await run('market-stats', { zipCode: '78244' }, key);
    expect(r.status).toBe(504);
    expect(r.body.error.code).toBe('upstream_timeout');
    await expectUntouched(accountId);
  });

  it('[billing:charge-only-on-success] an answer in the wrong shape → 502 bad_response, nothing charged', async () => {
    const { accountId, key } = await t.account('1');
    fake.script({ path: '/avm/value', status: 200, body: { price: 'a lot' } });
    const r = await run('value-estimate', { address: ADDRESS }, key);
    expect(r.status).toBe(502);
    expect(r.body.error.code).toBe('bad_response');
    await expectUntouched(accountId);
  });

  it("[billing:charge-only-on-success] RentCast's own 400 for an unparseable address → 422, nothing charged", async () => {
    const { accountId, key } = await t.account('1');
    const r = await run('value-estimate', { address: 'Nowhere Lane' }, key);
    expect(r.status).toBe(422);
    expect(r.body.error.code).toBe('upstream_rejected');
    expect(r.text).not.toContain('could not be parsed');
    await expectUntouched(accountId);
  });
});

describe('operator configuration', () => {
  it('[http:not-configured] without TOLLGATE_RENTCAST_API_KEY: 503 naming it, no hold, no record', async () => {
    const bare = await startGateway();
    try {
      const { accountId, key } = await bare.account('1');
      const r = await bare.post('/api/run/propstats/market-stats', { zipCode: '78244' }, { key });
      expect(r.status).toBe(503);
      expect(r.body).toMatchObject({ ok: false, charged_cents: 0, error: { code: 'not_configured' } });
      expect(r.body.error.message).toContain('TOLLGATE_RENTCAST_API_KEY');
      expect(await bare.gw.ledger.transactions(accountId, 5)).toEqual([]);
      expect((await bare.gw.ledger.balance(accountId)).balance_micros).toBe(1_000_000);
    } finally {
      await bare.close();
    }
  });

  it("[billing:charge-only-on-success] RentCast's own rate limit → 503 upstream_busy with Retry-After, uncharged", async () => {
    const limited = await startFakeRentCast({ perSecond: 2 });
    const g = await startGateway({
      env: { TOLLGATE_RENTCAST_API_KEY: RENTCAST_KEY, TOLLGATE_RENTCAST_BASE_URL: limited.url },
    });
    try {
      const { accountId, key } = await g.account('5');
      const replies = [];
      for (let i = 0; i < 6; i++) {
        replies.push(await g.post('/api/run/propstats/market-stats', { zipCode: '78244' }, { key }));
      }
      const busy = replies.filter((r) => r.status === 503);
      const ok = replies.filter((r) => r.status === 200);
      expect(busy.length + ok.length).toBe(6);
      expect(busy.length).toBeGreaterThan(0);
      for (const r of busy) {
        expect(r.body).toMatchObject({ charged_cents: 0, error: { code: 'upstream_busy', retryable: true } });
        expect(r.headers['retry-after']).toBeDefined();
      }
      expect((await g.gw.ledger.balance(accountId)).balance_micros).toBe(5_000_000 - ok.length * 300_000);
    } finally {
      await g.close();
      await limited.close();
    }
  });

  it('[billing:charge-only-on-success] a key RentCast refuses → 503 upstream_unavailable, uncharged', async () => {
    const wrong = await startGateway({
      env: { TOLLGATE_RENTCAST_API_KEY: 'not-the-key', TOLLGATE_RENTCAST_BASE_URL: fake.url },
    });
    try {
      const { accountId, key } = await wrong.account('1');
      const r = await wrong.post('/api/run/propstats/market-stats', { zipCode: '78244' }, { key });
      expect(fake.last('/markets')?.headers['x-api-key']).toBe('not-the-key');
      expect(r.status).toBe(503);
      expect(r.body.error.code).toBe('upstream_unavailable');
      expect((await wrong.gw.ledger.balance(accountId)).balance_micros).toBe(1_000_000);
    } finally {
      await wrong.close();
    }
  });
});
