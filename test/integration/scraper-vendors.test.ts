import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FASTCRW_KEY, FASTCRW_SECRET_TEXT, startFastcrwFake } from '../fakes/fastcrw.js';
import { FIRECRAWL_KEY, FIRECRAWL_SECRET_TEXT, startFirecrawlFake } from '../fakes/firecrawl.js';
import type { FakeServer } from '../fakes/rentcast.js';
import { SCRAPINGANT_KEY, SCRAPINGANT_SECRET_TEXT, startScrapingAntFake } from '../fakes/scrapingant.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import type { TestSite } from '../helpers/site.js';
import { startWebSite } from './web-fixtures.js';

// scraperA → Firecrawl v1, scraperB → fastCRW, scraperC → ScrapingAnt v2, each against its fake on 127.0.0.1.

let firecrawl: FakeServer;
let fastcrw: FakeServer;
let ant: FakeServer;
let t: TestGateway;
let site: TestSite;

beforeAll(async () => {
  [firecrawl, fastcrw, ant, site] = await Promise.all([
    startFirecrawlFake(),
    startFastcrwFake(),
    startScrapingAntFake(),
    startWebSite(),
  ]);
  t = await startGateway({
    env: {
      TOLLGATE_FIRECRAWL_API_KEY: FIRECRAWL_KEY,
      TOLLGATE_FIRECRAWL_BASE_URL: firecrawl.url,
      TOLLGATE_FASTCRW_API_KEY: FASTCRW_KEY,
      TOLLGATE_FASTCRW_BASE_URL: fastcrw.url,
      TOLLGATE_SCRAPINGANT_API_KEY: SCRAPINGANT_KEY,
      TOLLGATE_SCRAPINGANT_BASE_URL: ant.url,
    },
  });
});
afterAll(async () => {
  await t?.close();
  await Promise.all([firecrawl?.close(), fastcrw?.close(), ant?.close(), site?.close()]);
});

const run = (action: string, body: unknown, key: string) => t.post(`/api/run/${action}`, body, { key });
const URL_ = 'https://example.com/';

async function expectFailures(
  key: string,
  accountId: string,
  cases: Array<[string, unknown, number, string]>,
  secret: string,
) {
  for (const [action, body, status, code] of cases) {
    const r = await run(action, body, key);
    expect(r.status, `${action} ${JSON.stringify(body)}`).toBe(status);
    expect(r.body, action).toMatchObject({ ok: false, charged_cents: 0, error: { code } });
    expect(r.text, action).not.toContain(secret);
  }
  expect(await t.gw.ledger.balance(accountId)).toMatchObject({ balance_micros: 1_000_000, held_micros: 0 });
}

