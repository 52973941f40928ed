import type { Logger } from 'pino';
import type { StateDb } from '../backend.js';
import { isDatabaseUnavailable, isGatewayError } from '../errors.js';
import { untilAborted } from '../lib/abort.js';
import type { Clock } from '../lib/clock.js';
import { newId } from '../lib/ids.js';
import type { JobWork, WebEngine, WebGroup } from '../ports/index.js';
import { type GuardedFetcher, USER_AGENT } from '../upstreams/web-fetch.js';
import { BrowserPool } from './browser.js';
import { Crawler } from './crawler.js';
import { HostGate, sleep } from './limit.js';
import { scrapePage } from './scrape.js';
import { openWebStore } from './store-sql.js';

// The built-in web engine: scrape, map, crawl and background jobs on this machine, with the SSRF-guarded
// fetcher and (when installed) headless Chromium. Composed by src/main.ts and handed to handlers as
// `services.engine`.

export interface EngineOptions {
  /** Where crawls and jobs are kept: SQLite (data/web.sqlite beside it) or PostgreSQL shared by replicas. */
  state: StateDb;
  fetcher: GuardedFetcher;
  /** Groups the operator lets the built-in engine serve. */
  groups: ReadonlySet<WebGroup>;
  chromiumPath: string;
  browserConcurrency: number;
  defaultTimeoutMs: number;
  crawl: { perHost: number; delayMs: number; maxPages: number; maxJobs: number };
  inlineJobMs: number;
  clock: Clock;
  log: Logger;
  /** How often to look for crawls and jobs of replicas whose lease expired (default 15 s). */
  adoptEveryMs?: number;
  /**
   * Told of each failure of the engine's timers (adopting orphans, pruning): the gateway's database health, which
   * says an outage once. A database that does not answer is then not logged again here, once a round.
   */
  onDatabaseError?: ((err: unknown) => void) | undefined;
}

export interface BuiltinEngine extends WebEngine {
  /** Start-up recovery: resumes crawls and fails jobs left running by a previous process. */
  recover(): Promise<Recovery>;
  /**
   * Adopts the crawls (and fails the jobs) of replicas whose lease expired. Also run by the engine on a timer;
   * on SQLite, a cluster of one, it never finds any.
   */
  adoptOrphans(): Promise<Recovery>;
  close(): Promise<void>;
}

export interface Recovery {
  crawlsResumed: number;
  crawlsFailed: number;
  jobsFailed: number;
}

const RESTARTED = 'The gateway restarted while the job ran.';

/** Finished crawls and jobs are kept this long (Firecrawl keeps crawl results 24 h too). */
const RETENTION_MS = 24 * 3_600_000;

