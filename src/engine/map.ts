import { Parser } from 'htmlparser2';
import { linkSignals } from '../lib/abort.js';
import type { MapRequest } from '../ports/index.js';
import type { GuardedFetcher } from '../upstreams/web-fetch.js';
import { fetchRobots } from './robots.js';
import { scanHtml } from './scan.js';
import { normalizeUrl, originOf, sameSite, siteOf } from './url.js';

// map: the site's URLs without scraping them — sitemap.xml (and sitemap indexes, and sitemaps named in
// robots.txt) plus the links of the start page, and of further pages up to `maxDepth` link levels. Same site
// only, deduplicated, bounded in URLs, fetched pages, sitemap files and time. A deadline returns what was found.

const MAX_SITEMAP_FILES = 20;
const MAX_PAGE_FETCHES = 50;
const PAGE_TIMEOUT_MS = 15_000;

/** `<loc>` entries of a sitemap or sitemap index. */
export function parseSitemap(xml: string): { pages: string[]; sitemaps: string[] } {
  const pages: string[] = [];
  const sitemaps: string[] = [];
  let inLoc = false;
  let inIndexEntry = false;
  let text = '';
  const parser = new Parser(
    {
      onopentag(name) {
        const n = name.toLowerCase().replace(/^.*:/, '');
        if (n === 'sitemap') inIndexEntry = true;
        if (n === 'loc') {
          inLoc = true;
          text = '';
        }
      },
      ontext(t) {
        if (inLoc) text += t;
      },
      onclosetag(name) {
        const n = name.toLowerCase().replace(/^.*:/, '');
        if (n === 'loc') {
          inLoc = false;
          const loc = text.trim();
          if (loc) (inIndexEntry ? sitemaps : pages).push(loc);
        }
        if (n === 'sitemap') inIndexEntry = false;
      },
    },
    { xmlMode: true, decodeEntities: true },
  );
  parser.end(xml);
  return { pages, sitemaps };
}

export async function mapSite(fetcher: GuardedFetcher, req: MapRequest): Promise<string[]> {
  const start = normalizeUrl(req.url);
  if (!start) return [];
  const linked = linkSignals([req.signal], req.timeoutMs);
  const deadline = linked.signal;
  try {
    const site = siteOf(start);
    const found = new Set<string>([start]);
    const add = (u: string): boolean => {
      if (found.size >= req.limit) return false;
      const n = normalizeUrl(u);
      if (n && sameSite(n, site) && !found.has(n)) {
        found.add(n);
        return true;
      }
      return false;
    };
    const done = () => found.size >= req.limit || deadline.aborted;

    // Reaching robots.txt proves the site can be fetched at all (and passes the SSRF guard); a map of a site
    // that cannot be reached is a failed call, not an empty success.
    fetcher.check(req.url);
    const robots = await fetchRobots(fetcher, originOf(start), req.signal, true);
    try {
      if (req.useSitemap) {
        const queue = [...robots.sitemaps, `${originOf(start)}/sitemap.xml`];
        const visited = new Set<string>();
        while (queue.length > 0 && visited.size < MAX_SITEMAP_FILES && !done()) {
          const sm = queue.shift() as string;
          if (visited.has(sm) || !sameSite(sm, site)) continue;
          visited.add(sm);
          const res = await fetcher
            .fetchPage(sm, { signal: deadline, timeoutMs: PAGE_TIMEOUT_MS, textOnly: true })
            .catch(() => undefined);
          if (!res || res.status >= 400) continue;
          const parsed = parseSitemap(res.body);
          for (const p of parsed.pages) add(p);
          queue.push(...parsed.sitemaps);
        }
      }
      // Links, breadth-first: level 0 is the start page; its links are fetched while depth allows.
      let level = [start];
      let fetches = 0;
      for (let depth = 0; depth <= req.maxDepth && level.length > 0 && !done(); depth++) {
        const next: string[] = [];
        for (const url of level) {
          if (done() || fetches >= MAX_PAGE_FETCHES) break;
          if (!robots.allowed(url)) continue;
          fetches++;
          const res = await fetcher
            .fetchPage(url, { signal: deadline, timeoutMs: PAGE_TIMEOUT_MS, textOnly: true })
            .catch(() => undefined);
          if (!res || res.status >= 400) continue;
          const scan = scanHtml(res.body, { baseUrl: res.url });
          for (const link of scan.links) if (add(link)) next.push(normalizeUrl(link) as string);
        }
        level = next;
      }
    } catch (e) {
      // The deadline only cuts the search short; the caller's own cancellation is an error.
      if (req.signal.aborted) throw e;
    }
    return [...found];
  } finally {
    linked.dispose();
  }
}
