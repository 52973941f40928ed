import { join } from 'node:path';
import type { Logger } from 'pino';
import { isGatewayError } from '../errors.js';
import { untilAborted } from '../lib/abort.js';
import type { Clock } from '../lib/clock.js';
import { newId } from '../lib/ids.js';
import { openSqlite } from '../lib/sqlite.js';
import type { JobWork, WebEngine, WebGroup } from '../ports/index.js';
import { type GuardedFetcher, USER_AGENT } from '../upstreams/web-fetch.js';
import { BrowserPool } from './browser.js';
import { Crawler } from './crawler.js';
import { HostGate, sleep } from './limit.js';
import { mapSite } from './map.js';
import { scrapePage } from './scrape.js';
import { WebStore } from './store.js';

// The built-in web engine: scrape, map, crawl and background jobs on this machine, with the SSRF-guarded
// fetcher and (when installed) headless Chromium. Composed by src/main.ts and handed to handlers as
// `services.engine`.

export interface EngineOptions {
  dataDir: string;
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
}

export interface BuiltinEngine extends WebEngine {
  /** Start-up recovery: resumes crawls and fails jobs left running by a previous process. */
  recover(): { crawlsResumed: number; crawlsFailed: number; jobsFailed: number };
  close(): Promise<void>;
}

/** Finished crawls and jobs are kept this long (Firecrawl keeps crawl results 24 h too). */
const RETENTION_MS = 24 * 3_600_000;

export function createWebEngine(opts: EngineOptions): BuiltinEngine {
  const db = openSqlite(join(opts.dataDir, 'web.sqlite'));
  db.pragma('synchronous = NORMAL');
  const store = new WebStore(db);
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
  const prune = () => {
    try {
      store.prune(opts.clock.now() - RETENTION_MS);
    } catch (err) {
      opts.log.error({ err }, 'pruning old crawls failed');
    }
  };
  const pruner = setInterval(prune, 3_600_000);
  pruner.unref();

  async function startJob(kind: string, work: JobWork, inlineMs: number) {
    const id = newId('job', opts.clock.now());
    store.createJob(id, kind, opts.clock.now());
    const progress = (partial: unknown) => store.updateJob(id, 'processing', partial, null, opts.clock.now());
    // Raced with shutdown, so a job whose work ignores its signal cannot hold the gateway open.
    const task = untilAborted(work(shutdown.signal, progress), shutdown.signal).then(
      (result) => {
        store.updateJob(id, 'completed', result, null, opts.clock.now());
        return result;
      },
      (err) => {
        const msg = shutdown.signal.aborted
          ? 'The gateway restarted while the job ran.'
          : isGatewayError(err)
            ? err.message
            : 'The job failed on an internal error.';
        if (!isGatewayError(err)) opts.log.error({ err, job: id }, 'background job failed');
        store.updateJob(id, 'failed', null, msg, opts.clock.now());
        throw err;
      },
    );
    const timer = new AbortController();
    const settled = await Promise.race([
      task.then(
        (result) => ({ kind: 'done' as const, result }),
        (error: unknown) => ({ kind: 'error' as const, error }),
      ),
      sleep(inlineMs, timer.signal).then(
        () => ({ kind: 'pending' as const }),
        () => ({ kind: 'pending' as const }),
      ),
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
    map: (req) => mapSite(opts.fetcher, req),
    startCrawl: (req) => crawler.start({ ...req, maxPages: Math.min(req.maxPages, opts.crawl.maxPages) }),
    crawlStatus: (id, skip) => Promise.resolve(crawler.status(id, skip)),
    startJob,
    async jobStatus(id) {
      const row = store.job(id);
      if (!row) return undefined;
      const view = { status: row.status, result: row.result === null ? undefined : JSON.parse(row.result) };
      return row.error === null ? view : { ...view, error: row.error };
    },
    recover() {
      prune();
      const jobsFailed = store.failOrphanJobs('The gateway restarted while the job ran.', opts.clock.now());
      const { resumed, failed } = crawler.resumeAll();
      return { crawlsResumed: resumed, crawlsFailed: failed, jobsFailed };
    },
    async close() {
      clearInterval(pruner);
      shutdown.abort(new Error('shutting down'));
      await crawler.close();
      await Promise.all([...background]);
      await browser.close();
      db.close();
    },
  };
}
