import { GatewayError } from '../errors.js';
import type { UpstreamPool } from '../lib/upstream-pool.js';
import { classifyStatus, parseJson, sendRequest, type UpstreamResponse } from './http.js';

// RealEstateAPI.com (propdata). Every endpoint is a POST with a JSON body and an `x-api-key` header; answers
// come in an envelope { input, data, statusCode, statusMessage, credits, … }. Quirks handled here, so the
// handlers see clean data (docs/vendors.md §5):
// - "no result" arrives three ways: HTTP 404, a body statusCode of 404, or HTTP 200 with data.error === true
//   (or an errorMessage). All become our uncharged 404 resource_not_found.
// - AVM numbers (avm, avmMin, avmMax, confidence) are strings; they are returned as numbers.
// - Parcel geometry is WKT; it is returned as GeoJSON, as docs/spec.md §4.6 promises.

const VENDOR = 'RealEstateAPI';

export interface RealEstateApiOptions {
  /** e.g. https://api.realestateapi.com (no trailing slash). */
  baseUrl: string;
  apiKey: string;
  pool: UpstreamPool;
  timeoutMs: number;
}

/** A request body with the vendor's own field names. */
export type ReapiBody = Record<string, unknown>;
type Row = Record<string, unknown>;

export interface AvmResult extends Row {
  avm: number;
  avmMin: number;
  avmMax: number;
  confidence: number;
}

export interface SkipTraceResult {
  match: true;
  persons: Row[];
}

export interface RealEstateApiClient {
  autocomplete(body: ReapiBody, signal: AbortSignal): Promise<{ results: Row[] }>;
  propertyDetail(body: ReapiBody, signal: AbortSignal): Promise<Row>;
  avm(body: ReapiBody, signal: AbortSignal): Promise<AvmResult>;
  skiptrace(body: ReapiBody, signal: AbortSignal): Promise<SkipTraceResult>;
  parcel(
    body: ReapiBody,
    signal: AbortSignal,
  ): Promise<{ results: Row[]; resultCount?: number; resultIndex?: number }>;
}

export function createRealEstateApiClient(opts: RealEstateApiOptions): RealEstateApiClient {
  const base = opts.baseUrl.replace(/\/+$/, '');

  async function post(path: string, body: ReapiBody, signal: AbortSignal): Promise<Row> {
    const res = await sendRequest(opts.pool, VENDOR, {
      method: 'POST',
      url: `${base}${path}`,
      headers: { 'x-api-key': opts.apiKey },
      json: body,
      signal,
      timeoutMs: opts.timeoutMs,
    });
    if (res.status === 404) throw notFound(res);
    if (res.status < 200 || res.status >= 300) throw classifyStatus(VENDOR, res);
    const env = parseJson(VENDOR, res);
    if (!isRow(env)) throw badResponse(path, 'the envelope is not an object');
    // The body's statusCode is authoritative: some failures come back as HTTP 200.
    const code = env.statusCode;
    if (typeof code === 'number' && (code < 200 || code >= 300)) {
      throw code === 404 ? notFound(res) : classifyStatus(VENDOR, { ...res, status: code });
    }
    const data = env.data;
    if (
      typeof env.errorMessage === 'string' ||
      (isRow(data) && (data.error === true || typeof data.errorMessage === 'string'))
    ) {
      throw notFound(res);
    }
    return env;
  }

  return {
    async autocomplete(body, signal) {
      const { data } = await post('/v2/AutoComplete', body, signal);
      if (!Array.isArray(data)) throw badResponse('/v2/AutoComplete', 'data is not an array');
      if (data.length === 0) throw notFound(undefined);
      return { results: data.filter(isRow).map(coordinates) };
    },

    async propertyDetail(body, signal) {
      const { data } = await post('/v2/PropertyDetail', body, signal);
      if (!isRow(data)) throw badResponse('/v2/PropertyDetail', 'data is not an object');
      if (Object.keys(data).length === 0) throw notFound(undefined);
      return data;
    },

    async avm(body, signal) {
      const { data } = await post('/v2/PropertyAvm', body, signal);
      if (!isRow(data)) throw badResponse('/v2/PropertyAvm', 'data is not an object');
      // No value at all is "no valuation" (not charged); a value that is not a number is a broken answer.
      if (data.avm === undefined || data.avm === null || data.avm === '') throw notFound(undefined);
      const out: AvmResult = { ...data, avm: 0, avmMin: 0, avmMax: 0, confidence: 0 };
      for (const k of ['avm', 'avmMin', 'avmMax', 'confidence'] as const) {
        const n = toNumber(data[k]);
        if (n === undefined) throw badResponse('/v2/PropertyAvm', `${k} is not a number`);
        out[k] = n;
      }
      return out;
    },

    async skiptrace(body, signal) {
      const env = await post('/v1/SkipTrace', body, signal);
      if (env.match !== true || !isRow(env.output)) throw notFound(undefined);
      const { identity, demographics, relationships } = env.output;
      return {
        match: true,
        persons: [{ ...(isRow(identity) ? identity : {}), demographics, relationships }],
      };
    },

    async parcel(body, signal) {
      const env = await post('/v1/PropertyParcel', body, signal);
      const items = Array.isArray(env.data) ? env.data : isRow(env.data) ? [env.data] : undefined;
      if (!items) throw badResponse('/v1/PropertyParcel', 'data is neither an array nor an object');
      const results = items.filter(isRow).filter((r) => Object.keys(r).length > 0);
      if (results.length === 0) throw notFound(undefined);
      return {
        results: results.map((r) => parcelGeometry(coordinates(r))),
        resultCount: toNumber(env.resultCount),
        resultIndex: toNumber(env.resultIndex),
      };
    },
  };
}

