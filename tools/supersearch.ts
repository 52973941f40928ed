import { GatewayError, notConfigured } from '../src/errors.js';
import type { HandlerContext, Services } from './context.js';
import { type Facet, type Route, route } from './supersearch-route.js';
import {
  fetchHard,
  fetchPlain,
  type Hit,
  ladder,
  noIndex,
  PLATFORM_SITES,
  type SearchOpts,
  tbsFor,
} from './supersearch-sources.js';
import type { InputOf, OutputOf } from './types.js';

// platform/supersearch: a flat-priced fan-out (docs/spec.md §4.3). The route (supersearch-route) says which facets run,
// from the caller or from the intent classifier, within the internal budget. Each facet runs its own source
// ladder concurrently (supersearch-sources); results are filtered by domain, merged across facets (a page found
// by several facets ranks higher and says which), deduplicated and capped. `urls` skip search: the pages are
// fetched directly, through the browser or residential proxies when they are hard. Every evidence item cites
// this call's transaction.

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
  also_found_by?: string[];
  published_at?: string;
}

export const SEARCH_ENV = ['TOLLGATE_FIRECRAWL_API_KEY', 'TOLLGATE_FASTCRW_API_KEY'];
const DEFAULT_RESULTS = 10;
const FETCH_CONCURRENCY = 4;

function indexes(s: Services): number {
  return Number(Boolean(s.vendors.fastcrw)) + Number(Boolean(s.vendors.firecrawl));
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
  return host === d || host.endsWith(`.${d}`);
};

function keep(input: Input, sites: readonly string[] | undefined, h: Hit): boolean {
  const host = hostOf(h.url);
  if (!host || !/^https?:/.test(h.url)) return false;
  if (input.excludeDomains?.some((d) => matchesDomain(host, d))) return false;
  if (sites?.length && !sites.some((d) => matchesDomain(host, d))) return false;
  return true;
}

/** The internal budget, spent as source calls are made. */
class Budget {
  spent = 0;
  constructor(readonly cents: number) {}
  spend(cents: number): boolean {
    if (this.spent + cents > this.cents) return false;
    this.spent += cents;
    return true;
  }
}

async function runFacet(
  input: Input,
  r: Route,
  facet: Facet,
  limit: number,
  budget: Budget,
  ctx: HandlerContext,
): Promise<{ hits: Hit[]; sites: readonly string[] | undefined }> {
  const steps = ladder(ctx.services, facet);
  const sites = facet === 'social' && r.platform ? [PLATFORM_SITES[r.platform] as string] : input.domains;
  const opts: SearchOpts = { limit, tbs: tbsFor(r.recencyDays), sites, excludeSites: input.excludeDomains };
  // The route reserved this facet's first call (two when racing); fallbacks spend what is left.
  if (input.timeCritical && steps.length > 1) {
    const hits = await Promise.any(steps.map((s) => s.search(input.query, facet, opts, ctx.signal)));
    return { hits, sites };
  }
  let last: unknown;
  for (const [i, s] of steps.entries()) {
    if (i > 0 && !budget.spend(1)) break;
    try {
      return { hits: await s.search(input.query, facet, opts, ctx.signal), sites };
    } catch (e) {
      if (ctx.signal.aborted) throw e;
      last = e;
    }
  }
  throw last ?? noIndex();
}

/** Fetches pages a few at a time; hard ones through the browser or residential proxies. */
async function fetchPages(
  urls: string[],
  hard: boolean,
  input: Input,
  budget: Budget,
  ctx: HandlerContext,
): Promise<Map<string, { markdown: string; source: string }>> {
  const out = new Map<string, { markdown: string; source: string }>();
  let next = 0;
  const worker = async () => {
    while (next < urls.length) {
      const url = urls[next++] as string;
      const target = input.asOf ? `https://web.archive.org/web/${input.asOf}/${url}` : url;
      const plain = hard ? undefined : await fetchPlain(target, ctx);
      if (plain !== undefined) {
        out.set(url, { markdown: plain, source: input.asOf ? 'archive' : 'fetch' });
        continue;
      }
      // A page the plain fetch could not get is retried the hard way while the budget allows.
      const got = await fetchHard(target, ctx, (c) => budget.spend(c));
      if (got) out.set(url, got);
    }
  };
  await Promise.all(Array.from({ length: Math.min(FETCH_CONCURRENCY, urls.length) }, worker));
  return out;
}

