import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import type { TestSite } from '../helpers/site.js';
import { FakeLlm, startWebSite } from './web-fixtures.js';

// scraperA/B/C on the built-in engine (no vendor keys), end to end over HTTP against a local site.

let site: TestSite;
let t: TestGateway;
let llm: FakeLlm;

beforeAll(async () => {
  site = await startWebSite({ slowMs: 3000 });
  t = await startGateway({
    env: {
      TOLLGATE_FETCH_MAX_BYTES: String(1024 * 1024),
      // The engine's page timeout follows the upstream timeout: 1 s keeps the slow-page case quick.
      TOLLGATE_UPSTREAM_TIMEOUT_SECONDS: '1',
    },
  });
});
afterAll(async () => {
  await t?.close();
  await site?.close();
});

const run = (action: string, body: unknown, key: string) => t.post(`/api/run/${action}`, body, { key });

async function expectUncharged(accountId: string) {
  const b = await t.gw.ledger.balance(accountId);
  expect(b).toMatchObject({ balance_micros: 1_000_000, held_micros: 0 });
}

describe('[web:scrape-formats] built-in scrape', () => {
  it('scraperC/markdown with browser:false: the page as Markdown, 1 cent', async () => {
    const { accountId, key } = await t.account('1');
    const r = await run('scraperC/markdown', { url: `${site.url}/article`, browser: false }, key);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ ok: true, charged_cents: 1, data: { url: `${site.url}/article` } });
    expect(r.body.data.markdown).toContain('# Great Article');
    expect(r.body.data.markdown).toContain(`[link](${site.url}/tree/1)`);
    expect((await t.gw.ledger.balance(accountId)).balance_micros).toBe(990_000);
    const [tx] = await t.gw.ledger.transactions(accountId, 1);
    expect(tx).toMatchObject({ action: 'scraperC/markdown', status: 'succeeded', provider: 'builtin' });
  });

  it('scraperC/scrape with browser:false returns the raw HTML', async () => {
    const { key } = await t.account('1');
    const r = await run('scraperC/scrape', { url: `${site.url}/article`, browser: false }, key);
    expect(r.body.data.raw).toContain('<aside>Related stuff</aside>');
  });

  it('scraperB/scrape returns every format asked for, main content by default', async () => {
    const { key } = await t.account('1');
    const r = await run(
      'scraperB/scrape',
      {
        url: `${site.url}/article`,
        formats: ['markdown', 'html', 'rawHtml', 'plainText', 'links'],
        renderJs: false,
      },
      key,
    );
    expect(r.status).toBe(200);
    const d = r.body.data;
    expect(d.markdown).toBe(
      `# Great Article\n\nThe **first** paragraph with a [link](${site.url}/tree/1).\n\n- alpha\n- beta`,
    );
    expect(d.plainText).toBe('Great Article\n\nThe first paragraph with a link.\n\nalpha\nbeta');
    expect(d.html).toContain('<h1>Great Article</h1>');
    expect(d.html).not.toContain('Related');
    expect(d.rawHtml).toContain('<nav>');
    expect(d.links).toEqual([
      `${site.url}/`,
      `${site.url}/tree/0`,
      `${site.url}/tree/1`,
      'https://elsewhere.test/x',
    ]);
    expect(d.metadata).toMatchObject({
      title: 'Article title',
      statusCode: 200,
      sourceURL: `${site.url}/article`,
      rendered: false,
    });
  });

  it('scraperA/scrape: Markdown by default; onlyMainContent false keeps the whole page', async () => {
    const { key } = await t.account('1');
    const main = await run('scraperA/scrape', { url: `${site.url}/article` }, key);
    expect(main.body.data.markdown).not.toContain('Related stuff');
    const all = await run('scraperA/scrape', { url: `${site.url}/article`, onlyMainContent: false }, key);
    expect(all.body.data.markdown).toContain('Related stuff');
    expect(all.body.data.metadata.title).toBe('Article title');
  });
});

