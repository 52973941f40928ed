import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FASTCRW_KEY, startFastcrwFake } from '../fakes/fastcrw.js';
import { FIRECRAWL_KEY, startFirecrawlFake } from '../fakes/firecrawl.js';
import type { FakeServer } from '../fakes/rentcast.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { html, startSite, type TestSite } from '../helpers/site.js';

let fc: FakeServer;
let crw: FakeServer;
let site: TestSite;
let both: TestGateway;
let none: TestGateway;

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
});
afterAll(async () => {
  await Promise.all([both.close(), none.close(), fc.close(), crw.close(), site.close()]);
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

  it('facets run concurrently as query operators; results are filtered, deduplicated and capped', async () => {
    const { key } = await both.account('1');
    const r = await both.post(
      '/api/run/platform/supersearch',
      {
        query: 'rust async',
        facets: ['web', 'code'],
        domains: ['example.com'],
        excludeDomains: ['spam.test'],
        recencyDays: 5,
        maxResults: 4,
      },
      { key },
    );
    expect(r.status).toBe(200);
    const ev = r.body.data.evidence as Array<{ url: string; facet: string; transaction_id: string }>;
    expect(ev).toHaveLength(4);
    // The fake index answers the same pages to both facets: duplicates are dropped, whatever facet found them.
    expect(new Set(ev.map((e) => e.url)).size).toBe(4);
    for (const e of ev) expect(['web', 'code']).toContain(e.facet);
    const queries = fc.requests
      .filter((q) => q.path === '/v1/search')
      .map((q) => q.body as { query: string; tbs?: string });
    expect(queries.map((q) => q.query)).toEqual(
      expect.arrayContaining([
        'rust async (site:example.com) -site:spam.test',
        'rust async (site:github.com OR site:stackoverflow.com) (site:example.com) -site:spam.test',
      ]),
    );
    expect(queries.every((q) => q.tbs === 'qdr:w')).toBe(true);
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
    const last = [...fc.requests, ...crw.requests].filter((q) => q.path === '/v1/search').pop()?.body as {
      query: string;
    };
    expect(last.query).toBe('cats (site:reddit.com)');
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
