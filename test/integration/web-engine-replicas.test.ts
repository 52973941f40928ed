import pino from 'pino';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type BuiltinEngine, createWebEngine } from '../../src/engine/index.js';
import { openWebStore } from '../../src/engine/store-sql.js';
import { systemClock } from '../../src/lib/clock.js';
import type { CrawlStatus } from '../../src/ports/index.js';
import { createWebFetcher, type GuardedFetcher } from '../../src/upstreams/web-fetch.js';
import { BACKENDS, type BackendCase, type OpenedState } from '../helpers/backends.js';
import type { TestSite } from '../helpers/site.js';
import { startWebSite } from './web-fixtures.js';

// The web engine's crawls and jobs in the shared store: a crawl runs on the replica that started it, its status
// and pages read through any replica, a crawl interrupted by a restart resumes from its stored frontier, and on
// PostgreSQL a crawl whose replica died (its lease expired) is adopted by exactly one survivor and finished.

const TREE = 15;
const STOPPED = 'crawl adopted by another replica; stopped here';
let site: TestSite;
let fetcher: GuardedFetcher;
beforeAll(async () => {
  site = await startWebSite({ treeSize: TREE });
  fetcher = createWebFetcher({ allow: ['127.0.0.1', 'localhost'] });
});
afterAll(async () => {
  await fetcher?.close();
  await site?.close();
});

function engine(state: OpenedState, delayMs = 40, log = pino({ level: 'silent' })): BuiltinEngine {
  return createWebEngine({
    state: state.db,
    fetcher,
    groups: new Set(['scraperA', 'scraperB', 'scraperC']),
    chromiumPath: '/nonexistent',
    browserConcurrency: 1,
    defaultTimeoutMs: 10_000,
    crawl: { perHost: 2, delayMs, maxPages: 100, maxJobs: 4 },
    inlineJobMs: 0,
    clock: systemClock,
    log,
    // The tests adopt by hand.
    adoptEveryMs: 3_600_000,
  });
}

const crawlReq = () => ({
  url: `${site.url}/tree/0`,
  maxPages: 100,
  maxDepth: 3,
  formats: ['markdown' as const],
  onlyMainContent: true,
  render: false,
  signal: AbortSignal.timeout(20_000),
});

