import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool } from '../../src/upstreams/http.js';
import { createRealEstateApiClient } from '../../src/upstreams/realestateapi.js';
import { createRentCastClient } from '../../src/upstreams/rentcast.js';
import { REAPI_KEY, startFakeRealEstateApi } from '../fakes/realestateapi.js';
import { type FakeServer, RENTCAST_KEY, startFakeRentCast } from '../fakes/rentcast.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

// propdata end to end: the real HTTP shim → run path → RealEstateAPI client → the fake on 127.0.0.1.

let fake: FakeServer;
let t: TestGateway;

beforeAll(async () => {
  fake = await startFakeRealEstateApi();
  t = await startGateway({
    env: {
      TOLLGATE_REALESTATEAPI_API_KEY: REAPI_KEY,
      TOLLGATE_REALESTATEAPI_BASE_URL: fake.url,
      TOLLGATE_UPSTREAM_TIMEOUT_SECONDS: '1',
    },
  });
});
afterAll(async () => {
  await t?.close();
  await fake?.close();
});

const ADDRESS = '17 Topeka Pass, Willingboro, NJ 08046';
const run = (action: string, body: unknown, key: string) =>
  t.post(`/api/run/propdata/${action}`, body, { key });
const micros = async (accountId: string) => (await t.gw.ledger.balance(accountId)).balance_micros;

describe('successful calls', () => {
  it('[billing:charge-only-on-success] [billing:recorded-to-the-cent] [propdata:avm-numbers] avm: 25 cents, numbers as numbers', async () => {
    const { accountId, key } = await t.account('1');
    const r = await run('avm', { address: ADDRESS, strict: true }, key);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      ok: true,
      charged_cents: 25,
      data: {
        avm: 312000,
        avmMin: 289000,
        avmMax: 335000,
        confidence: 88,
        apn: '38-00803-00017',
        fips: '34005',
      },
    });
    expect(r.body.data.address).toBe('17 Topeka Pass');
    expect(await micros(accountId)).toBe(750_000);
    const [tx] = await t.gw.ledger.transactions(accountId, 1);
    expect(tx).toMatchObject({
      action: 'propdata/avm',
      status: 'succeeded',
      charged_micros: 250_000,
      provider: 'realestateapi',
    });
    const req = fake.last('/v2/PropertyAvm');
    expect(req?.method).toBe('POST');
    expect(req?.headers['x-api-key']).toBe(REAPI_KEY);
    expect(req?.headers['content-type']).toContain('application/json');
    expect(req?.body).toEqual({ address: ADDRESS, strict: true });
  });

  it.each([
    ['autocomplete', { search: '17 Topeka', search_types: ['A'], precision: 4 }, 1, '/v2/AutoComplete'],
    [
      'property-detail',
      {
        house: '17',
        street: 'Topeka Pass',
        city: 'Willingboro',
        state: 'NJ',
        zip: '08046',
        prior_owner: true,
      },
      20,
      '/v2/PropertyDetail',
    ],
    [
      'skiptrace',
      { address: '17 Topeka Pass', city: 'Willingboro', state: 'NJ', first_name: 'Jane', last_name: 'Owner' },
      25,
      '/v1/SkipTrace',
    ],
    [
      'parcel',
      { latitude: 40.0312, longitude: -74.8801, radius: 0.1, size: 5, resultIndex: 0 },
      20,
      '/v1/PropertyParcel',
    ],
  ])(
    '[billing:charge-only-on-success] %s is charged its price; the body uses the vendor names',
    async (action, body, cents, path) => {
      const { accountId, key } = await t.account('1');
      const r = await run(action, body, key);
      expect(r.status).toBe(200);
      expect(r.body.charged_cents).toBe(cents);
      expect(await micros(accountId)).toBe(1_000_000 - cents * 10_000);
      expect(fake.last(path)?.body).toEqual(body);
    },
  );

  it('autocomplete candidates carry an id for property-detail and numeric coordinates', async () => {
    const { key } = await t.account('1');
    const r = await run('autocomplete', { search: 'Topeka Pass' }, key);
    const [c] = r.body.data.results;
    expect(c).toMatchObject({
      id: '186077',
      zip: '08046',
      fips: '34005',
      latitude: 40.0312,
      longitude: -74.8801,
    });
    const detail = await run('property-detail', { id: c.id }, key);
    expect(detail.status).toBe(200);
    expect(detail.body.data).toMatchObject({
      id: 186077,
      estimatedValue: 312000,
      lotInfo: { apn: '38-00803-00017' },
    });
  });

  it('skiptrace returns matched persons with phones and do-not-call flags', async () => {
    const { key } = await t.account('1');
    const r = await run('skiptrace', { phone: '6095550100' }, key);
    expect(r.status).toBe(200);
    expect(r.body.data.match).toBe(true);
    expect(r.body.data.persons[0]).toMatchObject({
      phones: [{ phone: '6095550100', doNotCall: true, phoneType: 'mobile' }],
      demographics: { age: 54, gender: 'F' },
    });
  });

  it('[propdata:parcel-geojson] [propdata:parcel-polygon] a polygon reaches the vendor as { lat, lon }; WKT comes back as GeoJSON', async () => {
    const { key } = await t.account('1');
    const polygon = [
      { latitude: 40.0, longitude: -74.9 },
      { latitude: 40.1, longitude: -74.9 },
      { latitude: 40.1, longitude: -74.8 },
    ];
    const r = await run('parcel', { polygon, size: 2 }, key);
    expect(r.status).toBe(200);
    expect(fake.last('/v1/PropertyParcel')?.body).toEqual({
      polygon: polygon.map((p) => ({ lat: p.latitude, lon: p.longitude })),
      size: 2,
    });
    const [p] = r.body.data.results;
    expect(p).toMatchObject({ id: 186077, apn: '38-00803-00017', latitude: 40.0312, longitude: -74.8801 });
    expect(p.location).toEqual({ type: 'Point', coordinates: [-74.8801, 40.0312] });
    expect(p.geometry.type).toBe('Polygon');
    expect(p.geometry.coordinates[0]).toHaveLength(5);
    expect(r.body.data).toMatchObject({ resultCount: 1, resultIndex: 0 });
  });

  it('[propdata:passthrough] additional fields reach the vendor, parcel ids as numbers', async () => {
    const { key } = await t.account('1');
    const d = await run('property-detail', { address: ADDRESS, comps: false, exact_match: true }, key);
    expect(d.status).toBe(200);
    expect(fake.last('/v2/PropertyDetail')?.body).toEqual({
      address: ADDRESS,
      comps: false,
      exact_match: true,
    });
    const p = await run('parcel', { id: '186077', customFlag: 'x' }, key);
    expect(p.status).toBe(200);
    expect(fake.last('/v1/PropertyParcel')?.body).toEqual({ id: 186077, customFlag: 'x' });
  });
});

