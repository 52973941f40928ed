import { z } from 'zod';
import { type VendorClientOptions, vendorJson } from './scraper-common.js';

// scraperA → Firecrawl v1 (docs/vendors.md §1). Our scraperA parameters are Firecrawl's, so bodies pass
// through; what comes back is checked against the shape below and handed on without the vendor's own text.

const VENDOR = 'Firecrawl';

const page = z.looseObject({ metadata: z.looseObject({}).optional() });
const scrapeRes = z.looseObject({ data: page });
const startRes = z.looseObject({ id: z.string().min(1) });
const crawlStatusRes = z.looseObject({
  status: z.enum(['scraping', 'completed', 'failed', 'cancelled']),
  total: z.number().int().nonnegative().default(0),
  completed: z.number().int().nonnegative().default(0),
  next: z.string().nullish(),
  data: z.array(page).default([]),
});
const mapRes = z.looseObject({ links: z.array(z.string()) });
const searchRes = z.looseObject({ data: z.array(z.looseObject({})) });
const extractStatusRes = z.looseObject({
  status: z.enum(['processing', 'completed', 'failed', 'cancelled']),
  data: z.unknown().optional(),
});

export interface FirecrawlCrawlStatus {
  status: 'scraping' | 'completed' | 'failed' | 'cancelled';
  total: number;
  completed: number;
  data: Array<Record<string, unknown>>;
  /** Firecrawl pages its status by `skip`; the next page's skip when there is more. */
  nextSkip?: number;
}

export interface FirecrawlClient {
  scrape(body: Record<string, unknown>, signal: AbortSignal): Promise<Record<string, unknown>>;
  crawlStart(body: Record<string, unknown>, signal: AbortSignal): Promise<string>;
  crawlStatus(id: string, skip: number | undefined, signal: AbortSignal): Promise<FirecrawlCrawlStatus>;
  map(body: Record<string, unknown>, signal: AbortSignal): Promise<string[]>;
  search(body: Record<string, unknown>, signal: AbortSignal): Promise<Array<Record<string, unknown>>>;
  extractStart(body: Record<string, unknown>, signal: AbortSignal): Promise<string>;
  extractStatus(
    id: string,
    signal: AbortSignal,
  ): Promise<{ status: 'processing' | 'completed' | 'failed' | 'cancelled'; data: unknown }>;
}

export function createFirecrawlClient(opts: VendorClientOptions): FirecrawlClient {
  const api = vendorJson(VENDOR, opts);
  return {
    scrape: async (body, signal) => (await api.post('/v1/scrape', scrapeRes, body, signal)).data,
    crawlStart: async (body, signal) => (await api.post('/v1/crawl', startRes, body, signal, 30_000)).id,
    async crawlStatus(id, skip, signal) {
      const s = await api.status(`/v1/crawl/${encodeURIComponent(id)}`, crawlStatusRes, signal, { skip });
      const out: FirecrawlCrawlStatus = {
        status: s.status,
        total: s.total,
        completed: s.completed,
        data: s.data,
      };
      const next = s.next ? Number(new URL(s.next, 'http://x').searchParams.get('skip')) : Number.NaN;
      if (Number.isSafeInteger(next) && next > 0) out.nextSkip = next;
      return out;
    },
    map: async (body, signal) => (await api.post('/v1/map', mapRes, body, signal)).links,
    search: async (body, signal) => (await api.post('/v1/search', searchRes, body, signal)).data,
    extractStart: async (body, signal) => (await api.post('/v1/extract', startRes, body, signal, 30_000)).id,
    async extractStatus(id, signal) {
      const s = await api.status(`/v1/extract/${encodeURIComponent(id)}`, extractStatusRes, signal);
      return { status: s.status, data: s.data };
    },
  };
}
