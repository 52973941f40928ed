import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FASTCRW_KEY, startFastcrwFake } from '../fakes/fastcrw.js';
import { FIRECRAWL_KEY, startFirecrawlFake } from '../fakes/firecrawl.js';
import type { FakeServer } from '../fakes/rentcast.js';
import { SCRAPINGANT_KEY, startScrapingAntFake } from '../fakes/scrapingant.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { html, startSite, type TestSite } from '../helpers/site.js';

let fc: FakeServer;
let crw: FakeServer;
let site: TestSite;
let both: TestGateway;
let none: TestGateway;
let ant: FakeServer;
let hard: TestGateway;

beforeAll(async () => {
  fc = await startFirecrawlFake();
  crw = await startFastcrwFake();
  site = await startSite({
    '/a': (_q, res) => {
      res.writeHead(200, { 'content-type': 'text/html' }).end(html('<h1>Alpha</h1><p>First page.</p>', 'A'));
    },
    '/b': (_q, res) => {
      res.writeHead(200, { 'content-type': 'text/html' }).end(html('<h1>Beta</h1><p>Second page.</p>', 'B'));
    },
  });
  both = await startGateway({
    env: {
      TOLLGATE_FIRECRAWL_API_KEY: FIRECRAWL_KEY,
      TOLLGATE_FIRECRAWL_BASE_URL: fc.url,
      TOLLGATE_FASTCRW_API_KEY: FASTCRW_KEY,
      TOLLGATE_FASTCRW_BASE_URL: crw.url,
    },
  });
  none = await startGateway();
  ant = await startScrapingAntFake();
  // No browser here: hard pages go through the residential proxies.
  hard = await startGateway({
    env: {
      TOLLGATE_SCRAPINGANT_API_KEY: SCRAPINGANT_KEY,
      TOLLGATE_SCRAPINGANT_BASE_URL: ant.url,
      TOLLGATE_CHROMIUM_PATH: '/nonexistent/chromium',
    },
  });
});
afterAll(async () => {
  await Promise.all([
    both.close(),
    none.close(),
    hard.close(),
    fc.close(),
    crw.close(),
    site.close(),
    ant.close(),
  ]);
});

