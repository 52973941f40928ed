import { GatewayError } from '../src/errors.js';
import type { HandlerContext, Services } from './context.js';
import type { Facet } from './supersearch-route.js';

// The markdown writer brings htmlparser2 (~1.5 MiB of heap): it loads with the first page read, not at start
// (issue 19, idle RSS).
let markdown: typeof import('../src/lib/markdown.js') | undefined;
async function htmlToMarkdown(html: string, opts: { baseUrl: string }) {
  markdown ??= await import('../src/lib/markdown.js');
  return markdown.htmlToMarkdown(html, opts);
}

// platform/supersearch's sources. Each facet has its own ladder of indexes, and where an index has a source of
// that kind the facet asks for it instead of rewriting one web search: the second index's news vertical with
// recency, its research engines (arXiv, Crossref, Semantic Scholar) for academic, its GitHub engine for code,
// its social-media engines for social. Where an index has none, the facet falls back to a web search scoped to
// the facet's authoritative sites. Pages are fetched by the built-in fetcher, the browser (hard pages) or the
// residential proxies.

export interface Hit {
  title: string;
  url: string;
  snippet: string;
  source: string;
  markdown?: string;
  published_at?: string;
}

export interface SearchOpts {
  limit: number;
  tbs?: string | undefined;
  sites?: readonly string[] | undefined;
  excludeSites?: readonly string[] | undefined;
}

/** What a facet asks of each index: the second index's native source, or the first's site scoping. */
interface FacetSource {
  crw: { sources?: string[]; categories?: string[] };
  sites?: string[];
  suffix?: string;
}

const FACETS: Record<Facet, FacetSource> = {
  web: { crw: {} },
  news: { crw: { sources: ['news'] } },
  academic: {
    crw: { categories: ['research'] },
    sites: ['arxiv.org', 'semanticscholar.org', 'pubmed.ncbi.nlm.nih.gov', 'nature.com', 'acm.org'],
  },
  code: { crw: { categories: ['github'] }, sites: ['github.com', 'gitlab.com', 'stackoverflow.com'] },
  docs: { crw: { categories: ['it'] }, suffix: 'documentation' },
  social: { crw: { categories: ['social media'] }, sites: ['reddit.com', 'x.com', 'news.ycombinator.com'] },
  'public-filings': { crw: { categories: ['pdf'] }, sites: ['sec.gov'] },
  compliance: {
    crw: {},
    sites: ['ofac.treasury.gov', 'sanctionssearch.ofac.treas.gov', 'edpb.europa.eu', 'hhs.gov'],
  },
  funding: { crw: { sources: ['news'] }, suffix: 'funding round' },
  financials: { crw: {}, sites: ['sec.gov', 'investor.gov'], suffix: 'financial results' },
  legal: { crw: {}, sites: ['courtlistener.com', 'law.cornell.edu', 'justia.com', 'supremecourt.gov'] },
  nonprofits: { crw: {}, sites: ['projects.propublica.org', 'guidestar.org', 'irs.gov'] },
  regulatory: { crw: {}, sites: ['federalregister.gov', 'regulations.gov'] },
  scrape: { crw: {} },
  'scrape-hard': { crw: {} },
};

export const PLATFORM_SITES: Record<string, string> = {
  tiktok: 'tiktok.com',
  instagram: 'instagram.com',
  youtube: 'youtube.com',
  twitter: 'x.com',
  weibo: 'weibo.com',
  reddit: 'reddit.com',
};

/** One index, asked for one facet. Returns undefined when this gateway has no such index. */
export type Searcher = (query: string, facet: Facet, o: SearchOpts, signal: AbortSignal) => Promise<Hit[]>;

function scoped(query: string, sites: readonly string[] | undefined, exclude: readonly string[] | undefined) {
  let q = query;
  if (sites?.length) q += ` (${sites.map((d) => `site:${d}`).join(' OR ')})`;
  for (const d of exclude ?? []) q += ` -site:${d}`;
  return q;
}