function isRow(v: unknown): v is Row {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Numbers as the vendor sends them ("1249000", 88, "35.49") → number; absent or not numeric → undefined. */
export function toNumber(v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isFinite(v) ? v : undefined;
  if (typeof v !== 'string' || !/^\s*-?\d+(\.\d+)?\s*$/.test(v)) return undefined;
  return Number(v);
}

/** latitude/longitude arrive as strings in some answers; our output schemas promise numbers. */
function coordinates(r: Row): Row {
  const out = { ...r };
  for (const k of ['latitude', 'longitude'] as const) {
    if (typeof out[k] === 'string') out[k] = toNumber(out[k]) ?? null;
  }
  return out;
}

function parcelGeometry(r: Row): Row {
  const out = { ...r };
  for (const k of ['geometry', 'location'] as const) {
    const v = out[k];
    if (typeof v !== 'string') continue;
    const geo = toGeoJson(v);
    if (!geo) throw badResponse('/v1/PropertyParcel', `${k} is neither WKT nor GeoJSON`);
    out[k] = geo;
  }
  return out;
}

const NUM = String.raw`-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?`;
const PAIR = new RegExp(`(${NUM})\\s+(${NUM})`, 'g');

/**
 * WKT POINT / POLYGON / MULTIPOLYGON (or a GeoJSON string) → a GeoJSON geometry. The parenthesized lists become
 * JSON arrays ("(30 10, 40 40)" → [[30,10],[40,40]]), so nesting depth carries over unchanged.
 */
export function toGeoJson(text: string): Row | undefined {
  const t = text.trim();
  if (t.startsWith('{')) {
    try {
      const g: unknown = JSON.parse(t);
      return isRow(g) && typeof g.type === 'string' ? g : undefined;
    } catch {
      return undefined;
    }
  }
  const m = /^(POINT|POLYGON|MULTIPOLYGON)\s*(\(.*\))$/is.exec(t);
  if (!m?.[1] || !m[2]) return undefined;
  const json = m[2].replace(/\(/g, '[').replace(/\)/g, ']').replace(PAIR, '[$1,$2]');
  let coords: unknown;
  try {
    coords = JSON.parse(json);
  } catch {
    return undefined;
  }
  if (!Array.isArray(coords)) return undefined;
  switch (m[1].toUpperCase()) {
    case 'POINT':
      return { type: 'Point', coordinates: coords[0] };
    case 'POLYGON':
      return { type: 'Polygon', coordinates: coords };
    default:
      return { type: 'MultiPolygon', coordinates: coords };
  }
}

function notFound(res: UpstreamResponse | undefined): GatewayError {
  return new GatewayError(
    'resource_not_found',
    'No property could be confidently matched to the request; nothing was charged. Check the address or ' +
      'resolve it first with propdata/autocomplete.',
    { cause: res && { vendor: VENDOR, status: res.status, body: res.text.slice(0, 2000) } },
  );
}

function badResponse(path: string, why: string): GatewayError {
  return new GatewayError('bad_response', `${VENDOR} answered in an unexpected shape; nothing was charged.`, {
    cause: { vendor: VENDOR, path, why },
  });
}
