import type { Logger } from 'pino';
import type { StateDb } from '../backend.js';
import type { Clock } from '../lib/clock.js';
import type { WebGroup } from '../ports/index.js';
import { createFastcrwClient, type FastcrwClient } from '../upstreams/fastcrw.js';
import { createFirecrawlClient, type FirecrawlClient } from '../upstreams/firecrawl.js';
import { createPool } from '../upstreams/http.js';
import { createScrapingAntClient, type ScrapingAntClient } from '../upstreams/scrapingant.js';
import type { GuardedFetcher } from '../upstreams/web-fetch.js';
import { type BuiltinEngine, createWebEngine } from './index.js';

// Which engine serves each scraper group (TOLLGATE_<GROUP>_ENGINE), built from config for src/main.ts:
//   auto     the vendor when its key is set, else the built-in engine (a fresh install scrapes at once)
//   vendor   only the vendor; without its key the group answers not_configured
//   builtin  only the built-in engine, even when a key is set

export interface WebStack {
  engine: BuiltinEngine;
  vendors: { firecrawl?: FirecrawlClient; fastcrw?: FastcrwClient; scrapingant?: ScrapingAntClient };
  /** Per group: 'vendor', 'builtin' or 'none' — logged at start-up. */
  routes: Record<WebGroup, 'vendor' | 'builtin' | 'none'>;
  close(): Promise<void>;
}

type EngineMode = 'auto' | 'vendor' | 'builtin';
type ModeKey = `TOLLGATE_SCRAPER${'A' | 'B' | 'C'}_ENGINE`;
type VendorKey = 'FIRECRAWL' | 'FASTCRW' | 'SCRAPINGANT';

/** What the web stack reads of the gateway's Config (which satisfies it structurally). */
export interface WebStackConfig {
  upstreamTimeoutMs: number;
  upstreamConnections?: number;
  vendors: Record<VendorKey, { apiKey: string | undefined; baseUrl: string }>;
  env: Record<ModeKey, EngineMode> & {
    TOLLGATE_CHROMIUM_PATH: string;
    TOLLGATE_BROWSER_CONCURRENCY: number;
    TOLLGATE_CRAWL_CONCURRENCY: number;
    TOLLGATE_CRAWL_DELAY_MS: number;
    TOLLGATE_CRAWL_MAX_PAGES: number;
    TOLLGATE_CRAWL_MAX_JOBS: number;
    TOLLGATE_EXTRACT_INLINE_SECONDS: number;
  };
}

const GROUPS: Array<{ group: WebGroup; vendor: VendorKey; mode: ModeKey }> = [
  { group: 'scraperA', vendor: 'FIRECRAWL', mode: 'TOLLGATE_SCRAPERA_ENGINE' },
  { group: 'scraperB', vendor: 'FASTCRW', mode: 'TOLLGATE_SCRAPERB_ENGINE' },
  { group: 'scraperC', vendor: 'SCRAPINGANT', mode: 'TOLLGATE_SCRAPERC_ENGINE' },
];

/** Which engine serves each group, from the configuration alone (the CLI's catalog asks this too). */
export function webRoutes(config: Pick<WebStackConfig, 'vendors' | 'env'>): {
  useVendor: Set<WebGroup>;
  builtinGroups: Set<WebGroup>;
  routes: WebStack['routes'];
} {
  const builtinGroups = new Set<WebGroup>();
  const useVendor = new Set<WebGroup>();
  const routes = {} as WebStack['routes'];
  for (const g of GROUPS) {
    const mode = config.env[g.mode];
    const keyed = config.vendors[g.vendor].apiKey !== undefined;
    if (mode !== 'builtin' && keyed) useVendor.add(g.group);
    else if (mode !== 'vendor') builtinGroups.add(g.group);
    routes[g.group] = useVendor.has(g.group) ? 'vendor' : builtinGroups.has(g.group) ? 'builtin' : 'none';
  }
  return { useVendor, builtinGroups, routes };
}

export function createWebStack(
  config: WebStackConfig,
  deps: {
    fetcher: GuardedFetcher;
    clock: Clock;
    log: Logger;
    state: StateDb;
    /** The gateway's database health (src/run/db-health.ts): the engine's timers report an outage to it. */
    onDatabaseError?: ((err: unknown) => void) | undefined;
  },
): WebStack {
  const env = config.env;
  const { useVendor, builtinGroups, routes } = webRoutes(config);

  const pool = createPool({ connections: config.upstreamConnections });
  const opts = (v: VendorKey) => ({
    baseUrl: config.vendors[v].baseUrl,
    apiKey: config.vendors[v].apiKey as string,
    pool,
    log: deps.log,
    timeoutMs: config.upstreamTimeoutMs * 2,
  });
  const vendors: WebStack['vendors'] = {};
  if (useVendor.has('scraperA')) vendors.firecrawl = createFirecrawlClient(opts('FIRECRAWL'));
  if (useVendor.has('scraperB')) vendors.fastcrw = createFastcrwClient(opts('FASTCRW'));
  if (useVendor.has('scraperC')) vendors.scrapingant = createScrapingAntClient(opts('SCRAPINGANT'));

  const engine = createWebEngine({
    state: deps.state,
    fetcher: deps.fetcher,
    groups: builtinGroups,
    chromiumPath: env.TOLLGATE_CHROMIUM_PATH,
    browserConcurrency: env.TOLLGATE_BROWSER_CONCURRENCY,
    defaultTimeoutMs: Math.min(config.upstreamTimeoutMs, 55_000),
    crawl: {
      perHost: env.TOLLGATE_CRAWL_CONCURRENCY,
      delayMs: env.TOLLGATE_CRAWL_DELAY_MS,
      maxPages: env.TOLLGATE_CRAWL_MAX_PAGES,
      maxJobs: env.TOLLGATE_CRAWL_MAX_JOBS,
    },
    inlineJobMs: env.TOLLGATE_EXTRACT_INLINE_SECONDS * 1000,
    clock: deps.clock,
    log: deps.log,
    onDatabaseError: deps.onDatabaseError,
  });
  return {
    engine,
    vendors,
    routes,
    async close() {
      await engine.close();
      await pool.close();
    },
  };
}
