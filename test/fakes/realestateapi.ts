import { type FakeRequest, type Reply, serveFake } from './rentcast.js';

// A fake RealEstateAPI.com on 127.0.0.1 speaking its wire format (docs/vendors.md §5): POST JSON with
// `x-api-key`, the { input, data, statusCode, statusMessage, credits, live } envelope, AVM numbers as strings,
// AVM "not confidently matched" as HTTP 404, PropertyDetail "no result" as HTTP 200 with data.error === true,
// SkipTrace v1 with match: false, parcel geometry as WKT, and Joi-style 400 validation bodies.

export const REAPI_KEY = 'reapi-test-key';

interface Home {
  id: number;
  house: string;
  street: string;
  city: string;
  state: string;
  zip: string;
  county: string;
  apn: string;
  fips: string;
  lat: number;
  lon: number;
}

export const HOMES: Home[] = [
  {
    id: 186077,
    house: '17',
    street: 'Topeka Pass',
    city: 'Willingboro',
    state: 'NJ',
    zip: '08046',
    county: 'Burlington',
    apn: '38-00803-00017',
    fips: '34005',
    lat: 40.0312,
    lon: -74.8801,
  },
  {
    id: 24334491,
    house: '2505',
    street: 'NW 28th St',
    city: 'Oklahoma City',
    state: 'OK',
    zip: '73107',
    county: 'Oklahoma',
    apn: '06-790-4400',
    fips: '40109',
    lat: 35.497951,
    lon: -97.556967,
  },
];

const full = (h: Home) => `${h.house} ${h.street}, ${h.city}, ${h.state} ${h.zip}`;
const norm = (s: unknown) =>
  String(s)
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '');

const envelope = (input: unknown, data: unknown, extra: Record<string, unknown> = {}): Reply => ({
  status: 200,
  body: {
    input,
    data,
    statusCode: 200,
    statusMessage: 'Success',
    credits: 1,
    live: true,
    requestExecutionTimeMS: '83ms',
    ...extra,
  },
});

const invalid = (message: string): Reply => ({
  status: 400,
  body: { statusCode: 400, error: 'Bad Request', message, validation: { source: 'payload', keys: [''] } },
});

type Body = Record<string, unknown>;

/** Exact lookup: id, full address, house+street(+zip), apn+fips. */
function lookup(b: Body): { home: Home; exact: boolean } | undefined {
  for (const h of HOMES) {
    if (b.id !== undefined && Number(b.id) === h.id) return { home: h, exact: true };
    if (b.address !== undefined && norm(b.address) === norm(full(h))) return { home: h, exact: true };
    if (b.house === h.house && b.street === h.street && (b.zip === undefined || b.zip === h.zip)) {
      return { home: h, exact: true };
    }
    if (b.apn === h.apn && b.fips === h.fips) return { home: h, exact: true };
  }
  // Fuzzy: the same house number and street with a different city or zip.
  const h = HOMES.find(
    (x) => typeof b.address === 'string' && norm(b.address).startsWith(norm(`${x.house} ${x.street}`)),
  );
  return h ? { home: h, exact: false } : undefined;
}

function autocomplete(b: Body): Reply {
  if (typeof b.search !== 'string' || b.search.length < 3) {
    return invalid('"search" length must be at least 3 characters long');
  }
  const types = Array.isArray(b.search_types) ? b.search_types : undefined;
  const data = HOMES.filter((h) => norm(full(h)).includes(norm(b.search)))
    .filter(() => !types || types.includes('A'))
    .map((h) => ({
      id: String(h.id),
      title: full(h),
      searchType: 'A',
      address: full(h),
      street: h.street,
      city: h.city,
      state: h.state,
      zip: h.zip,
      county: h.county,
      fips: h.fips,
      apn: h.apn,
      latitude: String(h.lat),
      longitude: String(h.lon),
    }));
  return envelope(b, data, { credits: 0, totalResults: data.length, returnedResults: data.length });
}

function detail(b: Body): Reply {
  if (!['id', 'address', 'house', 'apn'].some((k) => b[k] !== undefined)) {
    return invalid('"PropertyDetailRequest" must contain at least one of [id, address, house, apn]');
  }
  const m = lookup(b);
  if (!m || (b.exact_match === true && !m.exact)) {
    return envelope(
      b,
      { error: true, errorMessage: 'No results found for the provided input.' },
      { credits: 0 },
    );
  }
  const h = m.home;
  return envelope(b, {
    id: h.id,
    propertyType: 'SFR',
    estimatedValue: 312000,
    estimatedEquity: 120500,
    ownerOccupied: true,
    ownerInfo: { owner1FullName: 'Jane Owner', mailAddress: { address: full(h) } },
    propertyInfo: { address: { label: full(h) }, bedrooms: 3, bathrooms: 2, livingSquareFeet: 1450 },
    lotInfo: { apn: h.apn, lotSquareFeet: 7405 },
    taxInfo: { assessedValue: 201000, taxAmount: '5630.12' },
    saleHistory: [{ saleDate: '2015-06-01', saleAmount: 185000 }],
    mortgageHistory: [],
    ...(b.prior_owner === true && { priorOwner: { fullName: 'Prior Owner' } }),
  });
}

