import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openState } from '../../src/cli/state.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { html, type TestSite } from '../helpers/site.js';
import { FakeLlm, startWebSite } from './web-fixtures.js';

// Built-in crawls: an async job kept in SQLite, breadth-first within maxDepth/maxPages, same site, robots.txt
// respected, one charge on acceptance, polls at their own price, bound to the caller's account, and never left
// `scraping` by a restart.

let site: TestSite;

beforeAll(async () => {
  site = await startWebSite({ treeSize: 15 });
  site.route(
    '/start',
    (_q, res) =>
      void res
        .writeHead(200, { 'content-type': 'text/html' })
        .end(
          html(
            '<a href="/tree/0">tree</a> <a href="/private/secret">secret</a> <a href="https://elsewhere.test/">out</a> <a href="/article">a</a>',
          ),
        ),
  );
});
afterAll(() => site?.close());

type Poll = {
  status: string;
  completed: number;
  total: number;
  data: Array<{ markdown?: string; metadata: { sourceURL: string } }>;
};

async function pollUntilDone(
  t: TestGateway,
  action: string,
  id: string,
  key: string,
): Promise<{ polls: number; last: Poll; first: Poll }> {
  let polls = 0;
  let first: Poll | undefined;
  for (;;) {
    const r = await t.post(`/api/run/${action}`, { id }, { key });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    // [polls:finished] every poll says whether the job is over, and while it runs when to ask again.
    expect(r.body.data.finished).toBe(r.body.data.status !== 'scraping');
    if (!r.body.data.finished) expect(r.body.data.next_poll_seconds).toBeGreaterThan(0);
    // [polls:free-unpriced] scraperA's poll is unpriced by the spec, so free; scraperB's is priced (§4.1).
    expect(r.body.charged_cents).toBe(action === 'scraperA/crawl_status' ? 0 : 1);
    polls++;
    first ??= r.body.data;
    if (r.body.data.status !== 'scraping') return { polls, last: r.body.data, first: first as Poll };
    await new Promise((res) => setTimeout(res, 50));
  }
}

describe('a running gateway', () => {
  let t: TestGateway;
  beforeAll(async () => {
    t = await startGateway({ env: { TOLLGATE_CRAWL_DELAY_MS: '60', TOLLGATE_CRAWL_CONCURRENCY: '2' } });
  });
  afterAll(() => t?.close());

  it('[crawl:async-lifecycle] scraperB/crawl: id at once, scraping → completed, 10 cents once, 1 cent per poll', async () => {
    const { accountId, key } = await t.account('1');
    const start = await t.post(
      '/api/run/scraperB/crawl',
      { url: `${site.url}/tree/0`, maxDepth: 2 },
      { key },
    );
    expect(start.status).toBe(200);
    expect(start.body).toMatchObject({ ok: true, charged_cents: 10 });
    const id: string = start.body.data.id;
    expect(id).toMatch(/^crawl_b_[0-9a-z]{25}$/);
    const { polls, first, last } = await pollUntilDone(t, 'scraperB/crawl_status', id, key);
    expect(first.status).toBe('scraping');
    expect(first.completed).toBeLessThan(7);
    expect(last).toMatchObject({ status: 'completed', completed: 7, total: 7 });
    const urls = last.data.map((p) => p.metadata.sourceURL).sort();
    expect(urls).toEqual([0, 1, 2, 3, 4, 5, 6].map((n) => `${site.url}/tree/${n}`).sort());
    expect(last.data[0]?.markdown).toContain('# Node 0');
    const balance = await t.gw.ledger.balance(accountId);
    expect(balance.balance_micros).toBe(1_000_000 - 100_000 - polls * 10_000);
  });

  it('[crawl:bounds-robots] stays on the site, skips what robots.txt disallows, stops at maxPages', async () => {
    const { key } = await t.account('1');
    const r = await t.post('/api/run/scraperA/crawl', { url: `${site.url}/start`, maxDepth: 1 }, { key });
    const { last } = await pollUntilDone(t, 'scraperA/crawl_status', r.body.data.id, key);
    const urls = last.data.map((p) => p.metadata.sourceURL).sort();
    expect(urls).toEqual([`${site.url}/article`, `${site.url}/start`, `${site.url}/tree/0`]);
    expect(site.hits.get('/private/secret') ?? 0).toBe(0);

    const small = await t.post(
      '/api/run/scraperB/crawl',
      { url: `${site.url}/tree/0`, maxPages: 2, maxDepth: 5 },
      { key },
    );
    const done = await pollUntilDone(t, 'scraperB/crawl_status', small.body.data.id, key);
    expect(done.last).toMatchObject({ status: 'completed', completed: 2, total: 2 });
  });

  it('scraperA/crawl_status pages its data with skip', async () => {
    const { key } = await t.account('1');
    const r = await t.post('/api/run/scraperA/crawl', { url: `${site.url}/tree/0`, limit: 5 }, { key });
    await pollUntilDone(t, 'scraperA/crawl_status', r.body.data.id, key);
    const page = await t.post('/api/run/scraperA/crawl_status', { id: r.body.data.id, skip: 3 }, { key });
    expect(page.body.data.data).toHaveLength(2);
    expect(page.body.data.total).toBe(5);
  });

  it('[crawl:owner-bound] another account, or a made-up id, gets 404 and pays nothing', async () => {
    const owner = await t.account('1');
    const other = await t.account('1');
    const r = await t.post(
      '/api/run/scraperB/crawl',
      { url: `${site.url}/tree/0`, maxPages: 1 },
      { key: owner.key },
    );
    for (const id of [r.body.data.id, 'crawl_000000000aaaaaaaaaaaaaaaa']) {
      const poll = await t.post('/api/run/scraperB/crawl_status', { id }, { key: other.key });
      expect(poll.status).toBe(404);
      expect(poll.body.error.code).toBe('resource_not_found');
    }
    // A scraperB crawl is not a scraperA crawl either.
    const cross = await t.post('/api/run/scraperA/crawl_status', { id: r.body.data.id }, { key: owner.key });
    expect(cross.status).toBe(404);
    expect((await t.gw.ledger.balance(other.accountId)).balance_micros).toBe(1_000_000);
  });

  it('[crawl:start-failure-uncharged] a start page that fails, or robots.txt forbids, is refused uncharged', async () => {
    const { accountId, key } = await t.account('1');
    const gone = await t.post('/api/run/scraperB/crawl', { url: `${site.url}/gone` }, { key });
    expect(gone.status).toBe(422);
    const robots = await t.post('/api/run/scraperB/crawl', { url: `${site.url}/private/secret` }, { key });
    expect(robots.status).toBe(422);
    expect(robots.body.error.message).toContain('robots.txt');
    expect((await t.gw.ledger.balance(accountId)).balance_micros).toBe(1_000_000);
  });
});