describe('[web:fetch-limits] redirects, charsets, size, time and content types', () => {
  it('follows redirects and reports the final URL', async () => {
    const { key } = await t.account('1');
    const r = await run('scraperB/scrape', { url: `${site.url}/redirect`, renderJs: false }, key);
    expect(r.body.data.metadata).toMatchObject({
      sourceURL: `${site.url}/redirect`,
      url: `${site.url}/article`,
    });
  });

  it('decodes the charset of the page', async () => {
    const { key } = await t.account('1');
    const r = await run('scraperC/markdown', { url: `${site.url}/latin1`, browser: false }, key);
    expect(r.body.data.markdown).toBe('café crème');
  });

  it('a redirect loop, a huge page, a slow page, an image and a 404 page fail uncharged', async () => {
    const { accountId, key } = await t.account('1');
    const cases: Array<[string, number, string]> = [
      ['/redirect-loop', 422, 'upstream_rejected'],
      ['/huge', 422, 'upstream_rejected'],
      ['/slow', 504, 'upstream_timeout'],
      ['/image.png', 422, 'upstream_rejected'],
      ['/gone', 422, 'upstream_rejected'],
    ];
    for (const [path, status, code] of cases) {
      const r = await run('scraperB/scrape', { url: `${site.url}${path}`, renderJs: false }, key);
      expect(r.status, path).toBe(status);
      expect(r.body, path).toMatchObject({ ok: false, charged_cents: 0, error: { code } });
    }
    const gone = await run('scraperC/scrape', { url: `${site.url}/gone`, browser: false }, key);
    expect(gone.body.error.details).toEqual({ target_status: 404 });
    await expectUncharged(accountId);
  });

  it('JSON and plain text are content of their own', async () => {
    const { key } = await t.account('1');
    const json = await run('scraperB/scrape', { url: `${site.url}/data.json`, renderJs: false }, key);
    expect(json.body.data.markdown).toBe('```json\n{"hello":"world"}\n```');
    const txt = await run('scraperC/markdown', { url: `${site.url}/notes.txt`, browser: false }, key);
    expect(txt.body.data.markdown).toBe('plain notes');
  });
});

describe('[web:map] map', () => {
  it('scraperA/map: sitemap index, robots sitemap and page links, same site, deduplicated', async () => {
    const { key } = await t.account('1');
    const r = await run('scraperA/map', { url: `${site.url}/article` }, key);
    expect(r.status).toBe(200);
    const links: string[] = r.body.data.links;
    expect(links[0]).toBe(`${site.url}/article`);
    for (const p of ['/from-sitemap', '/from-robots-sitemap', '/tree/0', '/tree/1', '/']) {
      expect(links, p).toContain(`${site.url}${p}`);
    }
    expect(links.some((l) => l.includes('elsewhere.test'))).toBe(false);
    expect(new Set(links).size).toBe(links.length);
  });

  it('scraperB/map: useSitemap false skips sitemaps; maxDepth follows links further', async () => {
    const { key } = await t.account('1');
    const flat = await run('scraperB/map', { url: `${site.url}/tree/0`, useSitemap: false }, key);
    expect(flat.body.data.links.sort()).toEqual([
      `${site.url}/tree/0`,
      `${site.url}/tree/1`,
      `${site.url}/tree/2`,
    ]);
    const deep = await run(
      'scraperB/map',
      { url: `${site.url}/tree/0`, useSitemap: false, maxDepth: 2 },
      key,
    );
    expect(deep.body.data.links).toHaveLength(15);
  });
});

