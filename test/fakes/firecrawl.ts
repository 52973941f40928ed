import { randomUUID } from 'node:crypto';
import { type FakeRequest, type FakeServer, type Reply, serveFake } from './rentcast.js';

// A fake Firecrawl v1 on 127.0.0.1 speaking its wire format (docs/vendors.md §1): Bearer key,
// `{ success, data }` envelopes, async crawl and extract jobs that advance one step per poll, crawl status paged
// with `next` (…?skip=N), `success: false` bodies, 402/408/429/500 errors with Firecrawl's own texts.
// Magic words in the target URL (or query/prompt) pick a failure: fail-400, success-false, rate-limit,
// server-error, timeout-408, no-credit.

export const FIRECRAWL_KEY = 'fc-test-key';
/** Vendor text that must never reach a caller. */
export const FIRECRAWL_SECRET_TEXT = 'FIRECRAWL-INTERNAL: engine pool exhausted';

interface Job {
  polls: number;
  pages: number;
  body: Record<string, unknown>;
  kind: 'crawl' | 'extract';
}

function failure(text: string): Reply | undefined {
  if (text.includes('fail-400'))
    return { status: 400, body: { success: false, error: `Bad Request: ${FIRECRAWL_SECRET_TEXT}` } };
  if (text.includes('success-false'))
    return { status: 200, body: { success: false, error: FIRECRAWL_SECRET_TEXT } };
  if (text.includes('rate-limit')) {
    return {
      status: 429,
      body: { error: `Request rate limit exceeded. ${FIRECRAWL_SECRET_TEXT}` },
      headers: { 'retry-after': '7' },
    };
  }
  if (text.includes('server-error')) {
    return {
      status: 500,
      body: { success: false, code: 'SCRAPE_ALL_ENGINES_FAILED', error: FIRECRAWL_SECRET_TEXT },
    };
  }
  if (text.includes('timeout-408'))
    return { status: 408, body: { success: false, code: 'SCRAPE_TIMEOUT', error: 'timeout' } };
  if (text.includes('no-credit'))
    return { status: 402, body: { error: 'Payment required: Insufficient credits' } };
  return undefined;
}

function page(url: string, i = 0) {
  return {
    markdown: `# Fake page ${i}\n\nFrom ${url}`,
    metadata: { title: `Fake ${i}`, sourceURL: url, statusCode: 200, error: null },
    warning: FIRECRAWL_SECRET_TEXT,
  };
}

export async function startFirecrawlFake(): Promise<FakeServer> {
  const jobs = new Map<string, Job>();
  return serveFake((req: FakeRequest): Reply => {
    if (req.headers.authorization !== `Bearer ${FIRECRAWL_KEY}`) {
      return { status: 401, body: { success: false, error: 'Unauthorized: Invalid token' } };
    }
    const body = (req.body ?? {}) as Record<string, unknown>;
    const probe = JSON.stringify(body);
    const failed = req.method === 'POST' ? failure(probe) : undefined;
    if (failed) return failed;
    const url = String(body.url ?? '');

    if (req.method === 'POST' && req.path === '/v1/scrape') {
      if (!url) return { status: 400, body: { success: false, error: 'url is required' } };
      const data: Record<string, unknown> = page(url);
      const formats = (body.formats as string[] | undefined) ?? ['markdown'];
      if (formats.includes('html')) data.html = '<h1>Fake</h1>';
      if (formats.includes('links')) data.links = [`${url}a`, `${url}b`];
      return { status: 200, body: { success: true, data } };
    }
    if (req.method === 'POST' && req.path === '/v1/map') {
      return { status: 200, body: { success: true, links: [url, `${url}about`, `${url}blog`] } };
    }
    if (req.method === 'POST' && req.path === '/v1/search') {
      const q = String(body.query ?? '');
      const n = Number(body.limit ?? 5);
      const data = Array.from({ length: n }, (_, i) => ({
        title: `${q} ${i}`,
        description: `About ${q}`,
        url: `https://example.com/${i}`,
      }));
      return { status: 200, body: { success: true, data } };
    }
    if (req.method === 'POST' && (req.path === '/v1/crawl' || req.path === '/v1/extract')) {
      const id = randomUUID();
      const kind = req.path === '/v1/crawl' ? 'crawl' : 'extract';
      jobs.set(id, { polls: 0, pages: Math.min(Number(body.limit ?? 3), 3), body, kind });
      return { status: 200, body: { success: true, id, url: `https://api.firecrawl.dev${req.path}/${id}` } };
    }
    const m = /^\/v1\/(crawl|extract)\/([^/]+)$/.exec(req.path);
    if (req.method === 'GET' && m) {
      const job = jobs.get(m[2] as string);
      if (!job || job.kind !== m[1]) {
        return {
          status: 404,
          body: { success: false, error: `${m[1] === 'crawl' ? 'Crawl' : 'Extract'} job not found` },
        };
      }
      job.polls++;
      if (job.kind === 'extract') {
        if (String(job.body.prompt ?? '').includes('job-fails')) {
          return { status: 200, body: { success: false, status: 'failed', error: FIRECRAWL_SECRET_TEXT } };
        }
        if (job.polls < 2)
          return {
            status: 200,
            body: { success: true, status: 'processing', expiresAt: '2030-01-01T00:00:00Z' },
          };
        return {
          status: 200,
          body: { success: true, status: 'completed', data: { title: 'Fake title' }, tokensUsed: 12 },
        };
      }
      const start = String(job.body.url);
      if (job.polls < 2) {
        return {
          status: 200,
          body: {
            success: true,
            status: 'scraping',
            total: job.pages,
            completed: 1,
            creditsUsed: 1,
            data: [],
          },
        };
      }
      // Completed: pages served two at a time, `next` pointing at the rest.
      const skip = Number(req.query.skip ?? 0);
      const all = Array.from({ length: job.pages }, (_, i) => page(`${start}p${i}`, i));
      const data = all.slice(skip, skip + 2);
      const out: Record<string, unknown> = {
        success: true,
        status: 'completed',
        total: job.pages,
        completed: job.pages,
        creditsUsed: job.pages,
        expiresAt: '2030-01-01T00:00:00Z',
        data,
      };
      if (skip + 2 < job.pages) out.next = `https://api.firecrawl.dev/v1/crawl/${m[2]}?skip=${skip + 2}`;
      return { status: 200, body: out };
    }
    return { status: 404, body: { success: false, error: 'Not found' } };
  });
}
