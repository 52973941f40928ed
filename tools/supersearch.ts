import { GatewayError, notConfigured } from '../src/errors.js';
import { htmlToMarkdown } from '../src/lib/markdown.js';
import type { HandlerContext, Services } from './context.js';
import type { InputOf, OutputOf } from './types.js';

// platform/supersearch: a flat-priced fan-out. Each facet runs its own "source ladder" (the configured web-search
// vendors, with the facet expressed as query operators) concurrently; results are normalized, filtered by domain,
// deduplicated and interleaved across facets. `urls` skips search and fetches pages directly with the built-in,
// SSRF-guarded fetcher, so it works with no vendor at all. Every evidence item cites this call's transaction.

type Input = InputOf<'platform/supersearch'>;
type Output = OutputOf<'platform/supersearch'>;
type Evidence = Output['evidence'][number];
/** An evidence item before it cites the transaction. */
interface Found {
  title: string;
  url: string;
  snippet: string;
  facet: string;
  source: string;
  markdown?: string;
}

export const SEARCH_ENV = ['TOLLGATE_FIRECRAWL_API_KEY', 'TOLLGATE_FASTCRW_API_KEY'];
const DEFAULT_RESULTS = 10;
const FETCH_CONCURRENCY = 4;

/** How each facet narrows a web search. Vendors take Google-style operators. */
const FACET_QUERY: Record<string, (q: string) => string> = {
  web: (q) => q,
  news: (q) => q,
  docs: (q) => `${q} documentation`,
  academic: (q) => `${q} (site:arxiv.org OR site:semanticscholar.org OR site:pubmed.ncbi.nlm.nih.gov)`,
  code: (q) => `${q} (site:github.com OR site:stackoverflow.com)`,
  'public-filings': (q) => `${q} site:sec.gov`,
  compliance: (q) => `${q} compliance`,
  funding: (q) => `${q} funding round`,
  financials: (q) => `${q} financial results`,
  legal: (q) => `${q} (court OR ruling OR statute)`,
  nonprofits: (q) => `${q} nonprofit (site:projects.propublica.org OR site:guidestar.org)`,
  regulatory: (q) => `${q} (site:federalregister.gov OR site:regulations.gov)`,
  scrape: (q) => q,
  'scrape-hard': (q) => q,
  social: (q) => q,
};

const PLATFORM_SITES: Record<string, string> = {
  tiktok: 'tiktok.com',
  instagram: 'instagram.com',
  youtube: 'youtube.com',
  twitter: 'x.com',
  weibo: 'weibo.com',
  reddit: 'reddit.com',
};

interface Hit {
  title: string;
  url: string;
  snippet: string;
  source: string;
  markdown?: string;
}

/** A search function of one vendor, or undefined when it is not configured. */
type Searcher = (
  query: string,
  opts: { limit: number; tbs?: string; news: boolean },
  signal: AbortSignal,
) => Promise<Hit[]>;

function searchers(s: Services): Searcher[] {
  const out: Searcher[] = [];
  const fc = s.vendors.firecrawl;
  if (fc) {
    out.push(async (query, o, signal) =>
      (await fc.search({ query, limit: o.limit, ...(o.tbs ? { tbs: o.tbs } : {}) }, signal)).map((r) =>
        hit(r, 'firecrawl'),
      ),
    );
  }
  const crw = s.vendors.fastcrw;
  if (crw) {
    out.push(async (query, o, signal) => {
      const body = {
        query,
        limit: Math.min(o.limit, 20),
        ...(o.tbs ? { tbs: o.tbs } : {}),
        ...(o.news ? { sources: ['news'] } : {}),
      };
      return flattenCrw(await crw.search(body, signal)).map((r) => hit(r, 'fastcrw'));
    });
  }
  return out;
}

/** fastCRW answers a list, `{ results }` (self-hosted) or `{ web, news, images }` (with `sources`). */
function flattenCrw(data: unknown): Array<Record<string, unknown>> {
  if (Array.isArray(data)) return data as Array<Record<string, unknown>>;
  if (data && typeof data === 'object') {
    const d = data as Record<string, unknown>;
    if (Array.isArray(d.results)) return d.results as Array<Record<string, unknown>>;
    return ['web', 'news'].flatMap((k) =>
      Array.isArray(d[k]) ? (d[k] as Array<Record<string, unknown>>) : [],
    );
  }
  return [];
}

function hit(r: Record<string, unknown>, source: string): Hit {
  const str = (v: unknown) => (typeof v === 'string' ? v : '');
  const h: Hit = {
    title: str(r.title),
    url: str(r.url),
    snippet: str(r.snippet) || str(r.description),
    source,
  };
  if (typeof r.markdown === 'string') h.markdown = r.markdown;
  return h;
}

/** Recency as Google's `tbs` buckets: the smallest window that covers the request. */
export function tbsFor(days: number | undefined): string | undefined {
  if (days === undefined) return undefined;
  if (days <= 1) return 'qdr:d';
  if (days <= 7) return 'qdr:w';
  if (days <= 31) return 'qdr:m';
  if (days <= 365) return 'qdr:y';
  return undefined;
}

function hostOf(url: string): string | undefined {
  try {
    return new URL(url).hostname.toLowerCase();
  } catch {
    return undefined;
  }
}

const matchesDomain = (host: string, domain: string) => {
  const d = domain.toLowerCase().replace(/^www\./, '');
  return host === d || host.endsWith(`.${d}`) || host === `www.${d}`;
};

