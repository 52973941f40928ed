import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { html, type TestSite } from '../helpers/site.js';
import { startWebSite } from './web-fixtures.js';

// JavaScript rendering in Debian's headless Chromium (driven by playwright-core), and the clear 503 when no
// browser is installed. One browser is launched lazily and reused by every test here.

let site: TestSite;
let t: TestGateway;
let key: string;

beforeAll(async () => {
  site = await startWebSite();
  site.route(
    '/with-image',
    (_q, res) =>
      void res
        .writeHead(200, { 'content-type': 'text/html' })
        .end(html('<h1>Pic</h1><img src="/pixel.png">')),
  );
  site.route(
    '/pixel.png',
    (_q, res) => void res.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.alloc(8)),
  );
  t = await startGateway();
  ({ key } = await t.account('1'));
});
afterAll(async () => {
  await t?.close();
  await site?.close();
});

const run = (action: string, body: unknown, k = key) => t.post(`/api/run/${action}`, body, { key: k });
const b64 = (s: string) => Buffer.from(s).toString('base64');

describe('[web:js-render] headless Chromium', () => {
  it('renderJs null detects a page that needs JavaScript and renders it; false does not', async () => {
    const auto = await run('scraperB/scrape', { url: `${site.url}/spa` });
    expect(auto.status).toBe(200);
    expect(auto.body.data.markdown).toContain('# Rendered by JS');
    expect(auto.body.data.metadata.rendered).toBe(true);
    const plain = await run('scraperB/scrape', { url: `${site.url}/spa`, renderJs: false });
    expect(plain.body.data.markdown).not.toContain('Rendered by JS');
    expect(plain.body.data.metadata.rendered).toBe(false);
    // A page with its own text is not rendered on auto.
    const article = await run('scraperB/scrape', { url: `${site.url}/article` });
    expect(article.body.data.metadata.rendered).toBe(false);
  }, 60_000);

  it('scraperC: the browser by default, wait_for_selector, cookies and return_page_source', async () => {
    const r = await run('scraperC/scrape', {
      url: `${site.url}/spa`,
      wait_for_selector: '.late',
      cookies: 'session=abc123',
    });
    expect(r.status).toBe(200);
    expect(r.body.data.raw).toContain('Late content session=abc123');
    const source = await run('scraperC/scrape', { url: `${site.url}/spa`, return_page_source: true });
    // As served: the mount point still empty (the rendered DOM has it filled).
    expect(source.body.data.raw).toContain('<div id="root"></div>');
  }, 60_000);

  it('js_snippet runs in the page; a broken selector is a 400 naming the field', async () => {
    const snippet = b64(`document.body.insertAdjacentHTML('beforeend', '<p id="snip">snippet ran</p>')`);
    const r = await run('scraperC/markdown', { url: `${site.url}/article`, js_snippet: snippet });
    expect(r.status).toBe(200);
    expect(r.body.data.markdown).toContain('snippet ran');
    const bad = await run('scraperC/scrape', { url: `${site.url}/article`, wait_for_selector: 'div[[' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.issues[0].path).toBe('wait_for_selector');
  }, 60_000);

  it('block_resource keeps the browser from loading images', async () => {
    const before = site.hits.get('/pixel.png') ?? 0;
    const r = await run('scraperC/scrape', { url: `${site.url}/with-image`, block_resource: ['image'] });
    expect(r.body.data.raw).toContain('<h1>Pic</h1>');
    expect(site.hits.get('/pixel.png') ?? 0).toBe(before);
    await run('scraperC/scrape', { url: `${site.url}/with-image` });
    expect(site.hits.get('/pixel.png') ?? 0).toBe(before + 1);
  }, 60_000);

  it('screenshot format, and scraperA waitFor renders', async () => {
    const r = await run('scraperB/scrape', {
      url: `${site.url}/article`,
      formats: ['screenshot', 'markdown'],
    });
    expect(r.status).toBe(200);
    expect(r.body.data.screenshot).toMatch(/^data:image\/png;base64,iVBORw0KGgo/);
    const a = await run('scraperA/scrape', { url: `${site.url}/spa`, waitFor: 100 });
    expect(a.body.data.markdown).toContain('Rendered by JS');
  }, 60_000);
});

describe('[web:no-browser-not-configured] without a browser', () => {
  let bare: TestGateway;
  beforeAll(async () => {
    bare = await startGateway({ env: { TOLLGATE_CHROMIUM_PATH: '/nonexistent/chromium' } });
  });
  afterAll(() => bare?.close());

  it('a request that needs the browser answers 503 not_configured naming TOLLGATE_CHROMIUM_PATH, uncharged', async () => {
    const { accountId, key: k } = await bare.account('1');
    const cases: Array<[string, unknown]> = [
      ['scraperC/scrape', { url: `${site.url}/article` }],
      ['scraperC/markdown', { url: `${site.url}/article`, browser: true }],
      ['scraperB/scrape', { url: `${site.url}/article`, renderJs: true }],
      ['scraperB/scrape', { url: `${site.url}/article`, formats: ['screenshot'] }],
      ['scraperA/scrape', { url: `${site.url}/article`, waitFor: 100 }],
    ];
    for (const [action, body] of cases) {
      const r = await bare.post(`/api/run/${action}`, body, { key: k });
      expect(r.status, action).toBe(503);
      expect(r.body.error.code, action).toBe('not_configured');
      expect(r.body.error.details.env.join(' '), action).toContain('TOLLGATE_CHROMIUM_PATH');
    }
    expect((await bare.gw.ledger.balance(accountId)).balance_micros).toBe(1_000_000);
  });

  it('auto-detection degrades to the HTML as served, with a warning', async () => {
    const { key: k } = await bare.account('1');
    const r = await bare.post('/api/run/scraperB/scrape', { url: `${site.url}/spa` }, { key: k });
    expect(r.status).toBe(200);
    expect(r.body.data.metadata.rendered).toBe(false);
    expect(r.body.data.warnings[0]).toContain('no browser');
  });
});