export function createWebEngine(opts: EngineOptions): BuiltinEngine {
  const store = openWebStore(opts.state);
  const browser = new BrowserPool({
    executablePath: opts.chromiumPath,
    concurrency: opts.browserConcurrency,
    fetcher: opts.fetcher,
    userAgent: USER_AGENT,
    log: opts.log,
  });
  const scrapeDeps = { fetcher: opts.fetcher, browser, defaultTimeoutMs: opts.defaultTimeoutMs };
  const crawler = new Crawler({
    store,
    scrape: scrapeDeps,
    gate: new HostGate(opts.crawl.perHost),
    delayMs: opts.crawl.delayMs,
    perHost: opts.crawl.perHost,
    maxJobs: opts.crawl.maxJobs,
    clock: opts.clock,
    log: opts.log,
  });
  const shutdown = new AbortController();
  const background = new Set<Promise<unknown>>();
  // A timer's failure: the outage's, said once by the gateway's health, or logged.
  const failed = (what: string) => (err: unknown) => {
    opts.onDatabaseError?.(err);
    if (!opts.onDatabaseError || !isDatabaseUnavailable(err)) opts.log.error({ err }, what);
  };
  const prune = () =>
    store.prune(opts.clock.now() - RETENTION_MS).then(() => undefined, failed('pruning old crawls failed'));
  const pruner = setInterval(() => void prune(), 3_600_000);
  pruner.unref();

  async function adopt(atStart: boolean): Promise<Recovery> {
    const jobsFailed = await store.failOrphanJobs(RESTARTED, opts.clock.now(), atStart);
    const { resumed, failed } = await crawler.adoptOrphans(atStart);
    return { crawlsResumed: resumed, crawlsFailed: failed, jobsFailed };
  }
  // A survivor picks up what a dead replica left running (its lease expired).
  let adopting = false;
  const adopter = setInterval(() => {
    if (adopting) return;
    adopting = true;
    adopt(false)
      .then((r) => {
        if (r.crawlsResumed + r.crawlsFailed + r.jobsFailed > 0)
          opts.log.warn(r, 'web engine: adopted work of a replica that is gone');
      }, failed('adopting orphaned crawls failed'))
      .finally(() => {
        adopting = false;
      });
  }, opts.adoptEveryMs ?? 15_000);
  adopter.unref();

  async function startJob(kind: string, work: JobWork, inlineMs: number) {
    const id = newId('job', opts.clock.now());
    await store.createJob(id, kind, opts.clock.now());
    // The job's writes in order: a progress write still in flight never lands after the outcome.
    let writes: Promise<void> = Promise.resolve();
    const write = (status: 'processing' | 'completed' | 'failed', result: unknown, error: string | null) => {
      const now = opts.clock.now();
      writes = writes
        .then(() => store.updateJob(id, status, result, error, now))
        .catch((err: unknown) => opts.log.error({ err, job: id }, 'recording a background job failed'));
      return writes;
    };
    const progress = (partial: unknown) => void write('processing', partial, null);
    // Raced with shutdown, so a job whose work ignores its signal cannot hold the gateway open.
    const task = untilAborted(work(shutdown.signal, progress), shutdown.signal).then(
      async (result) => {
        await write('completed', result, null);
        return result;
      },
      async (err) => {
        const msg = shutdown.signal.aborted
          ? RESTARTED
          : isGatewayError(err)
            ? err.message
            : 'The job failed on an internal error.';
        if (!isGatewayError(err)) opts.log.error({ err, job: id }, 'background job failed');
        await write('failed', null, msg);
        throw err;
      },
    );
    const timer = new AbortController();
    const pending = () => ({ kind: 'pending' as const });
    const settled = await Promise.race([
      task.then(
        (result) => ({ kind: 'done' as const, result }),
        (error: unknown) => ({ kind: 'error' as const, error }),
      ),
      sleep(inlineMs, timer.signal).then(pending, pending),
    ]);
    timer.abort();
    if (settled.kind === 'done') return { id, done: true as const, result: settled.result };
    if (settled.kind === 'error') throw settled.error;
    const tracked = task.catch(() => undefined).finally(() => background.delete(tracked));
    background.add(tracked);
    return { id, done: false as const };
  }

  return {
    maxCrawlPages: opts.crawl.maxPages,
    inlineJobMs: opts.inlineJobMs,
    serves: (group) => opts.groups.has(group),
    browserAvailable: () => browser.available(),
    scrape: (req) => scrapePage(scrapeDeps, req),
    // map.ts brings htmlparser2: loaded with the first map (issue 19, idle RSS).
    map: async (req) => (await import('./map.js')).mapSite(opts.fetcher, req),
    startCrawl: (req) => crawler.start({ ...req, maxPages: Math.min(req.maxPages, opts.crawl.maxPages) }),
    crawlStatus: (id, skip) => crawler.status(id, skip),
    startJob,
    async jobStatus(id) {
      const row = await store.job(id);
      if (!row) return undefined;
      const view = { status: row.status, result: row.result === null ? undefined : JSON.parse(row.result) };
      return row.error === null ? view : { ...view, error: row.error };
    },
    async recover() {
      await prune();
      return adopt(true);
    },
    adoptOrphans: () => adopt(false),
    async close() {
      clearInterval(pruner);
      clearInterval(adopter);
      shutdown.abort(new Error('shutting down'));
      await crawler.close();
      await Promise.all([...background]);
      await browser.close();
    },
  };
}