describe('no result is not charged', () => {
  it.each([
    [
      '[propdata:avm-404-unmatched] avm, unmatched address (HTTP 404)',
      'avm',
      { address: '99 Nowhere Rd, Nowhere, NJ 08000' },
    ],
    [
      '[propdata:avm-404-unmatched] avm, strict refuses a fuzzy match',
      'avm',
      { address: '17 Topeka Pass, Trenton, NJ 08608', strict: true },
    ],
    [
      'property-detail, data.error === true (HTTP 200)',
      'property-detail',
      { address: '99 Nowhere Rd, Nowhere, NJ 08000' },
    ],
    ['skiptrace, match: false', 'skiptrace', { email: 'nobody@example.com' }],
    ['autocomplete, no candidates', 'autocomplete', { search: 'Zzyzx Road' }],
    ['parcel, no parcel at the point', 'parcel', { latitude: 10, longitude: 10 }],
  ])('[billing:charge-only-on-success] %s → 404 resource_not_found', async (_name, action, body) => {
    const { accountId, key } = await t.account('1');
    const r = await run(action, body, key);
    expect(r.status).toBe(404);
    expect(r.body).toMatchObject({ ok: false, charged_cents: 0, error: { code: 'resource_not_found' } });
    expect(r.text).not.toContain('Unable to confidently match');
    expect(await micros(accountId)).toBe(1_000_000);
    const [tx] = await t.gw.ledger.transactions(accountId, 1);
    expect(tx).toMatchObject({ status: 'failed', charged_micros: 0, error_code: 'resource_not_found' });
  });

  it('[propdata:avm-404-unmatched] the same address without strict is valued (fuzzy match allowed)', async () => {
    const { key } = await t.account('1');
    const r = await run('avm', { address: '17 Topeka Pass, Trenton, NJ 08608' }, key);
    expect(r.status).toBe(200);
    expect(r.body.data.avm).toBe(312000);
  });
});

