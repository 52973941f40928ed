import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { html, startSite, type TestSite } from '../helpers/site.js';
import { REFUSED_URLS } from '../unit/ssrf-corpus.js';

// The SSRF guard through the real doors: a gateway with no TOLLGATE_FETCH_ALLOW refuses every internal target
// with a 4xx and charges nothing; redirect hops are checked; the headless browser's requests are filtered.

describe('[ssrf:refuse-private] the corpus through the HTTP door, nothing charged', () => {
  let t: TestGateway;
  beforeAll(async () => {
    t = await startGateway({ env: { TOLLGATE_FETCH_ALLOW: '' } });
  });
  afterAll(() => t?.close());

  it(`refuses ${REFUSED_URLS.length} internal URLs on scraperA, scraperB and scraperC with a 4xx`, async () => {
    const { accountId, key } = await t.account('1');
    const actions: Array<[string, (url: string) => unknown]> = [
      ['scraperC/markdown', (url) => ({ url, browser: false })],
      ['scraperB/scrape', (url) => ({ url, renderJs: false })],
      ['scraperA/map', (url) => ({ url })],
    ];
    let i = 0;
    for (const url of REFUSED_URLS) {
      const [action, body] = actions[i++ % actions.length] as [string, (u: string) => unknown];
      const r = await t.post(`/api/run/${action}`, body(url), { key });
      expect(r.status, `${action} ${url}`).toBe(400);
      expect(r.body, url).toMatchObject({ ok: false, charged_cents: 0, error: { code: 'invalid_input' } });
      expect(r.body.error.details.issues[0].path, url).toBe('url');
    }
    expect(await t.gw.ledger.balance(accountId)).toMatchObject({ balance_micros: 1_000_000, held_micros: 0 });
  });

  it('refuses names of loopback on crawl starts too (nothing is accepted, nothing charged)', async () => {
    const { accountId, key } = await t.account('1');
    for (const url of ['http://localhost:1/', 'http://[::1]:1/', 'http://169.254.169.254/']) {
      const r = await t.post('/api/run/scraperB/crawl', { url }, { key });
      expect(r.status, url).toBe(400);
    }
    expect((await t.gw.ledger.balance(accountId)).balance_micros).toBe(1_000_000);
  });
});

describe('[ssrf:redirect-hops] redirects to internal addresses', () => {
  let t: TestGateway;
  let site: TestSite;
  beforeAll(async () => {
    site = await startSite();
    const to = (location: string) => (_q: unknown, res: import('node:http').ServerResponse) =>
      void res.writeHead(302, { location }).end();
    site.route('/to-metadata', to('http://169.254.169.254/latest/meta-data/iam/'));
    site.route('/to-private', to('http://10.0.0.1/admin'));
    site.route('/to-v6-loopback', to(`http://[::1]:${new URL(site.url).port}/`));
    site.route('/to-decimal', to('http://167772161/'));
    site.route('/to-file', to('file:///etc/passwd'));
    site.route('/hop1', to('/hop2'));
    site.route('/hop2', to('http://[::ffff:169.254.169.254]/'));
    // Only 127.0.0.1 is let through: the test site is reachable, everything it redirects to is not.
    t = await startGateway({ env: { TOLLGATE_FETCH_ALLOW: '127.0.0.1' } });
  });
  afterAll(async () => {
    await t?.close();
    await site?.close();
  });

  it('every hop is checked: a redirect to a refused target fails with 400, uncharged', async () => {
    const { accountId, key } = await t.account('1');
    for (const p of ['/to-metadata', '/to-private', '/to-v6-loopback', '/to-decimal', '/to-file', '/hop1']) {
      const r = await t.post('/api/run/scraperC/scrape', { url: `${site.url}${p}`, browser: false }, { key });
      expect(r.status, p).toBe(400);
      expect(r.body.error.code, p).toBe('invalid_input');
    }
    expect((await t.gw.ledger.balance(accountId)).balance_micros).toBe(1_000_000);
  });
});

describe('[ssrf:browser-guarded] the headless browser is filtered the same way', () => {
  let t: TestGateway;
  let site: TestSite;
  let canary: Server;
  let canaryHits = 0;
  beforeAll(async () => {
    // A server on another loopback address: reachable from this machine, not on the allow list.
    canary = createServer((_q, res) => {
      canaryHits++;
      res.writeHead(200, { 'content-type': 'text/plain', 'access-control-allow-origin': '*' }).end('secret');
    });
    await new Promise<void>((r) => canary.listen(0, '127.0.0.2', r));
    const target = `http://127.0.0.2:${(canary.address() as AddressInfo).port}`;
    site = await startSite({
      '/probe': (_q, res) =>
        void res
          .writeHead(200, { 'content-type': 'text/html' })
          .end(
            html(
              `<h1>Probe</h1><img src="${target}/img.png"><iframe src="${target}/frame"></iframe>` +
                `<script>fetch('${target}/fetch').then(r => r.text()).then(t => { document.body.dataset.leak = t; }).catch(() => {});` +
                `fetch('http://169.254.169.254/latest/meta-data/').catch(() => {});` +
                `try { new WebSocket('ws://127.0.0.2:${(canary.address() as AddressInfo).port}/ws'); } catch (e) {}</script>`,
            ),
          ),
      '/to-canary': (_q, res) => void res.writeHead(302, { location: `${target}/redirected` }).end(),
    });
    t = await startGateway({ env: { TOLLGATE_FETCH_ALLOW: '127.0.0.1' } });
  });
  afterAll(async () => {
    await t?.close();
    await site?.close();
    await new Promise<void>((r) => canary.close(() => r()));
  });

  it('subresources, fetches and WebSockets aimed at refused addresses never leave the browser', async () => {
    const { key } = await t.account('1');
    const r = await t.post('/api/run/scraperC/scrape', { url: `${site.url}/probe`, timeout: 20 }, { key });
    expect(r.status).toBe(200);
    expect(r.body.data.raw).toContain('<h1>Probe</h1>');
    expect(r.body.data.raw).not.toContain('data-leak="secret"');
    expect(canaryHits).toBe(0);
  }, 60_000);

  it('a main-document redirect to a refused address fails with 400, uncharged', async () => {
    const { accountId, key } = await t.account('1');
    const r = await t.post(
      '/api/run/scraperC/scrape',
      { url: `${site.url}/to-canary`, timeout: 20 },
      { key },
    );
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('invalid_input');
    expect(canaryHits).toBe(0);
    expect((await t.gw.ledger.balance(accountId)).balance_micros).toBe(1_000_000);
  }, 60_000);
});
