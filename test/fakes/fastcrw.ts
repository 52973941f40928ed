import { randomUUID } from 'node:crypto';
import { type FakeRequest, type FakeServer, type Reply, serveFake } from './rentcast.js';

// A fake fastCRW native /v1 on 127.0.0.1 speaking its wire format (docs/vendors.md §2): Bearer key,
// `{ success, data }`, map links under `data.links`, hosted search hits directly in `data` (grouped when
// `sources` is set), async crawl jobs, extract answering inline `{ results }` or `{ id, status: processing }`
// (when asked with `Prefer: respond-async`, or when the prompt says "go-async"), error envelopes with
// `errorCode`, and 429s told apart only by headers. Magic words in the body pick a failure: blocked-page,
// bad-request, rate-limit, out-of-credits, engine-error.

export const FASTCRW_KEY = 'crw-test-key';
export const FASTCRW_SECRET_TEXT = 'CRW-INTERNAL: renderer chrome_proxy crashed';

function failure(text: string): Reply | undefined {
  if (text.includes('blocked-page')) {
    return {
      status: 200,
      body: {
        success: false,
        error: FASTCRW_SECRET_TEXT,
        errorCode: 'http_error',
        data: { block: { kind: 'cloudflare' } },
      },
    };
  }
  if (text.includes('bad-request')) {
    return {
      status: 422,
      body: { success: false, error: FASTCRW_SECRET_TEXT, errorCode: 'invalid_request' },
    };
  }
  if (text.includes('rate-limit')) {
    return {
      status: 429,
      body: { success: false, error: 'rate limited' },
      headers: { 'retry-after': '3', 'x-ratelimit-limit': '10', 'x-ratelimit-remaining': '0' },
    };
  }
  if (text.includes('out-of-credits')) {
    return {
      status: 429,
      body: { success: false, error: 'credits' },
      headers: { 'x-fastcrw-credits-available': '0' },
    };
  }
  if (text.includes('engine-error')) {
    return { status: 502, body: { success: false, error: FASTCRW_SECRET_TEXT, errorCode: 'renderer_error' } };
  }
  return undefined;
}

interface Job {
  polls: number;
  body: Record<string, unknown>;
  kind: 'crawl' | 'extract';
}

export async function startFastcrwFake(): Promise<FakeServer> {
  const jobs = new Map<string, Job>();
  const extractResults = (urls: string[]) =>
    urls.map((url, i) =>
      url.includes('bad-url')
        ? { url, status: 'failed', error: FASTCRW_SECRET_TEXT }
        : {
            url,
            status: 'completed',
            data: { title: `Title ${i}` },
            llmUsage: { inputTokens: 10, outputTokens: 5 },
          },
    );
  return serveFake((req: FakeRequest): Reply => {
    if (req.headers.authorization !== `Bearer ${FASTCRW_KEY}`) {
      return { status: 401, body: { success: false, error: 'invalid api key', errorCode: 'unauthorized' } };
    }
    const body = (req.body ?? {}) as Record<string, unknown>;
    const failed = req.method === 'POST' ? failure(JSON.stringify(body)) : undefined;
    if (failed) return failed;
    const url = String(body.url ?? '');

    if (req.method === 'POST' && req.path === '/v1/scrape') {
      const formats = (body.formats as string[] | undefined) ?? ['markdown'];
      const data: Record<string, unknown> = {
        metadata: { title: 'Fake', sourceURL: url, statusCode: 200, elapsedMs: 12 },
        warning: FASTCRW_SECRET_TEXT,
        llmUsage: { inputTokens: 1, outputTokens: 1, estimatedCostUsd: 0.0001 },
        creditCost: 1,
        renderDecision: { kind: 'autoDefault' },
      };
      if (formats.includes('markdown')) data.markdown = `# Fake\n\n${url}`;
      if (formats.includes('plainText')) data.plainText = `Fake ${url}`;
      if (formats.includes('json')) data.json = { title: 'Fake' };
      return { status: 200, body: { success: true, data } };
    }
    if (req.method === 'POST' && req.path === '/v1/map') {
      return { status: 200, body: { success: true, data: { links: [url, `${url}docs`] } } };
    }
    if (req.method === 'POST' && req.path === '/v1/search') {
      const n = Number(body.limit ?? 5);
      // Each vertical answers from its own engines, as SearXNG's categories do: the host says which.
      const category = Array.isArray(body.categories) ? String(body.categories[0]) : undefined;
      const host =
        category === 'research'
          ? 'arxiv.org/abs'
          : category === 'github'
            ? 'github.com/fake'
            : category === 'social media'
              ? 'reddit.com/r/fake'
              : 'example.com';
      const hit = (i: number, kind?: string) => ({
        url: kind === 'news' ? `https://news.example.net/${i}` : `https://${host}/${i}`,
        title: `Hit ${i}`,
        snippet: 's',
        position: i + 1,
        ...(kind === 'news' ? { publishedDate: '2026-11-20' } : {}),
      });
      if (Array.isArray(body.sources)) {
        const grouped = Object.fromEntries(
          (body.sources as string[]).map((s) => [s, [hit(0, s), hit(1, s)]]),
        );
        return { status: 200, body: { success: true, data: grouped } };
      }
      return { status: 200, body: { success: true, data: Array.from({ length: n }, (_, i) => hit(i)) } };
    }
    if (req.method === 'POST' && req.path === '/v1/crawl') {
      const id = randomUUID();
      jobs.set(id, { polls: 0, body, kind: 'crawl' });
      return { status: 200, body: { success: true, id, url: `https://api.fastcrw.com/v1/crawl/${id}` } };
    }
    if (req.method === 'POST' && req.path === '/v1/extract') {
      const urls = (body.urls as string[] | undefined) ?? [];
      const async = req.headers.prefer === 'respond-async' || String(body.prompt ?? '').includes('go-async');
      if (async) {
        const id = randomUUID();
        jobs.set(id, { polls: 0, body, kind: 'extract' });
        return { status: 200, body: { success: true, id, status: 'processing', urls: urls.length } };
      }
      return { status: 200, body: { success: true, results: extractResults(urls) } };
    }
    const m = /^\/v1\/(crawl|extract)\/([^/]+)$/.exec(req.path);
    if (req.method === 'GET' && m) {
      const job = jobs.get(m[2] as string);
      if (!job || job.kind !== m[1])
        return { status: 404, body: { success: false, error: 'not found', errorCode: 'not_found' } };
      job.polls++;
      if (job.kind === 'crawl') {
        if (job.polls < 2)
          return {
            status: 200,
            body: { success: true, status: 'scraping', total: 2, completed: 1, data: [] },
          };
        const data = [0, 1].map((i) => ({
          markdown: `# Page ${i}`,
          metadata: { sourceURL: `${job.body.url}${i}`, statusCode: 200 },
          warning: FASTCRW_SECRET_TEXT,
        }));
        return { status: 200, body: { success: true, status: 'completed', total: 2, completed: 2, data } };
      }
      const urls = (job.body.urls as string[] | undefined) ?? [];
      if (job.polls < 2) {
        return {
          status: 200,
          body: {
            success: true,
            id: m[2],
            status: 'processing',
            results: urls.map((url) => ({ url, status: 'processing' })),
          },
        };
      }
      return {
        status: 200,
        body: {
          success: true,
          id: m[2],
          status: 'completed',
          results: extractResults(urls),
          creditsUsed: urls.length,
        },
      };
    }
    return { status: 404, body: { success: false, error: 'not found', errorCode: 'not_found' } };
  });
}