describe('[vendor:wire-format] scraperA → Firecrawl v1', () => {
  it('scrape passes our parameters through unchanged and drops vendor advisories', async () => {
    const { accountId, key } = await t.account('1');
    const body = {
      url: URL_,
      formats: ['markdown', 'links'],
      onlyMainContent: false,
      waitFor: 500,
      excludeTags: ['nav'],
    };
    const r = await run('scraperA/scrape', body, key);
    expect(r.body).toMatchObject({
      ok: true,
      charged_cents: 1,
      data: { markdown: expect.stringContaining('Fake page') },
    });
    expect(r.body.data.warning).toBeUndefined();
    expect(firecrawl.last('/v1/scrape')?.body).toEqual(body);
    expect(firecrawl.last('/v1/scrape')?.headers.authorization).toBe(`Bearer ${FIRECRAWL_KEY}`);
    const [tx] = await t.gw.ledger.transactions(accountId, 1);
    expect(tx).toMatchObject({ provider: 'firecrawl', status: 'succeeded' });
  });

  it('[vendor:failure-uncharged] [vendor:rate-limit] 4xx, 5xx, success:false, 408, 402 and 429 charge nothing', async () => {
    const { accountId, key } = await t.account('1');
    await expectFailures(
      key,
      accountId,
      [
        ['scraperA/scrape', { url: `${URL_}fail-400` }, 422, 'upstream_rejected'],
        ['scraperA/scrape', { url: `${URL_}success-false` }, 422, 'upstream_rejected'],
        ['scraperA/scrape', { url: `${URL_}server-error` }, 502, 'upstream_error'],
        ['scraperA/scrape', { url: `${URL_}timeout-408` }, 504, 'upstream_timeout'],
        ['scraperA/scrape', { url: `${URL_}no-credit` }, 503, 'upstream_unavailable'],
        ['scraperA/map', { url: `${URL_}rate-limit` }, 503, 'upstream_busy'],
        ['scraperA/extract', { urls: [URL_], prompt: 'job-fails' }, 422, 'upstream_rejected'],
      ],
      FIRECRAWL_SECRET_TEXT,
    );
    const limited = await run('scraperA/search', { query: 'rate-limit' }, key);
    expect(limited.headers['retry-after']).toBe('7');
  });

  it('[crawl:async-lifecycle] crawl: our handle for their id, limit capped, status paged with next_skip', async () => {
    const { key } = await t.account('1');
    const r = await run('scraperA/crawl', { url: URL_, limit: 50_000, maxDepth: 2 }, key);
    expect(r.body).toMatchObject({ ok: true, charged_cents: 1 });
    const id: string = r.body.data.id;
    expect(id).toMatch(/^crawl_a_/);
    expect(firecrawl.last('/v1/crawl')?.body).toEqual({ url: URL_, limit: 1000, maxDepth: 2 });
    const first = await run('scraperA/crawl_status', { id }, key);
    expect(first.body.data).toMatchObject({ status: 'scraping', completed: 1, total: 3 });
    const done = await run('scraperA/crawl_status', { id }, key);
    expect(done.body.data).toMatchObject({ status: 'completed', completed: 3, total: 3, next_skip: 2 });
    expect(done.body.data.data).toHaveLength(2);
    expect(done.text).not.toContain(FIRECRAWL_SECRET_TEXT);
    const rest = await run('scraperA/crawl_status', { id, skip: 2 }, key);
    expect(rest.body.data.data).toHaveLength(1);
    expect(rest.body.data.next_skip).toBeUndefined();
    expect(firecrawl.last()?.query).toEqual({ skip: '2' });
  });

  it('map, search and extract (polled to completion)', async () => {
    const { key } = await t.account('1');
    expect((await run('scraperA/map', { url: URL_ }, key)).body.data.links).toEqual([
      URL_,
      `${URL_}about`,
      `${URL_}blog`,
    ]);
    const s = await run('scraperA/search', { query: 'crawlers', limit: 2 }, key);
    expect(s.body.data.results).toHaveLength(2);
    expect(firecrawl.last('/v1/search')?.body).toEqual({ query: 'crawlers', limit: 2 });
    const e = await run(
      'scraperA/extract',
      { urls: [URL_], prompt: 'title', schema: { type: 'object' } },
      key,
    );
    expect(e.body).toMatchObject({ ok: true, charged_cents: 1, data: { data: { title: 'Fake title' } } });
  });
});