export function supersearchPrecheck(input: Input, services: Services): GatewayError | undefined {
  if (indexes(services) > 0 || route(input, 0).urls.length > 0) return undefined;
  return notConfigured(
    'Web search for platform/supersearch (or pass urls to fetch pages directly)',
    SEARCH_ENV,
  );
}

function planOf(r: Route, budget: Budget, sources: Set<string>): Output['plan'] {
  return {
    routed_by: r.routedBy,
    facets: r.urls.length > 0 ? [r.hard ? 'scrape-hard' : 'scrape'] : r.facets,
    skipped: r.skipped,
    ...(r.recencyDays !== undefined ? { recency_days: r.recencyDays } : {}),
    ...(r.platform ? { platform: r.platform } : {}),
    budget_cents: budget.cents,
    spent_cents: budget.spent,
    sources: [...sources],
  };
}

export async function supersearch(input: Input, ctx: HandlerContext): Promise<Output> {
  const max = input.maxResults ?? DEFAULT_RESULTS;
  const r = route(input, indexes(ctx.services));
  const budget = new Budget(r.budgetCents);
  const sources = new Set<string>();
  const cite = (e: Found): Evidence => ({ ...e, transaction_id: ctx.transactionId });

  if (r.urls.length > 0) {
    const pages = await fetchPages(r.urls, r.hard, input, budget, ctx);
    if (pages.size === 0) {
      throw new GatewayError('upstream_rejected', 'None of the urls could be fetched; nothing was charged.');
    }
    const evidence = [...pages].slice(0, max).map(([url, p]) => {
      sources.add(p.source);
      return cite({
        title: /^#\s+(.+)$/m.exec(p.markdown)?.[1] ?? url,
        url,
        snippet: p.markdown.slice(0, 300),
        facet: r.hard ? 'scrape-hard' : 'urls',
        source: p.source,
        markdown: p.markdown,
      });
    });
    return { query: input.query, evidence, plan: planOf(r, budget, sources) };
  }

  // Each facet's first index call was reserved by the route.
  budget.spend(r.facets.length * (input.timeCritical && indexes(ctx.services) > 1 ? 2 : 1));
  const settled = await Promise.allSettled(r.facets.map((f) => runFacet(input, r, f, max, budget, ctx)));
  const ok = settled.flatMap((s, i) =>
    s.status === 'fulfilled' ? [{ facet: r.facets[i] as Facet, ...s.value }] : [],
  );
  if (ok.length === 0) {
    const first = settled.find((s) => s.status === 'rejected') as PromiseRejectedResult | undefined;
    throw first?.reason instanceof GatewayError
      ? first.reason
      : new GatewayError('upstream_error', 'Every search source failed; nothing was charged.', {
          cause: first?.reason,
        });
  }

  // Merge: a page's score adds 1/(rank+1) for every facet that found it; ties keep the facets' order.
  const merged = new Map<string, { hit: Hit; facet: string; also: string[]; score: number; order: number }>();
  let order = 0;
  for (const f of ok) {
    f.hits.forEach((h, rank) => {
      if (!keep(input, f.sites, h)) return;
      const key = h.url
        .replace(/[#?].*$/, '')
        .replace(/\/$/, '')
        .toLowerCase();
      const seen = merged.get(key);
      if (seen) {
        if (seen.facet !== f.facet && !seen.also.includes(f.facet)) seen.also.push(f.facet);
        seen.score += 1 / (rank + 1);
      } else {
        merged.set(key, { hit: h, facet: f.facet, also: [], score: 1 / (rank + 1), order: order++ });
      }
    });
  }
  const picked = [...merged.values()].sort((a, b) => b.score - a.score || a.order - b.order).slice(0, max);

  const wantContent =
    input.fidelityRequired || r.facets.includes('scrape') || r.facets.includes('scrape-hard');
  const pages = wantContent
    ? await fetchPages(
        picked.filter((p) => !p.hit.markdown).map((p) => p.hit.url),
        r.facets.includes('scrape-hard'),
        input,
        budget,
        ctx,
      )
    : new Map<string, { markdown: string; source: string }>();
  const evidence = picked.map(({ hit: h, facet, also }) => {
    sources.add(h.source);
    const e: Found = {
      title: h.title || h.url,
      url: h.url,
      snippet: h.snippet,
      facet,
      source: h.source,
    };
    if (also.length > 0) e.also_found_by = also;
    if (h.published_at) e.published_at = h.published_at;
    const md = h.markdown ?? pages.get(h.url)?.markdown;
    if (wantContent && md) e.markdown = md;
    return cite(e);
  });
  return { query: input.query, evidence, plan: planOf(r, budget, sources) };
}