describe('platform/supersearch', () => {
  it('[http:not-configured] without a search vendor, a query answers not_configured, uncharged', async () => {
    const { accountId, key } = await none.account('1');
    const r = await none.post('/api/run/platform/supersearch', { query: 'node release' }, { key });
    expect(r.status).toBe(503);
    expect(r.body.error.message).toContain('TOLLGATE_FIRECRAWL_API_KEY');
    expect(await none.gw.ledger.transactions(accountId, 5)).toHaveLength(0);
  });

  it('[supersearch:cites-transaction] urls skip search: pages fetched as markdown, each citing the call', async () => {
    const { accountId, key } = await none.account('1');
    const r = await none.post(
      '/api/run/platform/supersearch',
      { query: 'greek letters', urls: [`${site.url}/a`, `${site.url}/b`] },
      { key },
    );
    expect(r.status).toBe(200);
    expect(r.body.charged_cents).toBe(5);
    expect(r.body.data.evidence).toHaveLength(2);
    for (const e of r.body.data.evidence) {
      expect(e.transaction_id).toBe(r.body.transaction_id);
      expect(e.source).toBe('fetch');
    }
    expect(r.body.data.evidence.map((e: { markdown: string }) => e.markdown).sort()).toEqual([
      '# Alpha\n\nFirst page.',
      '# Beta\n\nSecond page.',
    ]);
    expect((await none.gw.ledger.balance(accountId)).balance_micros).toBe(950_000);
  });

  it('[supersearch:facet-sources] facets ask each index for their own kind of source; results merge and dedupe', async () => {
    const { key } = await both.account('1');
    crw.requests.length = 0;
    fc.requests.length = 0;
    const r = await both.post(
      '/api/run/platform/supersearch',
      {
        query: 'rust async',
        facets: ['news', 'academic', 'code', 'web'],
        excludeDomains: ['spam.test'],
        maxResults: 25,
      },
      { key },
    );
    expect(r.status).toBe(200);
    const bodies = crw.requests
      .filter((q) => q.path === '/v1/search')
      .map((q) => q.body as Record<string, unknown>);
    // news: the news vertical with recency (a week by default); academic and code: their engines.
    expect(bodies).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ sources: ['news'], tbs: 'qdr:w' }),
        expect.objectContaining({ categories: ['research'] }),
        expect.objectContaining({ categories: ['github'] }),
      ]),
    );
    const ev = r.body.data.evidence as Array<{
      url: string;
      facet: string;
      transaction_id: string;
      published_at?: string;
    }>;
    expect(new Set(ev.map((e) => e.url)).size).toBe(ev.length);
    const byFacet = (f: string) => ev.filter((e) => e.facet === f).map((e) => new URL(e.url).hostname);
    expect(byFacet('news').every((h) => h === 'news.example.net')).toBe(true);
    expect(byFacet('academic').every((h) => h === 'arxiv.org')).toBe(true);
    expect(byFacet('code').every((h) => h === 'github.com')).toBe(true);
    expect(ev.find((e) => e.facet === 'news')?.published_at).toBe('2026-11-20');
    for (const e of ev) expect(e.transaction_id).toBe(r.body.transaction_id);
    expect(r.body.data.plan).toMatchObject({
      routed_by: 'caller',
      facets: ['news', 'academic', 'code', 'web'],
    });
    // The web facet goes to the plain web index: its query carries only the caller's exclusion.
    const web = fc.requests
      .filter((q) => q.path === '/v1/search')
      .map((q) => (q.body as { query: string }).query);
    expect(web).toEqual(['rust async -site:spam.test']);
    expect(r.body.charged_cents).toBe(5);
  });

  it('[supersearch:intent-routing] only a query: the classifier picks facets, recency and platform', async () => {
    const { key } = await both.account('1');
    crw.requests.length = 0;
    const r = await both.post(
      '/api/run/platform/supersearch',
      { query: 'latest arxiv papers and reddit threads about state space models' },
      { key },
    );
    expect(r.status).toBe(200);
    const plan = r.body.data.plan;
    expect(plan.routed_by).toBe('classifier');
    expect(plan.facets).toEqual(expect.arrayContaining(['news', 'academic', 'social']));
    expect(plan.recency_days).toBe(7);
    expect(plan.platform).toBe('reddit');
    const social = crw.requests
      .filter((q) => q.path === '/v1/search')
      .map((q) => q.body as { query: string; categories?: string[] })
      .find((b) => b.categories?.[0] === 'social media');
    expect(social?.query).toContain('site:reddit.com');
  });

  it('[supersearch:budget] budgetCents caps the source calls; facets that do not fit are skipped and said', async () => {
    const { key } = await both.account('1');
    crw.requests.length = 0;
    fc.requests.length = 0;
    const r = await both.post(
      '/api/run/platform/supersearch',
      { query: 'vector databases', facets: ['web', 'news', 'code', 'docs', 'academic'], budgetCents: 2 },
      { key },
    );
    expect(r.status).toBe(200);
    expect(r.body.data.plan.facets).toEqual(['web', 'news']);
    expect(r.body.data.plan.skipped.map((s: { facet: string }) => s.facet)).toEqual([
      'code',
      'docs',
      'academic',
    ]);
    expect(r.body.data.plan.spent_cents).toBeLessThanOrEqual(2);
    const calls = [...crw.requests, ...fc.requests].filter((q) => q.path === '/v1/search');
    expect(calls).toHaveLength(2);
    expect(r.body.charged_cents).toBe(5);
  });

  it('[supersearch:merge] a page found by several facets ranks first and names them all', async () => {
    const { key } = await both.account('1');
    const r = await both.post(
      '/api/run/platform/supersearch',
      { query: 'merge me', facets: ['web', 'docs'], maxResults: 3 },
      { key },
    );
    expect(r.status).toBe(200);
    const first = r.body.data.evidence[0];
    expect(first.url).toBe('https://example.com/0');
    expect(first.also_found_by).toEqual(['docs']);
  });

  it('[supersearch:scrape-hard] hard pages go through the residential path, within the budget', async () => {
    const { key } = await hard.account('1');
    const r = await hard.post(
      '/api/run/platform/supersearch',
      {
        query: 'blocked page',
        urls: ['https://walled.example/a', 'https://walled.example/b'],
        facets: ['scrape-hard'],
      },
      { key },
    );
    expect(r.status).toBe(200);
    // A residential fetch costs 4 of the default 4-cent budget: one page, and the plan says so.
    expect(r.body.data.evidence).toHaveLength(1);
    expect(r.body.data.evidence[0]).toMatchObject({ source: 'residential', facet: 'scrape-hard' });
    expect(r.body.data.evidence[0].markdown).toContain('Fake residential');
    expect(r.body.data.plan).toMatchObject({ facets: ['scrape-hard'], budget_cents: 4, spent_cents: 4 });
    expect(ant.requests.every((q) => q.query.proxy_type === 'residential')).toBe(true);
    expect(r.body.charged_cents).toBe(5);
  });

  it('falls back down the source ladder when the first index fails', async () => {
    const { key } = await both.account('1');
    fc.script({ status: 500, body: { success: false, error: 'x' } });
    const r = await both.post(
      '/api/run/platform/supersearch',
      { query: 'fallback please', maxResults: 2 },
      { key },
    );
    expect(r.status).toBe(200);
    expect(r.body.data.evidence[0].source).toBe('fastcrw');
  });

  it('[billing:charge-only-on-success] every source failing is a failure: classified, vendor text hidden, uncharged', async () => {
    const { accountId, key } = await both.account('1');
    const r = await both.post(
      '/api/run/platform/supersearch',
      { query: 'server-error engine-error everywhere' },
      { key },
    );
    expect(r.status).toBeGreaterThanOrEqual(500);
    expect(r.text).not.toMatch(/INTERNAL/);
    expect((await both.gw.ledger.balance(accountId)).balance_micros).toBe(1_000_000);
  });

  it('fidelityRequired fetches full content; the social facet targets the platform', async () => {
    const { key } = await both.account('1');
    const r = await both.post(
      '/api/run/platform/supersearch',
      { query: 'cats', facets: ['social'], platform: 'reddit', maxResults: 1, timeCritical: true },
      { key },
    );
    expect(r.status).toBe(200);
    const bodies = [...fc.requests, ...crw.requests]
      .filter((q) => q.path === '/v1/search')
      .map((q) => (q.body as { query: string }).query);
    expect(bodies).toContain('cats (site:reddit.com)');
  });

  it('[catalog:constraints] the spec limits are enforced', async () => {
    const { key } = await both.account('1');
    const bad = await both.post(
      '/api/run/platform/supersearch',
      {
        query: '',
        facets: [],
        maxResults: 26,
        recencyDays: 0,
        asOf: '202',
        budgetCents: 5,
        urls: [],
        domains: Array(11).fill('a.com'),
        platform: 'myspace',
      },
      { key },
    );
    expect(bad.status).toBe(400);
    const paths = bad.body.error.details.issues.map((i: { path: string }) => i.path).sort();
    expect(paths).toEqual([
      'asOf',
      'budgetCents',
      'domains',
      'facets',
      'maxResults',
      'platform',
      'query',
      'recencyDays',
      'urls',
    ]);
  });
});