/** The query one facet sends: the facet's operators, the caller's domains and exclusions, the platform. */
export function facetQuery(input: Input, facet: string): string {
  let q = (FACET_QUERY[facet] ?? FACET_QUERY.web)?.(input.query) ?? input.query;
  const domains =
    facet === 'social' && input.platform ? [PLATFORM_SITES[input.platform] as string] : input.domains;
  if (domains?.length) q += ` (${domains.map((d) => `site:${d}`).join(' OR ')})`;
  for (const d of input.excludeDomains ?? []) q += ` -site:${d}`;
  return q;
}

function keep(input: Input, h: Hit): boolean {
  const host = hostOf(h.url);
  if (!host || !/^https?:/.test(h.url)) return false;
  if (input.excludeDomains?.some((d) => matchesDomain(host, d))) return false;
  if (input.domains?.length && !input.domains.some((d) => matchesDomain(host, d))) return false;
  return true;
}

async function runFacet(input: Input, facet: string, limit: number, ctx: HandlerContext): Promise<Hit[]> {
  const ladder = searchers(ctx.services);
  const query = facetQuery(input, facet);
  const opts = { limit, tbs: tbsFor(input.recencyDays), news: facet === 'news' };
  // timeCritical races the indexes; otherwise the ladder is tried in order until one answers.
  if (input.timeCritical && ladder.length > 1)
    return Promise.any(ladder.map((s) => s(query, opts, ctx.signal)));
  let last: unknown;
  for (const s of ladder) {
    try {
      return await s(query, opts, ctx.signal);
    } catch (e) {
      if (ctx.signal.aborted) throw e;
      last = e;
    }
  }
  throw last ?? new GatewayError('upstream_error', 'No search index answered; nothing was charged.');
}

/** Fetches pages (or their archived copies) and converts them to Markdown, a few at a time. */
async function fetchPages(urls: string[], input: Input, ctx: HandlerContext): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  let next = 0;
  const worker = async () => {
    while (next < urls.length) {
      const url = urls[next++] as string;
      const target = input.asOf ? `https://web.archive.org/web/${input.asOf}/${url}` : url;
      try {
        const page = await ctx.services.web.fetchPage(target, { signal: ctx.signal, timeoutMs: 20_000 });
        if (page.status < 400) out.set(url, htmlToMarkdown(page.body, { baseUrl: page.url }).markdown);
      } catch (e) {
        if (ctx.signal.aborted) throw e;
        ctx.log.warn({ url, err: e }, 'supersearch page fetch failed');
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(FETCH_CONCURRENCY, urls.length) }, worker));
  return out;
}

export function supersearchPrecheck(input: Input, services: Services): GatewayError | undefined {
  if (input.urls?.length) return undefined;
  if (!services.vendors.firecrawl && !services.vendors.fastcrw) {
    return notConfigured(
      'Web search for platform/supersearch (or pass urls to fetch pages directly)',
      SEARCH_ENV,
    );
  }
  return undefined;
}

export async function supersearch(input: Input, ctx: HandlerContext): Promise<Output> {
  const max = input.maxResults ?? DEFAULT_RESULTS;
  const cite = (e: Found): Evidence => ({
    ...e,
    transaction_id: ctx.transactionId,
  });

  if (input.urls?.length) {
    const pages = await fetchPages(input.urls, input, ctx);
    if (pages.size === 0) {
      throw new GatewayError('upstream_rejected', 'None of the urls could be fetched; nothing was charged.');
    }
    const source = input.asOf ? 'archive' : 'fetch';
    const evidence = [...pages].slice(0, max).map(([url, md]) =>
      cite({
        title: /^#\s+(.+)$/m.exec(md)?.[1] ?? url,
        url,
        snippet: md.slice(0, 300),
        facet: 'urls',
        source,
        markdown: md,
      }),
    );
    return { query: input.query, evidence };
  }

  const facets = [...new Set(input.facets)];
  const settled = await Promise.allSettled(facets.map((f) => runFacet(input, f, max, ctx)));
  const ok = settled.flatMap((r, i) =>
    r.status === 'fulfilled' ? [{ facet: facets[i] as string, hits: r.value }] : [],
  );
  if (ok.length === 0) {
    const first = settled.find((r) => r.status === 'rejected') as PromiseRejectedResult | undefined;
    throw first?.reason instanceof GatewayError
      ? first.reason
      : new GatewayError('upstream_error', 'Every search source failed; nothing was charged.', {
          cause: first?.reason,
        });
  }

  // Interleave facets round-robin so each contributes, dropping filtered and duplicate URLs.
  const seen = new Set<string>();
  const picked: Array<Hit & { facet: string }> = [];
  for (let i = 0; picked.length < max && ok.some((f) => i < f.hits.length); i++) {
    for (const f of ok) {
      const h = f.hits[i];
      if (!h || !keep(input, h)) continue;
      const key = h.url.replace(/[#?].*$/, '').replace(/\/$/, '');
      if (seen.has(key)) continue;
      seen.add(key);
      picked.push({ ...h, facet: f.facet });
      if (picked.length >= max) break;
    }
  }

  const wantContent = input.fidelityRequired || facets.some((f) => f === 'scrape' || f === 'scrape-hard');
  const pages = wantContent
    ? await fetchPages(
        picked.filter((h) => !h.markdown).map((h) => h.url),
        input,
        ctx,
      )
    : new Map();
  const evidence = picked.map((h) => {
    const e: Found = {
      title: h.title || h.url,
      url: h.url,
      snippet: h.snippet,
      facet: h.facet,
      source: h.source,
    };
    const md = h.markdown ?? pages.get(h.url);
    if (wantContent && md) e.markdown = md;
    return cite(e);
  });
  return { query: input.query, evidence };
}