describe('[crawl:restart-not-stuck] restarts', () => {
  it('a crawl interrupted by a restart resumes and completes; one restarted too often fails; a job left running fails', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-crawl-'));
    const env = {
      TOLLGATE_CRAWL_DELAY_MS: '150',
      TOLLGATE_CRAWL_CONCURRENCY: '1',
      TOLLGATE_EXTRACT_INLINE_SECONDS: '0',
    };
    try {
      const a = await startGateway({ env, dataDir });
      const { accountId, key } = await a.account('2');
      const resumed = (
        await a.post('/api/run/scraperB/crawl', { url: `${site.url}/tree/0`, maxDepth: 3 }, { key })
      ).body.data.id;
      const doomed = (
        await a.post('/api/run/scraperB/crawl', { url: `${site.url}/tree/0`, maxDepth: 3 }, { key })
      ).body.data.id;
      // An extraction that goes async and is still running when the process dies.
      const llm = new FakeLlm();
      llm.complete = () => new Promise(() => undefined);
      a.gw.run.services.llm = llm;
      const ex = await a.post(
        '/api/run/scraperB/extract',
        { urls: [`${site.url}/article`], prompt: 'title' },
        { key },
      );
      expect(ex.body.data).toMatchObject({ status: 'processing' });
      const mid = await a.post('/api/run/scraperB/crawl_status', { id: resumed }, { key });
      expect(mid.body.data.status, JSON.stringify(mid.body).slice(0, 600)).toBe('scraping');
      await a.close();

      // Simulate what a crash leaves: the doomed crawl already resumed MAX_RESUMES times, the job still "processing".
      const opened = await openState(a.config, { migrate: false });
      const web = opened.state.bulk;
      const rows = await web
        .selectFrom('crawl_jobs')
        .select('id')
        .where('status', '=', 'scraping')
        .orderBy('created_at')
        .orderBy('id')
        .execute();
      expect(rows).toHaveLength(2);
      await web
        .updateTable('crawl_jobs')
        .set({ resumes: 3 })
        .where('id', '=', rows[1]?.id as string)
        .execute();
      await web.updateTable('web_jobs').set({ status: 'processing', error: null }).execute();
      await opened.close();

      const b = await startGateway({ env, dataDir });
      try {
        const done = await pollUntilDone(b, 'scraperB/crawl_status', resumed, key);
        expect(done.last).toMatchObject({ status: 'completed', completed: 15, total: 15 });
        const urls = done.last.data.map((p) => p.metadata.sourceURL);
        expect(new Set(urls).size).toBe(15);
        const failed = await b.post('/api/run/scraperB/crawl_status', { id: doomed }, { key });
        expect(failed.body.data).toMatchObject({ status: 'failed' });
        expect(failed.body.data.error).toContain('restarts');
        const job = await b.post('/api/run/scraperB/extract_status', { id: ex.body.data.id }, { key });
        expect(job.body.data).toMatchObject({ status: 'failed', results: [{ status: 'failed' }] });
        expect((await b.gw.ledger.balance(accountId)).held_micros).toBe(0);
      } finally {
        await b.close();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});