describe('[vendor:wire-format] scraperB → fastCRW', () => {
  it('scrape passes parameters through; vendor billing and advisory fields are dropped', async () => {
    const { key } = await t.account('1');
    const r = await run(
      'scraperB/scrape',
      { url: URL_, formats: ['markdown', 'plainText'], stealth: true, country: 'de' },
      key,
    );
    expect(r.status).toBe(200);
    expect(fastcrw.last('/v1/scrape')?.body).toEqual({
      url: URL_,
      formats: ['markdown', 'plainText'],
      onlyMainContent: true,
      renderJs: null,
      stealth: true,
      country: 'de',
    });
    expect(r.body.data).toMatchObject({ markdown: `# Fake\n\n${URL_}`, plainText: `Fake ${URL_}` });
    for (const f of ['warning', 'llmUsage', 'creditCost']) expect(r.body.data[f], f).toBeUndefined();
  });

  it('[vendor:failure-uncharged] [vendor:rate-limit] success:false walls, 422, 502 and both kinds of 429', async () => {
    const { accountId, key } = await t.account('1');
    await expectFailures(
      key,
      accountId,
      [
        ['scraperB/scrape', { url: `${URL_}blocked-page` }, 422, 'upstream_rejected'],
        ['scraperB/scrape', { url: `${URL_}bad-request` }, 422, 'upstream_rejected'],
        ['scraperB/scrape', { url: `${URL_}engine-error` }, 502, 'upstream_error'],
        ['scraperB/map', { url: `${URL_}rate-limit` }, 503, 'upstream_busy'],
        ['scraperB/search', { query: 'out-of-credits' }, 503, 'upstream_unavailable'],
      ],
      FASTCRW_SECRET_TEXT,
    );
    expect((await run('scraperB/map', { url: `${URL_}rate-limit` }, key)).headers['retry-after']).toBe('3');
  });

  it('search (flat and grouped), map, crawl and crawl_status', async () => {
    const { key } = await t.account('1');
    const flat = await run('scraperB/search', { query: 'q' }, key);
    expect(flat.body.data.results).toHaveLength(5);
    const grouped = await run('scraperB/search', { query: 'q', sources: ['news', 'web'] }, key);
    expect(Object.keys(grouped.body.data.results).sort()).toEqual(['news', 'web']);
    expect((await run('scraperB/map', { url: URL_ }, key)).body.data.links).toEqual([URL_, `${URL_}docs`]);
    const c = await run('scraperB/crawl', { url: URL_, maxPages: 5 }, key);
    expect(c.body).toMatchObject({ charged_cents: 10, data: { id: expect.stringMatching(/^crawl_b_/) } });
    expect(fastcrw.last('/v1/crawl')?.body).toEqual({ url: URL_, maxPages: 5, maxDepth: 2, renderJs: null });
    const s1 = await run('scraperB/crawl_status', { id: c.body.data.id }, key);
    expect(s1.body).toMatchObject({ charged_cents: 1, data: { status: 'scraping', completed: 1, total: 2 } });
    const s2 = await run('scraperB/crawl_status', { id: c.body.data.id }, key);
    expect(s2.body.data).toMatchObject({ status: 'completed', completed: 2, total: 2 });
    expect(s2.text).not.toContain(FASTCRW_SECRET_TEXT);
  });

  it('[extract:inline-or-async] extract inline, per-URL failures in our words, async with extract_status', async () => {
    const { accountId, key } = await t.account('1');
    const inline = await run(
      'scraperB/extract',
      { urls: [URL_, `${URL_}bad-url`], prompt: 'title', basis: true },
      key,
    );
    expect(inline.body).toMatchObject({ ok: true, charged_cents: 5 });
    expect(inline.body.data.results).toEqual([
      { url: URL_, status: 'completed', data: { title: 'Title 0' } },
      { url: `${URL_}bad-url`, status: 'failed', error: 'The extraction failed for this URL.' },
    ]);
    const allBad = await run('scraperB/extract', { urls: [`${URL_}bad-url`], prompt: 'title' }, key);
    expect(allBad.body).toMatchObject({ ok: false, charged_cents: 0 });

    const job = await run('scraperB/extract', { urls: [URL_], prompt: 'go-async' }, key);
    expect(job.body.data).toMatchObject({ status: 'processing', id: expect.stringMatching(/^extract_b_/) });
    const p1 = await run('scraperB/extract_status', { id: job.body.data.id }, key);
    expect(p1.body.data).toMatchObject({
      status: 'processing',
      results: [{ url: URL_, status: 'processing' }],
    });
    const p2 = await run('scraperB/extract_status', { id: job.body.data.id }, key);
    expect(p2.body.data).toMatchObject({
      status: 'completed',
      results: [{ url: URL_, status: 'completed' }],
    });
    expect((await t.gw.ledger.balance(accountId)).balance_micros).toBe(1_000_000 - 50_000 - 50_000 - 20_000);
  });
});

