import type { Logger } from 'pino';
import { GatewayError, isGatewayError } from '../errors.js';
import type { Clock } from '../lib/clock.js';
import { newId } from '../lib/ids.js';
import type { CrawlRequest, CrawlStatus, PageFormat, PageResult } from '../ports/index.js';
import { type HostGate, Semaphore } from './limit.js';
import { fetchRobots, type Robots } from './robots.js';
import { convert, load, type ScrapeDeps } from './scrape.js';
import type { QueueItem, WebStore } from './store.js';
import { normalizeUrl, originOf, sameSite, siteOf } from './url.js';

// Crawls: breadth-first within maxDepth and maxPages, same site, robots.txt respected, spaced per host by the
// shared HostGate. The frontier and the pages live in the WebStore (SQLite or PostgreSQL), never the whole crawl
// in memory. On shutdown a crawl simply stops where it is (status stays `scraping`); at the next start-up it
// resumes from its frontier, and on PostgreSQL a surviving replica adopts the crawls of a replica whose lease
// expired. A crawl that keeps dying with its process is failed after MAX_RESUMES resumes.

export const MAX_RESUMES = 3;
/** Robots Crawl-delay above this is capped: a crawl must finish within its caller's patience. */
const MAX_CRAWL_DELAY_MS = 10_000;
const STATUS_MAX_PAGES = 1_000;
const STATUS_MAX_BYTES = 10 * 1024 * 1024;

interface CrawlParams {
  url: string;
  maxPages: number;
  maxDepth: number;
  formats: PageFormat[];
  onlyMainContent: boolean;
  render: boolean | null;
}

export interface CrawlerDeps {
  store: WebStore;
  scrape: ScrapeDeps;
  gate: HostGate;
  /** Politeness: at least this long between two requests to one host. */
  delayMs: number;
  /** Fetches per host at once (also the workers of one crawl). */
  perHost: number;
  maxJobs: number;
  clock: Clock;
  log: Logger;
}

export class Crawler {
  private readonly running = new Map<string, { stop: AbortController; done: Promise<void> }>();
  private readonly jobs: Semaphore;
  private closed = false;

  constructor(private readonly deps: CrawlerDeps) {
    this.jobs = new Semaphore(deps.maxJobs);
  }

  async start(req: CrawlRequest): Promise<string> {
    const params: CrawlParams = {
      url: req.url,
      maxPages: req.maxPages,
      maxDepth: req.maxDepth,
      formats: [...req.formats],
      onlyMainContent: req.onlyMainContent,
      render: req.render,
    };
    this.deps.scrape.fetcher.check(req.url);
    const robots = await fetchRobots(this.deps.scrape.fetcher, originOf(req.url), req.signal, true);
    if (!robots.allowed(req.url)) {
      throw new GatewayError(
        'upstream_rejected',
        "The site's robots.txt does not allow crawling this URL; nothing was charged.",
      );
    }
    // The first page is fetched before the crawl is accepted: a crawl that cannot start is not charged.
    const seed: QueueItem = { seq: 1, url: normalizeUrl(req.url) ?? req.url, depth: 0 };
    const first = await this.fetchOne(params, seed, req.signal);
    if (first.page.metadata.error !== undefined) {
      throw new GatewayError(
        'upstream_rejected',
        `The start page could not be crawled (${first.page.metadata.error}); nothing was charged.`,
        {
          details: { target_status: first.page.metadata.statusCode },
        },
      );
    }
    const id = newId('crawl', this.deps.clock.now());
    const now = this.deps.clock.now();
    await this.deps.store.createCrawl(id, params, now);
    await this.deps.store.enqueue(id, [seed], params.maxPages);
    await this.deps.store.finishPage(
      id,
      seed,
      first.page,
      this.discover(params, robots, seed, first.links, 2),
      params.maxPages,
      now,
    );
    this.schedule(id, params, robots);
    return id;
  }

  /**
   * Crawls left `scraping` by a process that is gone resume here (or fail after MAX_RESUMES): at start-up, those
   * of the previous process; later (PostgreSQL), those of replicas whose lease expired, each adopted by exactly
   * one survivor.
   */
  async adoptOrphans(atStart: boolean): Promise<{ resumed: number; failed: number }> {
    let resumed = 0;
    let failed = 0;
    if (this.closed) return { resumed, failed };
    const running = new Set(this.running.keys());
    for (const row of await this.deps.store.claimOrphanCrawls(this.deps.clock.now(), { atStart, running })) {
      if (row.resumes > MAX_RESUMES) {
        await this.deps.store.setCrawlStatus(
          row.id,
          'failed',
          'The crawl was interrupted by repeated gateway restarts.',
          this.deps.clock.now(),
        );
        failed++;
        continue;
      }
      this.schedule(row.id, JSON.parse(row.params) as CrawlParams, undefined);
      resumed++;
    }
    return { resumed, failed };
  }