function avm(b: Body): Reply {
  const m = b.id === undefined && b.address === undefined ? undefined : lookup(b);
  if (!m || (b.strict === true && !m.exact)) {
    return {
      status: 404,
      body: {
        input: b,
        data: {},
        errorMessage: 'Unable to confidently match input address to property record.',
        statusCode: 404,
        statusMessage: 'Not Found',
      },
    };
  }
  const h = m.home;
  return envelope(b, {
    id: String(h.id),
    apn: h.apn,
    fips: h.fips,
    avm: '312000',
    avmMin: '289000',
    avmMax: '335000',
    confidence: '88',
    address: `${h.house} ${h.street}`,
    city: h.city,
    state: h.state,
    zip: h.zip,
    label: full(h),
    lastUpdateDate: '2025-01-15',
  });
}

function skiptrace(b: Body): Reply {
  const hasAddress =
    b.address !== undefined && (b.zip !== undefined || (b.city !== undefined && b.state !== undefined));
  if (
    !hasAddress &&
    b.mail_address === undefined &&
    b.phone === undefined &&
    b.email === undefined &&
    b.last_name === undefined
  ) {
    return invalid(
      '"SkipTraceRequest" must contain an address, a mailing address, a name, a phone or an email',
    );
  }
  const home =
    HOMES.find((h) => norm(b.address) === norm(`${h.house} ${h.street}`)) ??
    (b.phone === '6095550100' ? HOMES[0] : undefined);
  const base = {
    requestId: 'st-1',
    requestDate: '2025-01-15',
    warnings: [],
    input: b,
    statusCode: 200,
    statusMessage: 'Success',
    live: true,
  };
  if (!home) {
    return {
      status: 200,
      body: { ...base, responseCode: 1, responseMessage: 'No match', match: false, credits: 0 },
    };
  }
  return {
    status: 200,
    body: {
      ...base,
      responseCode: 0,
      responseMessage: 'Successful',
      match: true,
      cached: false,
      credits: 10,
      output: {
        identity: {
          names: [{ firstName: 'Jane', lastName: 'Owner', fullName: 'Jane Owner' }],
          address: { formattedAddress: full(home) },
          addressHistory: [{ formattedAddress: '9 Old Rd, Trenton, NJ 08608' }],
          phones: [
            {
              phone: '6095550100',
              phoneDisplay: '(609) 555-0100',
              isConnected: true,
              doNotCall: true,
              phoneType: 'mobile',
              carrier: 'Example Wireless',
            },
          ],
          emails: [{ email: 'jane.owner@example.com', emailType: 'personal' }],
        },
        demographics: { age: 54, gender: 'F', dob: '1971-03-02' },
        relationships: [{ name: 'John Owner', type: 'spouse' }],
        stats: { phoneNumbers: 1, emailAddresses: 1 },
      },
    },
  };
}

function parcel(b: Body): Reply {
  const size = b.size === undefined ? 10 : Number(b.size);
  if (!Number.isInteger(size) || size < 1 || size > 25) return invalid('"size" must be between 1 and 25');
  if (
    Array.isArray(b.polygon) &&
    b.polygon.some((p: Body) => typeof p?.lat !== 'number' || typeof p?.lon !== 'number')
  ) {
    return invalid('"polygon[0].lat" is required');
  }
  if (b.id !== undefined && typeof b.id !== 'number') return invalid('"id" must be a number');
  let homes: Home[];
  if (b.latitude !== undefined && b.longitude !== undefined) {
    const r = Number(b.radius ?? 0.05);
    homes = HOMES.filter(
      (h) => Math.hypot(h.lat - Number(b.latitude), h.lon - Number(b.longitude)) * 69 <= r,
    );
  } else if (Array.isArray(b.polygon)) {
    const lats = b.polygon.map((p: Body) => Number(p.lat));
    const lons = b.polygon.map((p: Body) => Number(p.lon));
    homes = HOMES.filter(
      (h) =>
        h.lat >= Math.min(...lats) &&
        h.lat <= Math.max(...lats) &&
        h.lon >= Math.min(...lons) &&
        h.lon <= Math.max(...lons),
    );
  } else {
    const m = lookup(b);
    homes = m?.exact ? [m.home] : [];
  }
  const start = Number(b.resultIndex ?? 0);
  const data = homes.slice(start, start + size).map((h) => {
    const [x, y] = [h.lon, h.lat];
    const d = 0.0002;
    return {
      id: h.id,
      apn: h.apn,
      fips: h.fips,
      latitude: String(y),
      longitude: String(x),
      location: `POINT(${x} ${y})`,
      geometry: `POLYGON((${x - d} ${y - d}, ${x + d} ${y - d}, ${x + d} ${y + d}, ${x - d} ${y + d}, ${x - d} ${y - d}))`,
      acreage: 0.17,
      landUse: 'Single Family Residence',
    };
  });
  return envelope(b, data, { resultCount: homes.length, resultIndex: start });
}

const routes: Record<string, (b: Body) => Reply> = {
  '/v2/AutoComplete': autocomplete,
  '/v2/PropertyDetail': detail,
  '/v2/PropertyAvm': avm,
  '/v1/SkipTrace': skiptrace,
  '/v1/PropertyParcel': parcel,
};

export async function startFakeRealEstateApi(opts: { apiKey?: string } = {}) {
  const key = opts.apiKey ?? REAPI_KEY;
  return serveFake((req: FakeRequest) => {
    if (req.headers['x-api-key'] !== key) {
      return {
        status: 401,
        body: { statusCode: 401, error: 'Unauthorized Request', message: 'x-api-key must be valid' },
      };
    }
    const route = routes[req.path];
    if (req.method !== 'POST' || !route) return { status: 404, body: { message: 'Not Found' } };
    if (
      !String(req.headers['content-type']).startsWith('application/json') ||
      typeof req.body !== 'object' ||
      req.body === null
    ) {
      return invalid('"value" must be of type object');
    }
    return route(req.body as Body);
  });
}
