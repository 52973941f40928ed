import { z } from 'zod';
import { GatewayError } from '../errors.js';
import type { UpstreamPool } from '../lib/upstream-pool.js';
import { classifyStatus, parseJson, sendRequest, type UpstreamResponse } from './http.js';

// RentCast API v1 (propstats). Every endpoint is a GET with query parameters and an `X-Api-Key` header.
// Search endpoints answer a bare JSON array, and 404 when nothing matches; the AVMs answer an object.
// The wire format is in docs/vendors.md §4.

const VENDOR = 'RentCast';

export interface RentCastOptions {
  /** e.g. https://api.rentcast.io/v1 (no trailing slash). */
  baseUrl: string;
  apiKey: string;
  pool: UpstreamPool;
  timeoutMs: number;
}

/** Query parameters exactly as RentCast names them. */
export type RentCastQuery = Record<string, string | number | boolean | undefined>;

type Row = Record<string, unknown>;

export interface ValueEstimate extends Row {
  price: number;
  priceRangeLow: number;
  priceRangeHigh: number;
  comparables: Row[];
}

export interface RentEstimate extends Row {
  rent: number;
  rentRangeLow: number;
  rentRangeHigh: number;
  comparables: Row[];
}

export interface MarketStats extends Row {
  zipCode: string;
}

export interface RentCastClient {
  properties(query: RentCastQuery, signal: AbortSignal): Promise<Row[]>;
  valueEstimate(query: RentCastQuery, signal: AbortSignal): Promise<ValueEstimate>;
  rentEstimate(query: RentCastQuery, signal: AbortSignal): Promise<RentEstimate>;
  saleListings(query: RentCastQuery, signal: AbortSignal): Promise<Row[]>;
  rentalListings(query: RentCastQuery, signal: AbortSignal): Promise<Row[]>;
  marketStats(query: RentCastQuery, signal: AbortSignal): Promise<MarketStats>;
}

const row = z.looseObject({});
const rows = z.array(row);
const comparables = z
  .array(row)
  .nullish()
  .transform((c) => c ?? []);
const valueEstimate = z.looseObject({
  price: z.number(),
  priceRangeLow: z.number(),
  priceRangeHigh: z.number(),
  comparables,
});
const rentEstimate = z.looseObject({
  rent: z.number(),
  rentRangeLow: z.number(),
  rentRangeHigh: z.number(),
  comparables,
});
const marketStats = z.looseObject({ zipCode: z.string() });

export function createRentCastClient(opts: RentCastOptions): RentCastClient {
  const base = opts.baseUrl.replace(/\/+$/, '');

  async function get<T>(path: string, query: RentCastQuery, signal: AbortSignal, schema: z.ZodType<T>) {
    const res = await sendRequest(opts.pool, VENDOR, {
      method: 'GET',
      url: `${base}${path}`,
      headers: { 'x-api-key': opts.apiKey },
      query,
      signal,
      timeoutMs: opts.timeoutMs,
    });
    if (res.status === 404) throw noResults(res);
    if (res.status < 200 || res.status >= 300) throw classifyStatus(VENDOR, res);
    const parsed = schema.safeParse(parseJson(VENDOR, res));
    if (!parsed.success) {
      throw new GatewayError(
        'bad_response',
        `${VENDOR} answered in an unexpected shape; nothing was charged.`,
        {
          cause: { vendor: VENDOR, path, issues: parsed.error.issues.slice(0, 5) },
        },
      );
    }
    return parsed.data;
  }

  /** Search endpoints: an empty array is the same "no results" as RentCast's 404. */
  async function search(path: string, query: RentCastQuery, signal: AbortSignal): Promise<Row[]> {
    const found = await get(path, query, signal, rows);
    if (found.length === 0) throw noResults(undefined);
    return found;
  }

  return {
    properties: (q, signal) => search('/properties', q, signal),
    valueEstimate: (q, signal) => get('/avm/value', q, signal, valueEstimate),
    rentEstimate: (q, signal) => get('/avm/rent/long-term', q, signal, rentEstimate),
    saleListings: (q, signal) => search('/listings/sale', q, signal),
    rentalListings: (q, signal) => search('/listings/rental/long-term', q, signal),
    marketStats: (q, signal) => get('/markets', q, signal, marketStats),
  };
}

/**
 * RentCast answers 404 when a search matches nothing or an address has no record. Like every upstream 4xx it
 * is not charged (docs/spec.md §7 rule 1); the caller gets our 404 resource_not_found, not a 422.
 */
function noResults(res: UpstreamResponse | undefined): GatewayError {
  return new GatewayError(
    'resource_not_found',
    'No property data matched the request; nothing was charged. Widen the search or check the address.',
    { cause: res && { vendor: VENDOR, status: res.status, body: res.text.slice(0, 2000) } },
  );
}
