import { z } from 'zod';
import { GatewayError } from '../errors.js';
import { retryAfterSeconds, type UpstreamResponse } from './http.js';
import { type VendorClientOptions, vendorJson } from './scraper-common.js';

// scraperB → fastCRW native /v1 (docs/vendors.md §2). Our scraperB parameters are fastCRW's, so bodies
// pass through. Its documented billing rule — refund on 4xx, 5xx or `success: false` — is exactly ours.

const VENDOR = 'fastCRW';

const scrapeRes = z.looseObject({ data: z.looseObject({}) });
const startRes = z.looseObject({ id: z.string().min(1) });
const mapRes = z.looseObject({ data: z.looseObject({ links: z.array(z.string()) }) });
const searchRes = z.looseObject({
  data: z.union([z.array(z.looseObject({})), z.looseObject({ results: z.unknown() }), z.looseObject({})]),
});
const crawlStatusRes = z.looseObject({
  status: z.enum(['scraping', 'completed', 'failed', 'cancelled']),
  total: z.number().int().nonnegative().default(0),
  completed: z.number().int().nonnegative().default(0),
  data: z.array(z.looseObject({})).default([]),
});
const extractResult = z.looseObject({
  url: z.string(),
  status: z.string(),
  data: z.unknown().optional(),
  error: z.string().optional(),
});
const extractRes = z.union([
  z.looseObject({ results: z.array(extractResult), status: z.string().optional() }),
  z.looseObject({ id: z.string().min(1), status: z.string() }),
]);
const extractStatusRes = z.looseObject({
  status: z.enum(['processing', 'cancelling', 'completed', 'failed', 'cancelled']),
  results: z.array(extractResult).default([]),
});

export type FastcrwExtractResult = z.output<typeof extractResult>;

export interface FastcrwClient {
  scrape(body: Record<string, unknown>, signal: AbortSignal): Promise<Record<string, unknown>>;
  search(body: Record<string, unknown>, signal: AbortSignal): Promise<unknown>;
  map(body: Record<string, unknown>, signal: AbortSignal): Promise<string[]>;
  crawlStart(body: Record<string, unknown>, signal: AbortSignal): Promise<string>;
  crawlStatus(
    id: string,
    signal: AbortSignal,
  ): Promise<{
    status: 'scraping' | 'completed' | 'failed' | 'cancelled';
    total: number;
    completed: number;
    data: Array<Record<string, unknown>>;
  }>;
  /** Synchronous when the managed endpoint answers inline; `{ id }` when it went async. */
  extract(
    body: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<{ results: FastcrwExtractResult[] } | { id: string }>;
  extractStatus(
    id: string,
    signal: AbortSignal,
  ): Promise<{
    status: 'processing' | 'cancelling' | 'completed' | 'failed' | 'cancelled';
    results: FastcrwExtractResult[];
  }>;
}

/**
 * fastCRW's 429 has three causes told apart only by headers: a rate or concurrency limit (retry later), or the
 * gateway's credits being exhausted (do not retry: it is the operator's problem), as is its 402.
 */
function classify(res: UpstreamResponse): GatewayError | undefined {
  if (res.status !== 429) return undefined;
  const credits = res.headers['x-fastcrw-credits-available'];
  if (credits !== undefined && Number(credits) <= 0) {
    return new GatewayError(
      'upstream_unavailable',
      `${VENDOR} refused the gateway's account (out of credit); the operator has been alerted. Nothing was charged.`,
      { cause: { vendor: VENDOR, status: 429, body: res.text.slice(0, 2000) }, retryAfterSeconds: 60 },
    );
  }
  return new GatewayError(
    'upstream_busy',
    `${VENDOR} is rate-limiting the gateway; retry later. Nothing was charged.`,
    {
      cause: { vendor: VENDOR, status: 429 },
      retryAfterSeconds: retryAfterSeconds(res.headers) ?? 5,
    },
  );
}

export function createFastcrwClient(opts: VendorClientOptions): FastcrwClient {
  const api = vendorJson(VENDOR, opts, classify);
  return {
    scrape: async (body, signal) => (await api.post('/v1/scrape', scrapeRes, body, signal)).data,
    async search(body, signal) {
      const data = (await api.post('/v1/search', searchRes, body, signal)).data;
      // Self-hosted builds wrap the hits in `data.results`; the hosted API puts them in `data`.
      return !Array.isArray(data) && 'results' in data ? data.results : data;
    },
    map: async (body, signal) => (await api.post('/v1/map', mapRes, body, signal)).data.links,
    crawlStart: async (body, signal) => (await api.post('/v1/crawl', startRes, body, signal, 30_000)).id,
    async crawlStatus(id, signal) {
      const s = await api.status(`/v1/crawl/${encodeURIComponent(id)}`, crawlStatusRes, signal);
      return { status: s.status, total: s.total, completed: s.completed, data: s.data };
    },
    async extract(body, signal) {
      const s = (await api.post('/v1/extract', extractRes, body, signal)) as {
        results?: FastcrwExtractResult[];
        id?: string;
      };
      return s.results !== undefined ? { results: s.results } : { id: s.id as string };
    },
    async extractStatus(id, signal) {
      const s = await api.status(`/v1/extract/${encodeURIComponent(id)}`, extractStatusRes, signal);
      return { status: s.status, results: s.results };
    },
  };
}
