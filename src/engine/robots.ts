import type { GuardedFetcher } from '../upstreams/web-fetch.js';

// robots.txt (RFC 9309): the group for our product token, else `*`; longest matching rule wins, allow wins a
// tie; `*` and `$` wildcards. Crawl-delay (not in the RFC, but widely used) and Sitemap lines are read too.

export const ROBOTS_AGENT = 'tollgate';

export interface Robots {
  allowed(url: string): boolean;
  /** Crawl-delay of our group, ms (undefined when not given). */
  crawlDelayMs: number | undefined;
  sitemaps: string[];
}

interface Rule {
  allow: boolean;
  pattern: string;
  re: RegExp;
}

interface Group {
  agents: string[];
  rules: Rule[];
  delay: number | undefined;
}

function compile(pattern: string): RegExp {
  const anchored = pattern.endsWith('$');
  const body = (anchored ? pattern.slice(0, -1) : pattern)
    .split('*')
    .map((s) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${body}${anchored ? '$' : ''}`);
}

export function parseRobots(text: string, agent = ROBOTS_AGENT): Robots {
  const groups: Group[] = [];
  const sitemaps: string[] = [];
  let current: Group | undefined;
  let lastWasAgent = false;
  for (const rawLine of text.split(/\r?\n|\r/)) {
    const line = rawLine.replace(/#.*$/, '').trim();
    const colon = line.indexOf(':');
    if (colon < 0) continue;
    const key = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (key === 'user-agent') {
      if (!current || !lastWasAgent) {
        current = { agents: [], rules: [], delay: undefined };
        groups.push(current);
      }
      current.agents.push(value.toLowerCase());
      lastWasAgent = true;
      continue;
    }
    lastWasAgent = false;
    if (key === 'sitemap') {
      if (value) sitemaps.push(value);
      continue;
    }
    if (!current) continue;
    if (key === 'allow' || key === 'disallow') {
      // An empty Disallow allows everything: it is no rule at all.
      if (value) current.rules.push({ allow: key === 'allow', pattern: value, re: compile(value) });
    } else if (key === 'crawl-delay') {
      const s = Number(value);
      if (Number.isFinite(s) && s >= 0) current.delay = s * 1000;
    }
  }
  const me = agent.toLowerCase();
  let mine = groups.filter((g) => g.agents.some((a) => a !== '*' && me.includes(a)));
  if (mine.length === 0) mine = groups.filter((g) => g.agents.includes('*'));
  const rules = mine.flatMap((g) => g.rules);
  const delay = mine.map((g) => g.delay).find((d) => d !== undefined);
  return {
    sitemaps,
    crawlDelayMs: delay,
    allowed(url: string): boolean {
      if (rules.length === 0) return true;
      let path: string;
      try {
        const u = new URL(url);
        path = u.pathname + u.search;
      } catch {
        return false;
      }
      if (path === '/robots.txt') return true;
      let best: Rule | undefined;
      for (const r of rules) {
        if (!r.re.test(path)) continue;
        if (
          !best ||
          r.pattern.length > best.pattern.length ||
          (r.pattern.length === best.pattern.length && r.allow)
        ) {
          best = r;
        }
      }
      return best ? best.allow : true;
    },
  };
}

/** No robots.txt (4xx): everything is allowed. */
export const ALLOW_ALL: Robots = { allowed: () => true, crawlDelayMs: undefined, sitemaps: [] };
/** robots.txt unreachable (5xx, network error): RFC 9309 §2.3.1.4 says assume complete disallow. */
export const DISALLOW_ALL: Robots = { allowed: () => false, crawlDelayMs: undefined, sitemaps: [] };

/**
 * The origin's robots.txt. `strict`: a site that cannot be reached at all (refused by the SSRF guard, not
 * resolving, timing out) fails the call instead of being treated as "disallow everything".
 */
export async function fetchRobots(
  fetcher: GuardedFetcher,
  origin: string,
  signal: AbortSignal,
  strict = false,
): Promise<Robots> {
  try {
    const res = await fetcher.fetchPage(`${origin}/robots.txt`, {
      signal,
      timeoutMs: 10_000,
      maxBytes: 512 * 1024,
      textOnly: true,
    });
    if (res.status >= 500) return DISALLOW_ALL;
    if (res.status >= 400) return ALLOW_ALL;
    return parseRobots(res.body);
  } catch (e) {
    if (signal.aborted || strict) throw e;
    return DISALLOW_ALL;
  }
}