describe('[web:vendor-only-not-configured] vendor-only capabilities without their vendor', () => {
  it('search, residential proxies, proxy countries, stealth and changeTracking answer 503 not_configured, uncharged', async () => {
    const { accountId, key } = await t.account('1');
    const url = `${site.url}/article`;
    const cases: Array<[string, unknown, string]> = [
      ['scraperA/search', { query: 'x' }, 'TOLLGATE_FIRECRAWL_API_KEY'],
      ['scraperB/search', { query: 'x' }, 'TOLLGATE_FASTCRW_API_KEY'],
      ['scraperC/scrape_residential', { url }, 'TOLLGATE_SCRAPINGANT_API_KEY'],
      ['scraperC/scrape', { url, browser: false, proxy_country: 'de' }, 'TOLLGATE_SCRAPINGANT_API_KEY'],
      ['scraperB/scrape', { url, stealth: true }, 'TOLLGATE_FASTCRW_API_KEY'],
      ['scraperB/scrape', { url, country: 'us' }, 'TOLLGATE_FASTCRW_API_KEY'],
      ['scraperA/scrape', { url, formats: ['changeTracking'] }, 'TOLLGATE_FIRECRAWL_API_KEY'],
    ];
    for (const [action, body, env] of cases) {
      const r = await run(action, body, key);
      expect(r.status, action).toBe(503);
      expect(r.body.error.code, action).toBe('not_configured');
      expect(r.body.error.details.env, action).toContain(env);
    }
    await expectUncharged(accountId);
    expect(await t.gw.ledger.transactions(accountId, 10)).toEqual([]);
  });

  it('[catalog:constraints] bad input is a 400 naming the field, before anything else', async () => {
    const { key } = await t.account('1');
    const bad: Array<[string, unknown, string]> = [
      ['scraperB/scrape', { url: `${site.url}/`, formats: ['pdf'] }, 'formats.0'],
      ['scraperC/scrape', { url: `${site.url}/`, js_snippet: '%%%not base64' }, 'js_snippet'],
      [
        'scraperC/scrape',
        { url: `${site.url}/`, browser: false, wait_for_selector: '#x' },
        'wait_for_selector',
      ],
      ['scraperC/markdown', { url: `${site.url}/`, extra: 1 }, ''],
      ['scraperB/crawl', { url: `${site.url}/`, formats: ['summary'] }, 'formats.0'],
      ['scraperB/extract', { urls: [`${site.url}/`] }, 'prompt'],
      ['scraperA/scrape', { url: 'ftp://x.test/' }, 'url'],
    ];
    for (const [action, body, path] of bad) {
      const r = await run(action, body, key);
      expect(r.status, action).toBe(400);
      expect(JSON.stringify(r.body.error.details.issues), action).toContain(`"path":"${path}`);
    }
  });
});

describe('[web:llm-formats] summary, json and extract through the internal LLM', () => {
  it('without an LLM they answer not_configured naming TOLLGATE_LLM_API_KEY, uncharged', async () => {
    t.gw.run.services.llm = undefined;
    const { accountId, key } = await t.account('1');
    const url = `${site.url}/article`;
    const cases: Array<[string, unknown]> = [
      ['scraperB/scrape', { url, formats: ['summary'] }],
      ['scraperB/scrape', { url, formats: ['json'], jsonSchema: { type: 'object' } }],
      ['scraperA/scrape', { url, formats: ['json'], jsonOptions: { prompt: 'x' } }],
      ['scraperA/extract', { urls: [url], prompt: 'title' }],
      ['scraperB/extract', { urls: [url], prompt: 'title' }],
      ['scraperC/extract', { url, browser: false, extract_properties: 'title' }],
    ];
    for (const [action, body] of cases) {
      const r = await run(action, body, key);
      expect(r.status, action).toBe(503);
      expect(r.body.error.details.env, action).toContain('TOLLGATE_LLM_API_KEY');
    }
    await expectUncharged(accountId);
  });

  it('with an LLM: summary and schema-validated json', async () => {
    llm = new FakeLlm();
    t.gw.run.services.llm = llm;
    const { key } = await t.account('1');
    const schema = { type: 'object', properties: { title: { type: 'string' } }, required: ['title'] };
    const r = await run(
      'scraperB/scrape',
      { url: `${site.url}/article`, formats: ['summary', 'json'], jsonSchema: schema, renderJs: false },
      key,
    );
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({
      summary: 'A short summary of the page.',
      json: { title: 'Great Article' },
    });
    expect(r.body.data.markdown).toBeUndefined();
    // The page reached the model as fenced data, with the schema.
    const last = llm.calls.at(-1);
    expect(last?.messages.at(-1)?.content).toContain('Great Article');
    expect(last?.jsonSchema).toEqual(schema);
  });

  it('a model answer that does not match the schema is a 502, uncharged; a bad schema a 400', async () => {
    llm = new FakeLlm();
    llm.json = { title: 42 };
    t.gw.run.services.llm = llm;
    const { accountId, key } = await t.account('1');
    const schema = { type: 'object', properties: { title: { type: 'string' } }, required: ['title'] };
    const r = await run('scraperA/extract', { urls: [`${site.url}/article`], schema }, key);
    expect(r.status).toBe(502);
    expect(r.body.error.code).toBe('bad_response');
    const bad = await run(
      'scraperA/extract',
      { urls: [`${site.url}/article`], schema: { type: 'objekt' } },
      key,
    );
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.issues[0].path).toBe('schema');
    await expectUncharged(accountId);
  });

  it('scraperA/extract and scraperC/extract return the extracted data', async () => {
    llm = new FakeLlm();
    t.gw.run.services.llm = llm;
    const { key } = await t.account('1');
    const a = await run(
      'scraperA/extract',
      { urls: [`${site.url}/article`, `${site.url}/tree/0`], prompt: 'title' },
      key,
    );
    expect(a.body).toMatchObject({ ok: true, charged_cents: 1, data: { data: { title: 'Great Article' } } });
    expect(llm.calls.at(-1)?.messages.at(-1)?.content).toContain(`<page url="${site.url}/tree/0">`);
    llm.json = { title: 'Great Article', firstItem: 'alpha' };
    const c = await run(
      'scraperC/extract',
      { url: `${site.url}/article`, browser: false, extract_properties: 'title, firstItem' },
      key,
    );
    expect(c.body).toMatchObject({
      ok: true,
      charged_cents: 5,
      data: { title: 'Great Article', firstItem: 'alpha' },
    });
  });
});