async function until(e: BuiltinEngine, id: string, done: (s: CrawlStatus) => boolean): Promise<CrawlStatus> {
  for (let i = 0; i < 400; i++) {
    const s = await e.crawlStatus(id, 0);
    if (s && done(s)) return s;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(
    `crawl ${id} did not get there: ${JSON.stringify(await e.crawlStatus(id, 0)).slice(0, 300)}`,
  );
}

function expectWholeTree(s: CrawlStatus): void {
  expect(s).toMatchObject({ status: 'completed', completed: TREE, total: TREE });
  const urls = s.data.map((p) => p.metadata.sourceURL);
  expect(urls).toHaveLength(TREE);
  expect(new Set(urls).size).toBe(TREE);
}

describe.each(BACKENDS)('web engine store ($name)', (backend) => {
  let a: OpenedState;
  let b: OpenedState;
  const engines: BuiltinEngine[] = [];
  beforeEach(async () => {
    a = await backend.open({ replicaId: 'r_a' });
    b = await backend.share(a, { replicaId: 'r_b' });
  });
  afterEach(async () => {
    await Promise.all(engines.splice(0).map((e) => e.close()));
    await b.close();
    await a.close();
  });
  const open = (s: OpenedState, delayMs?: number) => {
    const e = engine(s, delayMs);
    engines.push(e);
    return e;
  };

  it('a crawl started on one replica completes; its status, pages and a job read through the other', async () => {
    const ea = open(a);
    const eb = open(b);
    const id = await ea.startCrawl(crawlReq());
    expectWholeTree(await until(eb, id, (s) => s.status !== 'scraping'));
    // Paged by skip, the same through either replica.
    const rest = await ea.crawlStatus(id, 10);
    expect(rest?.data).toHaveLength(TREE - 10);

    const job = await ea.startJob('extract', async () => ({ answer: 42 }), 0);
    for (let i = 0; i < 200 && (await eb.jobStatus(job.id))?.status === 'processing'; i++) {
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(await eb.jobStatus(job.id)).toEqual({ status: 'completed', result: { answer: 42 } });
    expect(await eb.crawlStatus('crawl_nope', 0)).toBeUndefined();
  });

  it('the frontier: known URLs are not queued twice, maxPages caps it; pages come back in order, in pages', async () => {
    const store = openWebStore(a.db);
    await store.createCrawl('crawl_x', { url: 'u' }, 1);
    const item = (n: number, depth = 1) => ({ seq: n, url: `https://s.test/${n}`, depth });
    expect(await store.enqueue('crawl_x', [item(1, 0), item(1, 0)], 120)).toBe(1);
    const links = Array.from({ length: 130 }, (_, i) => item(i + 2));
    await store.finishPage('crawl_x', item(1, 0), { n: 1 }, [item(3), ...links], 120, 2);
    expect(await store.crawl('crawl_x')).toMatchObject({ total: 120, completed: 1, status: 'scraping' });
    expect(await store.maxSeq('crawl_x')).toBe(120);
    const next = await store.pending('crawl_x', 2, new Set(['https://s.test/2']));
    expect(next.map((q) => q.seq)).toEqual([3, 4]);
    for (let n = 2; n <= 120; n++) await store.finishPage('crawl_x', item(n), { n }, [], 120, 3);
    expect(await store.pending('crawl_x', 5, new Set())).toEqual([]);
    const first = await store.pages('crawl_x', 0, 100, 10_000_000);
    expect(first.more).toBe(true);
    expect(first.pages).toEqual(Array.from({ length: 100 }, (_, i) => ({ n: i + 1 })));
    expect(await store.pages('crawl_x', 100, 100, 10_000_000)).toMatchObject({ more: false });
    expect((await store.pages('crawl_x', 100, 100, 10_000_000)).pages).toHaveLength(20);
    // A byte budget smaller than one page still returns that page.
    expect(await store.pages('crawl_x', 5, 100, 1)).toEqual({ pages: [{ n: 6 }], more: true });
    await store.setCrawlStatus('crawl_x', 'completed', null, 4);
    expect(await store.prune(5)).toBe(1);
    expect(await store.crawl('crawl_x')).toBeUndefined();
    expect(await store.pages('crawl_x', 0, 10, 1000)).toEqual({ pages: [], more: false });
  });

  it('[crawl:restart-not-stuck] a crawl stopped by a restart resumes from its frontier; a job left running fails', async () => {
    // Slow enough that a loaded machine cannot finish the tree before the restart (15 pages, 2 at a time, 1 s apart).
    const first = engine(a, 1_000);
    const id = await first.startCrawl(crawlReq());
    const job = await first.startJob('extract', () => new Promise(() => undefined), 0);
    await until(first, id, (s) => s.completed >= 3);
    await first.close();
    const mid = await open(b).crawlStatus(id, 0);
    expect(mid?.status).toBe('scraping');
    expect(mid?.completed).toBeLessThan(TREE);
    // The job's work was in memory: the restart says so.
    expect(await open(b).jobStatus(job.id)).toMatchObject({ status: 'failed' });

    // The same replica starting again (SQLite: the next process on the data dir).
    const again = open(a);
    expect(await again.recover()).toMatchObject({ crawlsResumed: 1, crawlsFailed: 0 });
    expectWholeTree(await until(again, id, (s) => s.status !== 'scraping'));
  });
});

describe('web engine on replicas of one PostgreSQL', () => {
  const PG = BACKENDS.find((x) => x.name === 'postgres') as BackendCase;
  let a: OpenedState;
  let b: OpenedState;
  let c: OpenedState;
  const engines: BuiltinEngine[] = [];
  beforeEach(async () => {
    a = await PG.open({ replicaId: 'r_a' });
    b = await PG.share(a, { replicaId: 'r_b' });
    c = await PG.share(a, { replicaId: 'r_c' });
  });
  afterEach(async () => {
    await Promise.all(engines.splice(0).map((e) => e.close()));
    for (const s of [c, b, a]) await s.close();
  });
  const open = (s: OpenedState, delayMs?: number) => {
    const e = engine(s, delayMs);
    engines.push(e);
    return e;
  };
  /** What a replica logs, to see it notice that its crawl was adopted. */
  const logged: string[] = [];
  const recording = pino(
    { level: 'warn' },
    { write: (line: string) => void logged.push((JSON.parse(line) as { msg: string }).msg) },
  );
  const lease = (id: string, expiresAt: number) =>
    a.db.stores
      .insertInto('replicas')
      .values({ id, started_at: Date.now() - 60_000, lease_expires_at: expiresAt })
      .onConflict((oc) => oc.column('id').doUpdateSet({ lease_expires_at: expiresAt }))
      .execute();

  it("a dead replica's crawl is adopted by exactly one survivor and finished; the presumed dead one stops", async () => {
    const live = Date.now() + 600_000;
    await Promise.all([lease('r_a', live), lease('r_b', live), lease('r_c', live)]);
    // Slow enough (13 pages left at 2 per 400 ms: ~2.6 s) that a loaded machine's pauses between the steps below
    // do not let r_a finish the crawl before its lease runs out; at 120 ms it once did (nothing left to adopt).
    const ea = engine(a, 400, recording);
    engines.push(ea);
    const [eb, ec] = [open(b), open(c)];
    const id = await ea.startCrawl(crawlReq());
    await until(eb, id, (s) => s.completed >= 2);
    // While r_a's lease holds, nobody adopts its crawl.
    expect(await eb.adoptOrphans()).toEqual({ crawlsResumed: 0, crawlsFailed: 0, jobsFailed: 0 });

    // r_a stops renewing (it hangs, say): its lease runs out and both survivors look at once.
    await lease('r_a', Date.now() - 1);
    const [rb, rc] = await Promise.all([eb.adoptOrphans(), ec.adoptOrphans()]);
    expect(rb.crawlsResumed + rc.crawlsResumed).toBe(1);
    const owner = await a.db.bulk
      .selectFrom('crawl_jobs')
      .select(['owner', 'resumes'])
      .where('id', '=', id)
      .executeTakeFirst();
    expect(owner).toEqual({ owner: rb.crawlsResumed === 1 ? 'r_b' : 'r_c', resumes: 1 });

    // Finished by the adopter from the stored frontier, read through the replica that started it.
    expectWholeTree(await until(ea, id, (s) => s.status !== 'scraping'));
    // r_a notices at its next write (a page, or the outcome it would record) and stops.
    for (let i = 0; i < 200 && !logged.includes(STOPPED); i++) await new Promise((r) => setTimeout(r, 25));
    expect(logged).toContain(STOPPED);
    // A second look adopts nothing: the crawl is done and its adopter live.
    expect((await ec.adoptOrphans()).crawlsResumed + (await eb.adoptOrphans()).crawlsResumed).toBe(0);
  });

  it('a crawl whose replicas keep dying is failed, not adopted for ever', async () => {
    await lease('r_a', Date.now() + 600_000);
    const ea = engine(a, 200);
    const id = await ea.startCrawl(crawlReq());
    await ea.close();
    await a.db.bulk.updateTable('crawl_jobs').set({ resumes: 3 }).where('id', '=', id).execute();
    await lease('r_a', Date.now() - 1);
    const eb = open(b);
    expect(await eb.adoptOrphans()).toEqual({ crawlsResumed: 0, crawlsFailed: 1, jobsFailed: 0 });
    const s = await eb.crawlStatus(id, 0);
    expect(s?.status).toBe('failed');
    expect(s?.error).toContain('restarts');
  });

  it("a dead replica's background job fails on adoption; a live replica's is left alone", async () => {
    await lease('r_b', Date.now() + 600_000);
    const ea = open(a);
    const eb = open(b);
    const dead = await ea.startJob('extract', () => new Promise(() => undefined), 0);
    const alive = await eb.startJob('extract', () => new Promise(() => undefined), 0);
    await lease('r_a', Date.now() - 1);
    expect(await open(c).adoptOrphans()).toMatchObject({ jobsFailed: 1 });
    expect(await eb.jobStatus(dead.id)).toMatchObject({ status: 'failed' });
    expect(await ea.jobStatus(alive.id)).toMatchObject({ status: 'processing' });
  });
});
