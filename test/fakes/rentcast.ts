import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

// A fake RentCast API v1 on 127.0.0.1 speaking its wire format (docs/vendors.md §4): GET only,
// `X-Api-Key`, bare JSON arrays from search endpoints, 404 `resource/not-found` when a search matches nothing,
// `{ status, error, message }` error bodies, range syntax '2:4' / '2|3' / '1500:*', a hard 20 requests/second.

// ---- plumbing shared with the RealEstateAPI fake -----------------------------------------------------------

export interface FakeRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: IncomingMessage['headers'];
  body: unknown;
}

/** A scripted answer that replaces the fake's own behaviour for the next matching request. */
export interface Scripted {
  path?: string;
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** Wait this long before answering (timeouts). */
  delayMs?: number;
}

export interface FakeServer {
  url: string;
  requests: FakeRequest[];
  /** The next request (to `path`, if given) gets this answer instead. */
  script(answer: Scripted): void;
  last(path?: string): FakeRequest | undefined;
  close(): Promise<void>;
}

export type Reply = { status: number; body: unknown; headers?: Record<string, string> };

export async function serveFake(handle: (req: FakeRequest) => Reply): Promise<FakeServer> {
  const requests: FakeRequest[] = [];
  const scripted: Scripted[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const send = (res: ServerResponse, r: Reply) => {
    res.writeHead(r.status, { 'content-type': 'application/json', ...r.headers });
    res.end(typeof r.body === 'string' ? r.body : JSON.stringify(r.body));
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const u = new URL(req.url ?? '/', 'http://fake');
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: unknown = raw;
      try {
        body = raw ? JSON.parse(raw) : undefined;
      } catch {
        // Left as text; the handler answers 400 like the vendor would.
      }
      const fr: FakeRequest = {
        method: req.method ?? 'GET',
        path: u.pathname,
        query: Object.fromEntries(u.searchParams),
        headers: req.headers,
        body,
      };
      requests.push(fr);
      const i = scripted.findIndex((s) => s.path === undefined || s.path === fr.path);
      const s = i >= 0 ? scripted.splice(i, 1)[0] : undefined;
      if (!s) return send(res, handle(fr));
      const t = setTimeout(() => {
        timers.delete(t);
        if (!res.destroyed) send(res, { status: s.status, body: s.body ?? '', headers: s.headers });
      }, s.delayMs ?? 0);
      timers.add(t);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    script: (a) => scripted.push(a),
    last: (path) => requests.filter((r) => path === undefined || r.path === path).at(-1),
    close: () =>
      new Promise((r) => {
        for (const t of timers) clearTimeout(t);
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

// ---- RentCast ------------------------------------------------------------------------------------------

export const RENTCAST_KEY = 'rc-test-key';

type Prop = Record<string, string | number | null>;

const prop = (n: number, street: string, city: string, state: string, zip: string, extra: Prop): Prop => ({
  id: `${n}-${street.replace(/ /g, '-')},-${city.replace(/ /g, '-')},-${state}-${zip}`,
  formattedAddress: `${n} ${street}, ${city}, ${state} ${zip}`,
  addressLine1: `${n} ${street}`,
  addressLine2: null,
  city,
  state,
  zipCode: zip,
  county: city === 'Austin' ? 'Travis' : 'Bexar',
  ...extra,
});

export const PROPERTIES: Prop[] = [
  prop(5500, 'Grand Lake Dr', 'San Antonio', 'TX', '78244', {
    latitude: 29.475962,
    longitude: -98.351442,
    propertyType: 'Single Family',
    bedrooms: 3,
    bathrooms: 2,
    squareFootage: 1878,
    lotSize: 8843,
    yearBuilt: 1973,
    lastSalePrice: 185000,
    price: 229900,
  }),
  prop(5510, 'Grand Lake Dr', 'San Antonio', 'TX', '78244', {
    latitude: 29.4762,
    longitude: -98.3511,
    propertyType: 'Single Family',
    bedrooms: 4,
    bathrooms: 2,
    squareFootage: 1747,
    lotSize: 6316,
    yearBuilt: 1986,
    lastSalePrice: 205000,
    price: 1650,
  }),
  prop(1200, 'Barton Springs Rd', 'Austin', 'TX', '78704', {
    latitude: 30.2616,
    longitude: -97.7603,
    propertyType: 'Condo',
    bedrooms: 2,
    bathrooms: 2,
    squareFootage: 1100,
    lotSize: null,
    yearBuilt: 2009,
    lastSalePrice: 410000,
    price: 2400,
  }),
];

const err = (status: number, error: string, message: string): Reply => ({
  status,
  body: { status, error, message },
});

/** RentCast ranges: "3", "2|3", "2:4", "1500:*". */
function inRange(value: unknown, spec: string): boolean {
  if (typeof value !== 'number') return false;
  return spec.split('|').some((part) => {
    const [lo, hi] = part.includes(':') ? part.split(':') : [part, part];
    return (lo === '*' || value >= Number(lo)) && (hi === '*' || value <= Number(hi));
  });
}

function milesBetween(a: [number, number], b: [number, number]): number {
  const dLat = (a[0] - b[0]) * 69;
  const dLon = (a[1] - b[1]) * 69 * Math.cos((a[0] * Math.PI) / 180);
  return Math.hypot(dLat, dLon);
}

function search(q: Record<string, string>, rows: Prop[]): Reply {
  const limit = q.limit === undefined ? 50 : Number(q.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 500) {
    return err(400, 'resource/bad-request', 'limit must be an integer between 1 and 500');
  }
  const found = rows.filter((p) => {
    if (q.address && String(p.formattedAddress).toLowerCase() !== q.address.toLowerCase()) return false;
    if (q.zipCode && p.zipCode !== q.zipCode) return false;
    if (q.city && p.city !== q.city) return false;
    if (q.state && p.state !== q.state) return false;
    if (q.latitude && q.longitude) {
      const d = milesBetween(
        [Number(q.latitude), Number(q.longitude)],
        [Number(p.latitude), Number(p.longitude)],
      );
      if (d > Number(q.radius ?? 5)) return false;
    }
    if (q.propertyType && !q.propertyType.split('|').includes(String(p.propertyType))) return false;
    for (const f of ['bedrooms', 'bathrooms', 'squareFootage', 'yearBuilt', 'price'] as const) {
      if (q[f] !== undefined && !inRange(p[f], q[f])) return false;
    }
    return true;
  });
  const offset = Number(q.offset ?? 0);
  const page = found.slice(offset, offset + limit);
  if (page.length === 0) return err(404, 'resource/not-found', 'No results found for the provided search');
  return { status: 200, body: page, headers: { 'x-limit': String(limit), 'x-offset': String(offset) } };
}

function estimate(q: Record<string, string>, kind: 'price' | 'rent'): Reply {
  if (!q.address && !(q.latitude && q.longitude)) {
    return err(400, 'resource/bad-request', 'Either address or latitude/longitude parameters are required');
  }
  if (q.address && !/,.*\d{5}/.test(q.address)) {
    return err(
      400,
      'resource/bad-request',
      `The provided address "${q.address}" could not be parsed or geolocated`,
    );
  }
  const compCount = Number(q.compCount ?? 15);
  if (compCount < 5 || compCount > 25) return err(400, 'resource/bad-request', 'compCount must be 5-25');
  if (kind === 'rent' && q.propertyType === 'Land') {
    return err(400, 'resource/bad-request', 'Rent estimates are not supported for the Land property type');
  }
  const base = kind === 'price' ? 221000 : 1650;
  const comparables = PROPERTIES.slice(0, compCount).map((p, i) => ({
    ...p,
    price: kind === 'price' ? base + i * 5000 : base + i * 50,
    distance: 0.2994 + i,
    daysOld: 127,
    correlation: 0.9822 - i / 100,
  }));
  return {
    status: 200,
    body: {
      [kind]: base,
      [`${kind}RangeLow`]: Math.round(base * 0.94),
      [`${kind}RangeHigh`]: Math.round(base * 1.06),
      latitude: 29.475962,
      longitude: -98.351442,
      comparables,
    },
  };
}

function markets(q: Record<string, string>): Reply {
  if (!q.zipCode) return err(400, 'resource/bad-request', 'zipCode is required');
  if (!PROPERTIES.some((p) => p.zipCode === q.zipCode)) {
    return err(404, 'resource/not-found', 'No market data found for the provided zip code');
  }
  const dataType = q.dataType ?? 'All';
  const months = Number(q.historyRange ?? 12);
  const history = Object.fromEntries(
    Array.from({ length: Math.min(months, 3) }, (_, i) => [`2025-0${i + 1}`, { date: `2025-0${i + 1}-01` }]),
  );
  return {
    status: 200,
    body: {
      id: q.zipCode,
      zipCode: q.zipCode,
      ...(dataType !== 'Rental' && { saleData: { averagePrice: 221000, medianPrice: 215000, history } }),
      ...(dataType !== 'Sale' && { rentalData: { averageRent: 1650, medianRent: 1600, history } }),
    },
  };
}

export async function startFakeRentCast(opts: { apiKey?: string; perSecond?: number } = {}) {
  const key = opts.apiKey ?? RENTCAST_KEY;
  const perSecond = opts.perSecond ?? 20;
  let second = 0;
  let count = 0;
  return serveFake((req) => {
    if (req.method !== 'GET') return err(405, 'resource/method-not-allowed', 'Method not allowed');
    if (req.headers['x-api-key'] !== key) return err(401, 'auth/api-key-invalid', 'Invalid API key');
    const now = Math.floor(Date.now() / 1000);
    count = now === second ? count + 1 : 1;
    second = now;
    if (count > perSecond) return err(429, 'auth/rate-limit-exceeded', 'Rate limit exceeded');
    const q = req.query;
    switch (req.path) {
      case '/properties':
        return search(q, PROPERTIES);
      case '/listings/sale':
      case '/listings/rental/long-term': {
        const status = q.status ?? 'Active';
        return search(q, status === 'Active' ? PROPERTIES.map((p) => ({ ...p, status })) : []);
      }
      case '/avm/value':
        return estimate(q, 'price');
      case '/avm/rent/long-term':
        return estimate(q, 'rent');
      case '/markets':
        return markets(q);
      default:
        return err(404, 'resource/not-found', 'Not found');
    }
  });
}