describe('[vendor:wire-format] scraperC → ScrapingAnt v2', () => {
  it('scrape sends options as GET query parameters with the key in x-api-key', async () => {
    const { key } = await t.account('1');
    const snippet = Buffer.from('document.title').toString('base64');
    const r = await run(
      'scraperC/scrape',
      {
        url: URL_,
        wait_for_selector: '#main',
        js_snippet: snippet,
        block_resource: ['image', 'font'],
        proxy_country: 'DE',
        timeout: 30,
        cookies: 'a=1;b=2',
      },
      key,
    );
    expect(r.body).toMatchObject({
      ok: true,
      charged_cents: 1,
      data: { raw: expect.stringContaining('Fake datacenter') },
    });
    const req = ant.last('/v2/general');
    expect(req?.method).toBe('GET');
    expect(req?.headers['x-api-key']).toBe(SCRAPINGANT_KEY);
    expect(req?.query).toEqual({
      url: URL_,
      browser: 'true',
      wait_for_selector: '#main',
      js_snippet: snippet,
      block_resource: 'font',
      proxy_country: 'de',
      timeout: '30',
      cookies: 'a=1;b=2',
    });
  });

  it('scrape_residential (4 cents), markdown and extract', async () => {
    const { accountId, key } = await t.account('1');
    const res = await run('scraperC/scrape_residential', { url: URL_, browser: false }, key);
    expect(res.body).toMatchObject({
      charged_cents: 4,
      data: { raw: expect.stringContaining('Fake residential') },
    });
    expect(ant.last('/v2/general')?.query).toMatchObject({ proxy_type: 'residential', browser: 'false' });
    const md = await run('scraperC/markdown', { url: URL_ }, key);
    expect(md.body.data).toEqual({ url: URL_, markdown: `# Fake\n\n${URL_}` });
    const ex = await run('scraperC/extract', { url: URL_, extract_properties: 'title, price(number)' }, key);
    expect(ex.body).toMatchObject({ charged_cents: 5, data: { title: 'Fake title', price: 9.99 } });
    expect(ant.last('/v2/extract')?.query.extract_properties).toBe('title, price(number)');
    const [tx] = await t.gw.ledger.transactions(accountId, 1);
    expect(tx?.provider).toBe('scrapingant');
  });

  it('[vendor:failure-uncharged] 423, 409, 422, 500 and a target error status charge nothing', async () => {
    const { accountId, key } = await t.account('1');
    await expectFailures(
      key,
      accountId,
      [
        ['scraperC/scrape', { url: `${URL_}antbot-blocked` }, 422, 'upstream_rejected'],
        ['scraperC/scrape', { url: `${URL_}target-404` }, 422, 'upstream_rejected'],
        ['scraperC/markdown', { url: `${URL_}busy-409` }, 503, 'upstream_busy'],
        ['scraperC/extract', { url: `${URL_}bad-param`, extract_properties: 'x' }, 422, 'upstream_rejected'],
        ['scraperC/scrape_residential', { url: `${URL_}internal-500` }, 502, 'upstream_error'],
      ],
      SCRAPINGANT_SECRET_TEXT,
    );
  });
});

describe('[web:engine-choice] vendor or built-in per group', () => {
  it('builtin ignores a configured key; vendor without a key is not_configured; auto with a key uses it', async () => {
    const g = await startGateway({
      env: {
        TOLLGATE_SCRAPERA_ENGINE: 'builtin',
        TOLLGATE_FIRECRAWL_API_KEY: FIRECRAWL_KEY,
        TOLLGATE_FIRECRAWL_BASE_URL: firecrawl.url,
        TOLLGATE_SCRAPERB_ENGINE: 'vendor',
        TOLLGATE_SCRAPINGANT_API_KEY: 'wrong-key',
        TOLLGATE_SCRAPINGANT_BASE_URL: ant.url,
      },
    });
    try {
      const { accountId, key } = await g.account('1');
      const before = firecrawl.requests.length;
      const a = await g.post('/api/run/scraperA/scrape', { url: `${site.url}/article` }, { key });
      expect(a.body.data.markdown).toContain('# Great Article');
      expect(firecrawl.requests.length).toBe(before);
      const b = await g.post('/api/run/scraperB/scrape', { url: `${site.url}/article` }, { key });
      expect(b.status).toBe(503);
      expect(b.body.error.details.env).toContain('TOLLGATE_FASTCRW_API_KEY');
      // auto + key → the vendor, here refusing our (wrong) key: 503, the operator's problem, uncharged.
      const c = await g.post('/api/run/scraperC/scrape', { url: URL_ }, { key });
      expect(c.status).toBe(503);
      expect(c.body.error.code).toBe('upstream_unavailable');
      expect((await g.gw.ledger.balance(accountId)).balance_micros).toBe(990_000);
    } finally {
      await g.close();
    }
  });
});