describe('[extract:inline-or-async] built-in scraperB/extract', () => {
  it('answers inline with per-URL results and checked basis', async () => {
    llm = new FakeLlm();
    // Used for the extraction and then as the quotes: "Great Article" is in the page, "gamma" is not.
    llm.json = { title: 'Great Article', item: 'gamma' };
    t.gw.run.services.llm = llm;
    const { key } = await t.account('1');
    const r = await run(
      'scraperB/extract',
      { urls: [`${site.url}/article`, `${site.url}/gone`], prompt: 'title', basis: true },
      key,
    );
    expect(r.body).toMatchObject({ ok: true, charged_cents: 5 });
    const [ok, failed] = r.body.data.results;
    expect(ok).toMatchObject({
      url: `${site.url}/article`,
      status: 'completed',
      data: { title: 'Great Article' },
    });
    expect(ok.basis).toEqual([
      expect.objectContaining({ field: 'title', status: 'supported' }),
      expect.objectContaining({ field: 'item', status: 'unverified' }),
    ]);
    expect(failed).toMatchObject({ url: `${site.url}/gone`, status: 'failed' });
    expect(failed.error).toContain('HTTP 404');
  });

  it('goes async past the inline time, then extract_status reports processing → completed', async () => {
    const g = await startGateway({ env: { TOLLGATE_EXTRACT_INLINE_SECONDS: '0' } });
    try {
      const slow = new FakeLlm();
      let release: () => void = () => undefined;
      const gate = new Promise<void>((r) => (release = r));
      const inner = slow.complete;
      slow.complete = async (req) => {
        await gate;
        return inner(req);
      };
      g.gw.run.services.llm = slow;
      const { accountId, key } = await g.account('1');
      const r = await g.post(
        '/api/run/scraperB/extract',
        { urls: [`${site.url}/article`], prompt: 'title' },
        { key },
      );
      expect(r.body).toMatchObject({ ok: true, charged_cents: 5, data: { status: 'processing' } });
      const id = r.body.data.id;
      const p1 = await g.post('/api/run/scraperB/extract_status', { id }, { key });
      expect(p1.body.data).toMatchObject({ status: 'processing', results: [{ status: 'processing' }] });
      release();
      let done: { status: string; results: unknown[] } | undefined;
      for (let i = 0; i < 50 && done?.status !== 'completed'; i++) {
        await new Promise((res) => setTimeout(res, 50));
        done = (await g.post('/api/run/scraperB/extract_status', { id }, { key })).body.data;
      }
      expect(done).toMatchObject({
        status: 'completed',
        results: [{ status: 'completed', data: { title: 'Great Article' } }],
      });
      const other = await g.account('1');
      const stranger = await g.post('/api/run/scraperB/extract_status', { id }, { key: other.key });
      expect(stranger.status).toBe(404);
      expect((await g.gw.ledger.balance(accountId)).held_micros).toBe(0);
    } finally {
      await g.close();
    }
  });
});
