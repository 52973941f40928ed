import { z } from 'zod';
import { expectShape, jsonCaller, type VendorClientOptions } from './scraper-common.js';

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
  const call = jsonCaller(VENDOR, opts);
  const shape = <T extends z.ZodType>(path: string, schema: T, body: unknown) =>
    expectShape(VENDOR, opts.log, path, schema, body);

  return {
    async scrape(body, signal) {
      const { body: res } = await call({ method: 'POST', path: '/v1/scrape', json: body, signal });
      return shape('/v1/scrape', scrapeRes, res).data;
    },
    async crawlStart(body, signal) {
      const { body: res } = await call({
        method: 'POST',
        path: '/v1/crawl',
        json: body,
        signal,
        timeoutMs: 30_000,
      });
      return shape('/v1/crawl', startRes, res).id;
    },
    async crawlStatus(id, skip, signal) {
      const path = `/v1/crawl/${encodeURIComponent(id)}`;
      const { body: res } = await call({
        method: 'GET',
        path,
        query: { skip },
        signal,
        timeoutMs: 30_000,
        allowDeclaredFailure: true,
      });
      const s = shape(path, crawlStatusRes, res);
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
    async map(body, signal) {
      const { body: res } = await call({ method: 'POST', path: '/v1/map', json: body, signal });
      return shape('/v1/map', mapRes, res).links;
    },
    async search(body, signal) {
      const { body: res } = await call({ method: 'POST', path: '/v1/search', json: body, signal });
      return shape('/v1/search', searchRes, res).data;
    },
    async extractStart(body, signal) {
      const { body: res } = await call({
        method: 'POST',
        path: '/v1/extract',
        json: body,
        signal,
        timeoutMs: 30_000,
      });
      return shape('/v1/extract', startRes, res).id;
    },
    async extractStatus(id, signal) {
      const path = `/v1/extract/${encodeURIComponent(id)}`;
      const { body: res } = await call({
        method: 'GET',
        path,
        signal,
        timeoutMs: 30_000,
        allowDeclaredFailure: true,
      });
      const s = shape(path, extractStatusRes, res);
      return { status: s.status, data: s.data };
    },
  };
}