  async status(id: string, skip: number): Promise<CrawlStatus | undefined> {
    const row = await this.deps.store.crawl(id);
    if (!row) return undefined;
    const { pages, more } = await this.deps.store.pages(id, skip, STATUS_MAX_PAGES, STATUS_MAX_BYTES);
    const out: CrawlStatus = {
      status: row.status,
      completed: row.completed,
      total: row.total,
      data: pages as PageResult[],
    };
    if (more) out.next_skip = skip + pages.length;
    if (row.error) out.error = row.error;
    return out;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const r of this.running.values()) r.stop.abort(new Error('shutting down'));
    await Promise.all([...this.running.values()].map((r) => r.done));
  }

  private schedule(id: string, params: CrawlParams, robots: Robots | undefined): void {
    if (this.closed) return;
    const stop = new AbortController();
    const done = this.run(id, params, robots, stop.signal)
      .catch(async (err) => {
        if (stop.signal.aborted) return;
        this.deps.log.error({ err, crawl: id }, 'crawl failed');
        const msg = isGatewayError(err) ? err.message : 'The crawl failed on an internal error.';
        await this.deps.store
          .setCrawlStatus(id, 'failed', msg, this.deps.clock.now())
          .catch((e: unknown) =>
            this.deps.log.error({ err: e, crawl: id }, 'recording a failed crawl failed'),
          );
      })
      .finally(() => this.running.delete(id));
    this.running.set(id, { stop, done });
  }

  private async run(
    id: string,
    params: CrawlParams,
    known: Robots | undefined,
    signal: AbortSignal,
  ): Promise<void> {
    const release = await this.jobs.acquire(signal);
    try {
      const origin = originOf(params.url);
      const robots = known ?? (await fetchRobots(this.deps.scrape.fetcher, origin, signal));
      const delay = Math.max(this.deps.delayMs, Math.min(robots.crawlDelayMs ?? 0, MAX_CRAWL_DELAY_MS));
      const inflight = new Set<string>();
      let seq = (await this.deps.store.maxSeq(id)) + 1;
      // Set when another replica adopted the crawl (this one was presumed dead): stop without a word.
      let lost = false;
      let wake: () => void = () => undefined;
      let changed = new Promise<void>((r) => (wake = r));
      const notify = () => {
        const w = wake;
        changed = new Promise<void>((r) => (wake = r));
        w();
      };

      const worker = async () => {
        while (!signal.aborted && !lost) {
          const wait = changed;
          // Several workers may read the frontier at once: each takes the first item none has claimed since.
          const item = (await this.deps.store.pending(id, this.deps.perHost, inflight)).find(
            (q) => !inflight.has(q.url),
          );
          if (!item) {
            if (inflight.size === 0) return;
            await wait;
            continue;
          }
          inflight.add(item.url);
          try {
            const got = await this.deps.gate.run(origin, delay, signal, () =>
              this.fetchOne(params, item, signal),
            );
            const found = this.discover(params, robots, item, got.links, seq);
            seq += found.length;
            const ours = await this.deps.store.finishPage(
              id,
              item,
              got.page,
              found,
              params.maxPages,
              this.deps.clock.now(),
            );
            if (!ours) lost = true;
          } finally {
            inflight.delete(item.url);
            notify();
          }
        }
      };
      await Promise.all(Array.from({ length: this.deps.perHost }, worker));
      if (!lost && !signal.aborted) {
        lost = !(await this.deps.store.setCrawlStatus(id, 'completed', null, this.deps.clock.now()));
      }
      if (lost) this.deps.log.warn({ crawl: id }, 'crawl adopted by another replica; stopped here');
    } finally {
      release();
    }
  }

  /** Same-site, robots-allowed links one level down, while depth allows. */
  private discover(
    params: CrawlParams,
    robots: Robots,
    from: QueueItem,
    links: string[],
    seq: number,
  ): QueueItem[] {
    if (from.depth >= params.maxDepth) return [];
    const site = siteOf(params.url);
    const out: QueueItem[] = [];
    for (const l of links) {
      const u = normalizeUrl(l);
      if (u && sameSite(u, site) && robots.allowed(u))
        out.push({ seq: seq + out.length, url: u, depth: from.depth + 1 });
    }
    return out;
  }

  /** One page; a page that fails is recorded with its error rather than failing the crawl. */
  private async fetchOne(
    params: CrawlParams,
    item: QueueItem,
    signal: AbortSignal,
  ): Promise<{ page: PageResult; links: string[] }> {
    const formats = params.formats.includes('links') ? params.formats : [...params.formats, 'links' as const];
    const req = {
      url: item.url,
      formats,
      onlyMainContent: params.onlyMainContent,
      render: params.render,
      signal,
    };
    try {
      const loaded = await load(this.deps.scrape, req);
      if (loaded.status >= 400) {
        return { page: failedPage(item.url, loaded.url, loaded.status, `HTTP ${loaded.status}`), links: [] };
      }
      const page = await convert(loaded, req);
      const links = page.links ?? [];
      if (!params.formats.includes('links')) delete page.links;
      return { page, links };
    } catch (e) {
      if (signal.aborted) throw e;
      const msg = isGatewayError(e) ? e.message : 'the page could not be fetched';
      if (!isGatewayError(e)) this.deps.log.warn({ err: e, url: item.url }, 'crawl page failed');
      return { page: failedPage(item.url, item.url, 0, msg), links: [] };
    }
  }
}

function failedPage(sourceURL: string, url: string, statusCode: number, error: string): PageResult {
  return {
    metadata: {
      title: null,
      description: null,
      language: null,
      sourceURL,
      url,
      statusCode,
      contentType: '',
      rendered: false,
      error,
    },
  };
}