/** The indexes this gateway has, natively-sourced first for the facet. */
export function ladder(s: Services, facet: Facet): Array<{ name: string; search: Searcher }> {
  const out: Array<{ name: string; search: Searcher }> = [];
  const crw = s.vendors.fastcrw;
  const fc = s.vendors.firecrawl;
  const spec = FACETS[facet];
  const native = Boolean(spec.crw.sources || spec.crw.categories);
  if (crw) {
    out.push({
      name: 'fastcrw',
      search: async (query, f, o, signal) => {
        const own = FACETS[f];
        const q = `${query}${own.suffix && !own.crw.categories ? ` ${own.suffix}` : ''}`;
        // Its native sources stand for the facet's sites; the caller's domains still scope the query.
        const body = {
          query: scoped(
            q,
            own.crw.sources || own.crw.categories ? o.sites : (o.sites ?? own.sites),
            o.excludeSites,
          ),
          limit: Math.min(o.limit, 20),
          ...(o.tbs ? { tbs: o.tbs } : {}),
          ...own.crw,
        };
        return flattenCrw(await crw.search(body, signal)).map((r) => hit(r, 'fastcrw'));
      },
    });
  }
  if (fc) {
    out.push({
      name: 'firecrawl',
      search: async (query, f, o, signal) => {
        const own = FACETS[f];
        const q = scoped(
          `${query}${own.suffix ? ` ${own.suffix}` : ''}`,
          o.sites ?? own.sites,
          o.excludeSites,
        );
        const body = { query: q, limit: o.limit, ...(o.tbs ? { tbs: o.tbs } : {}) };
        return (await fc.search(body, signal)).map((r) => hit(r, 'firecrawl'));
      },
    });
  }
  // The index with a native source of this kind goes first; for web the configured order stands.
  return native ? out : out.reverse();
}

/** fastCRW answers a list, `{ results }` (self-hosted) or `{ web, news, images }` (with `sources`). */
function flattenCrw(data: unknown): Array<Record<string, unknown>> {
  if (Array.isArray(data)) return data as Array<Record<string, unknown>>;
  if (data && typeof data === 'object') {
    const d = data as Record<string, unknown>;
    if (Array.isArray(d.results)) return d.results as Array<Record<string, unknown>>;
    return ['news', 'web'].flatMap((k) =>
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
  const date = str(r.publishedDate) || str(r.published_date) || str(r.date);
  if (date) h.published_at = date;
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

/** The built-in, SSRF-guarded fetch of one page as Markdown (free), or undefined when it failed. */
export async function fetchPlain(url: string, ctx: HandlerContext): Promise<string | undefined> {
  try {
    const page = await ctx.services.web.fetchPage(url, { signal: ctx.signal, timeoutMs: 20_000 });
    if (page.status >= 400) return undefined;
    return (await htmlToMarkdown(page.body, { baseUrl: page.url })).markdown;
  } catch (e) {
    if (ctx.signal.aborted) throw e;
    ctx.log.warn({ url, err: e }, 'supersearch page fetch failed');
    return undefined;
  }
}

/** A hard page: the browser when this gateway has one, else (or when it fails) the residential proxies. */
export async function fetchHard(
  url: string,
  ctx: HandlerContext,
  spend: (cents: number) => boolean,
): Promise<{ markdown: string; source: string } | undefined> {
  const engine = ctx.services.engine;
  if (engine?.browserAvailable() && spend(1)) {
    try {
      const page = await engine.scrape({
        url,
        formats: ['markdown'],
        onlyMainContent: true,
        render: true,
        signal: ctx.signal,
        timeoutMs: 30_000,
      });
      if (page.markdown) return { markdown: page.markdown, source: 'browser' };
    } catch (e) {
      if (ctx.signal.aborted) throw e;
      ctx.log.warn({ url, err: e }, 'supersearch browser fetch failed');
    }
  }
  const ant = ctx.services.vendors.scrapingant;
  if (ant && spend(4)) {
    try {
      const page = await ant.general({ url, browser: true, proxy_type: 'residential' }, ctx.signal);
      return {
        markdown: (await htmlToMarkdown(page.html, { baseUrl: url })).markdown,
        source: 'residential',
      };
    } catch (e) {
      if (ctx.signal.aborted) throw e;
      ctx.log.warn({ url, err: e }, 'supersearch residential fetch failed');
    }
  }
  return undefined;
}

export function noIndex(): GatewayError {
  return new GatewayError('upstream_error', 'No search index answered; nothing was charged.');
}