describe('vendor failures charge nothing', () => {
  const VENDOR_TEXT = 'SECRET-VENDOR-DETAIL';
  it.each([
    [400, 422, 'upstream_rejected'],
    [401, 503, 'upstream_unavailable'],
    [403, 503, 'upstream_unavailable'],
    [429, 503, 'upstream_busy'],
    [500, 502, 'upstream_error'],
  ])('[billing:charge-only-on-success] vendor HTTP %i → %i %s', async (status, http, code) => {
    const { accountId, key } = await t.account('1');
    fake.script({
      path: '/v2/PropertyAvm',
      status,
      body: { statusCode: status, error: 'x', message: VENDOR_TEXT },
    });
    const r = await run('avm', { address: ADDRESS }, key);
    expect(r.status).toBe(http);
    expect(r.body).toMatchObject({ ok: false, charged_cents: 0, error: { code } });
    expect(r.text).not.toContain(VENDOR_TEXT);
    expect(await micros(accountId)).toBe(1_000_000);
  });

  it('[billing:charge-only-on-success] HTTP 200 whose body says statusCode 500 is a failure', async () => {
    const { accountId, key } = await t.account('1');
    fake.script({
      path: '/v1/PropertyParcel',
      status: 200,
      body: { statusCode: 500, statusMessage: VENDOR_TEXT, data: [] },
    });
    const r = await run('parcel', { address: ADDRESS }, key);
    expect(r.status).toBe(502);
    expect(r.body.error.code).toBe('upstream_error');
    expect(await micros(accountId)).toBe(1_000_000);
  });

  it('[billing:charge-only-on-success] an AVM that is not a number → 502 bad_response, uncharged', async () => {
    const { accountId, key } = await t.account('1');
    const data = { avm: 'n/a', avmMin: '1', avmMax: '2', confidence: '50' };
    fake.script({ path: '/v2/PropertyAvm', status: 200, body: { statusCode: 200, data } });
    const r = await run('avm', { address: ADDRESS }, key);
    expect(r.status).toBe(502);
    expect(r.body.error.code).toBe('bad_response');
    expect(await micros(accountId)).toBe(1_000_000);
  });

  it('[billing:charge-only-on-success] a confidence above 100 fails the output schema, uncharged', async () => {
    const { accountId, key } = await t.account('1');
    const data = { avm: '1', avmMin: '1', avmMax: '2', confidence: '101' };
    fake.script({ path: '/v2/PropertyAvm', status: 200, body: { statusCode: 200, data } });
    const r = await run('avm', { address: ADDRESS }, key);
    expect(r.status).toBe(502);
    expect(await micros(accountId)).toBe(1_000_000);
  });

  it('[billing:charge-only-on-success] timeout → 504 upstream_timeout, uncharged', async () => {
    const { accountId, key } = await t.account('1');
    fake.script({ path: '/v1/SkipTrace', status: 200, body: {}, delayMs: 2500 });
    const r = await run('skiptrace', { phone: '6095550100' }, key);
    expect(r.status).toBe(504);
    expect(r.body.error.code).toBe('upstream_timeout');
    expect(await micros(accountId)).toBe(1_000_000);
  });

  it('[catalog:constraints] [propdata:skiptrace-rules] invalid input → 400 naming the field; vendor not called, nothing held', async () => {
    const { accountId, key } = await t.account('1');
    const before = fake.requests.length;
    const r = await run('skiptrace', { address: '17 Topeka Pass' }, key);
    expect(r.status).toBe(400);
    expect(r.body.error.details.issues).toEqual([
      { path: 'zip', message: expect.stringContaining('city and state') },
    ]);
    expect(fake.requests.length).toBe(before);
    expect(await t.gw.ledger.transactions(accountId, 1)).toEqual([]);
  });
});

describe('descriptors', () => {
  it('[http:descriptor] [propdata:parcel-polygon] the free descriptor shows a passthrough body with strict polygon points', async () => {
    const r = await t.get('/api/run/propdata/parcel');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ price_cents: 20, strict: false, tool_name: 'propdata_parcel' });
    expect(r.body.input_schema.additionalProperties).not.toBe(false);
    expect(r.body.input_schema.properties.polygon).toMatchObject({
      minItems: 3,
      items: { additionalProperties: false, required: ['latitude', 'longitude'] },
    });
    const skip = await t.get('/api/run/propdata/skiptrace');
    expect(skip.body.description).toContain('only for owner outreach');
  });
});

describe('operator configuration and cancellation', () => {
  it('[http:not-configured] without TOLLGATE_REALESTATEAPI_API_KEY: 503 naming it, no hold, no record', async () => {
    const bare = await startGateway();
    try {
      const { accountId, key } = await bare.account('1');
      for (const [action, body] of [
        ['avm', { address: ADDRESS }],
        ['autocomplete', { search: '17 Topeka' }],
      ] as const) {
        const r = await bare.post(`/api/run/propdata/${action}`, body, { key });
        expect(r.status).toBe(503);
        expect(r.body).toMatchObject({ ok: false, charged_cents: 0, error: { code: 'not_configured' } });
        expect(r.body.error.message).toContain('TOLLGATE_REALESTATEAPI_API_KEY');
      }
      expect(await bare.gw.ledger.transactions(accountId, 5)).toEqual([]);
    } finally {
      await bare.close();
    }
  });

  it("the clients pass the caller's AbortSignal: an aborted call never reaches the vendor", async () => {
    const rc = await startFakeRentCast();
    const pool = createPool();
    try {
      const reapi = createRealEstateApiClient({
        baseUrl: fake.url,
        apiKey: REAPI_KEY,
        pool,
        timeoutMs: 5000,
      });
      const rentcast = createRentCastClient({
        baseUrl: rc.url,
        apiKey: RENTCAST_KEY,
        pool,
        timeoutMs: 5000,
      });
      const before = fake.requests.length;
      const signal = AbortSignal.abort(new Error('caller went away'));
      await expect(reapi.avm({ address: ADDRESS }, signal)).rejects.toThrow('caller went away');
      await expect(rentcast.marketStats({ zipCode: '78244' }, signal)).rejects.toThrow('caller went away');
      expect(fake.requests.length).toBe(before);
      expect(rc.requests).toEqual([]);
    } finally {
      await pool.close();
      await rc.close();
    }
  });
});
