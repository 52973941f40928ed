import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actions } from '../../catalog/index.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { html, startSite, type TestSite } from '../helpers/site.js';

let t: TestGateway;
let site: TestSite;
let key: string;
let accountId: string;

beforeAll(async () => {
  t = await startGateway({ env: { TOLLGATE_MAX_BODY_BYTES: '4096' } });
  site = await startSite({
    '/': (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(html('<h1>Hello</h1><p>World of <a href="/a">links</a>.</p>'));
    },
    '/latin1': (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=iso-8859-1' });
      res.end(Buffer.from('<html><body><p>caf\xe9</p></body></html>', 'latin1'));
    },
    '/gone': (_req, res) => {
      res.writeHead(410, { 'content-type': 'text/html' }).end('gone');
    },
    '/redirect': (_req, res) => {
      res.writeHead(302, { location: '/' }).end();
    },
  });
  ({ key, accountId } = await t.account('1'));
});
afterAll(async () => {
  await t.close();
  await site.close();
});

describe('free surfaces', () => {
  it('[http:descriptor] [catalog:availability] GET /api/run lists the catalog this gateway can run, with prices', async () => {
    const r = await t.get('/api/run');
    expect(r.status).toBe(200);
    // No vendor is configured here: their actions are left out, the rest stay in catalog order.
    const listed = r.body.actions.map((a: { id: string }) => a.id);
    expect(r.body.count).toBe(listed.length);
    expect(listed).toEqual(actions.map((a) => a.id).filter((id) => listed.includes(id)));
    for (const id of ['scraperC/scrape', 'files/upload', 'platform/consult', 'scraperA/crawl_status']) {
      expect(listed).toContain(id);
    }
    for (const id of ['propstats/value-estimate', 'videoasm/render', 'videoasm/result', 'scraperA/search']) {
      expect(listed).not.toContain(id);
    }
    // The descriptor of a left-out action still answers, saying why it cannot run.
    const d = await t.get('/api/run/propstats/value-estimate');
    expect(d.body).toMatchObject({ available: false, operator_env: ['TOLLGATE_RENTCAST_API_KEY'] });
    expect(d.body.availability_note).toContain('not configured');
    expect(r.body.actions.find((a: { id: string }) => a.id === 'scraperC/scrape')).toMatchObject({
      price_cents: 1,
      strict: true,
      path: '/api/run/scraperC/scrape',
    });
  });

  it('[http:descriptor] GET /api/run/{service}/{action} describes price, schemas and an example', async () => {
    const r = await t.get('/api/run/scraperC/markdown');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      id: 'scraperC/markdown',
      tool_name: 'scraperC_markdown',
      price_cents: 1,
      price_usd: '0.01',
      strict: true,
      method: 'POST',
      example: { url: 'https://example.com/', browser: false },
    });
    expect(r.body.description).toContain('$0.01 per successful call; nothing is charged on failure.');
    expect(r.body.input_schema.additionalProperties).toBe(false);
    expect(r.body.input_schema.properties.url.description).toBeTruthy();
    expect(r.body.input_schema.properties.max_cost_cents).toMatchObject({ type: 'integer', minimum: 0 });
    expect(r.body.output_schema.properties.markdown).toBeTruthy();
    expect((await t.get('/api/run/nope/nothing')).status).toBe(404);
  });

  it('[http:openapi] /openapi.json is OpenAPI 3.1.0, version 1.0.0, one path per action this gateway lists', async () => {
    const r = await t.get('/openapi.json');
    expect(r.status).toBe(200);
    expect(r.body.openapi).toBe('3.1.0');
    expect(r.body.info.version).toBe('1.0.0');
    const listed = new Set((await t.get('/api/run')).body.actions.map((a: { id: string }) => a.id));
    expect(Object.keys(r.body.paths).map((p) => p.replace('/api/run/', ''))).toEqual(
      actions.filter((a) => listed.has(a.id)).map((a) => a.id),
    );
    for (const a of actions.filter((x) => listed.has(x.id))) {
      const op = r.body.paths[`/api/run/${a.id}`];
      expect(op.post.operationId).toBe(a.toolName);
      expect(op.post['x-price-cents']).toBe(a.priceCents);
      expect(op.post.requestBody.content['application/json'].schema.type).toBe('object');
    }
  });

  it('GET /healthz answers and every response carries x-request-id', async () => {
    const r = await t.get('/healthz', { headers: { 'x-request-id': 'trace-123' } });
    expect(r.body.ok).toBe(true);
    expect(r.headers['x-request-id']).toBe('trace-123');
    const r2 = await t.get('/healthz', { headers: { 'x-request-id': 'bad id with spaces' } });
    expect(r2.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect((await t.get('/nowhere')).headers['x-request-id']).toBeTruthy();
  });

  it('platform/discover is free and needs no key', async () => {
    const r = await t.post('/api/run/platform/discover', { query: 'page markdown' });
    expect(r.status).toBe(200);
    expect(r.body.charged_cents).toBe(0);
    expect(r.body.data.results[0].id).toBe('scraperC/markdown');
  });
});

describe('auth', () => {
  it('[http:unpaid-402] a paid call with no credentials gets 402 naming the ways to pay', async () => {
    const r = await t.post('/api/run/scraperC/markdown', { url: `${site.url}/`, browser: false });
    expect(r.status).toBe(402);
    expect(r.body).toMatchObject({ ok: false, error: { code: 'payment_required' }, charged_cents: 0 });
    expect(r.body.error.details.accepts[0].method).toBe('api_key');
    expect(r.body.error.message).toContain('costs 1 cent per successful call');
  });

  it('[auth:api-key] a bad, malformed or non-bearer key is 401', async () => {
    for (const authorization of ['Bearer tg_sk_' + 'A'.repeat(43), 'Bearer nope', 'Basic dXNlcjpwYXNz']) {
      const r = await t.post('/api/run/platform/balance', {}, { headers: { authorization } });
      expect(r.status, authorization).toBe(401);
      expect(r.body.error.code).toBe('unauthorized');
    }
  });

  it('[auth:revocation] a revoked key stops working at once', async () => {
    const { key: k2 } = await t.account('1');
    expect((await t.post('/api/run/platform/balance', {}, { key: k2 })).status).toBe(200);
    const [row] = await t.gw.ledger.listApiKeys(
      (await t.gw.ledger.listApiKeys()).find((x) => x.prefix === `${k2.slice(0, 10)}…`)?.account_id,
    );
    await t.gw.ledger.revokeApiKey(row?.id as string);
    const r = await t.post('/api/run/platform/balance', {}, { key: k2 });
    expect(r.status).toBe(401);
    expect(r.body.error.message).toMatch(/revoked/);
  });

  it('account actions need a key', async () => {
    expect((await t.post('/api/run/platform/balance', {})).status).toBe(401);
    const r = await t.post('/api/run/platform/balance', {}, { key });
    expect(r.body.data).toMatchObject({ balance_usd: '$1.00', available_micros: 1_000_000 });
  });
});

describe('the built-in scraperC fetch', () => {
  it('fetches and converts a page, following redirects and decoding charsets', async () => {
    const r = await t.post(
      '/api/run/scraperC/markdown',
      { url: `${site.url}/redirect`, browser: false },
      { key },
    );
    expect(r.status).toBe(200);
    // Links come back absolute, so they still work outside the page.
    expect(r.body.data).toEqual({
      url: `${site.url}/`,
      markdown: `# Hello\n\nWorld of [links](${site.url}/a).`,
    });
    const l = await t.post(
      '/api/run/scraperC/scrape',
      { url: `${site.url}/latin1`, browser: false },
      { key },
    );
    expect(l.body.data.raw).toContain('café');
  });

  it('a target answering 4xx is a failed scrape: 422, not charged', async () => {
    const before = (await t.gw.ledger.balance(accountId)).balance_micros;
    const r = await t.post('/api/run/scraperC/scrape', { url: `${site.url}/gone`, browser: false }, { key });
    expect(r.status).toBe(422);
    expect(r.body.error.details.target_status).toBe(410);
    expect((await t.gw.ledger.balance(accountId)).balance_micros).toBe(before);
  });

  it('[http:not-configured] vendor-only requests answer 503 not_configured naming the variable, uncharged', async () => {
    const before = await t.gw.ledger.transactions(accountId, 100);
    const r = await t.post('/api/run/scraperC/scrape_residential', { url: `${site.url}/` }, { key });
    expect(r.status).toBe(503);
    expect(r.body.error.code).toBe('not_configured');
    expect(r.body.error.message).toContain('TOLLGATE_SCRAPINGANT_API_KEY');
    expect(await t.gw.ledger.transactions(accountId, 100)).toHaveLength(before.length);
  });
});

describe('hostile input', () => {
  const path = '/api/run/scraperC/scrape';
  const good = () => ({ url: `${site.url}/`, browser: false });

  it('[http:hostile-input] malformed JSON → 400 invalid_json', async () => {
    const r = await t.post(path, '{"url": ', { key });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('invalid_json');
  });

  it('[http:hostile-input] a wrong content type → 415', async () => {
    const r = await t.post(path, 'url=x', {
      key,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(r.status).toBe(415);
    expect(r.body.error.code).toBe('unsupported_media_type');
  });

  it('[http:hostile-input] a body over the limit → 413', async () => {
    const r = await t.post(path, { ...good(), cookies: 'a'.repeat(5000) }, { key });
    expect(r.status).toBe(413);
    expect(r.body.error.code).toBe('payload_too_large');
  });

  it('[http:hostile-input] deep nesting and huge arrays → 400 before validation', async () => {
    const deep = `{"url":"x","n":${'['.repeat(100)}${']'.repeat(100)}}`;
    const r = await t.post(path, deep, { key });
    expect(r.status).toBe(400);
    expect(r.body.error.message).toMatch(/nested deeper/);
    const big = await startGateway({ env: { TOLLGATE_MAX_BODY_BYTES: String(4 * 1024 * 1024) } });
    try {
      const huge = await big.post(path, {
        url: 'https://example.com/',
        block_resource: Array(60_000).fill(1),
      });
      expect(huge.status).toBe(400);
      expect(huge.body.error.message).toMatch(/more than 50000 elements/);
    } finally {
      await big.close();
    }
  });

  it('[http:hostile-input] non-object bodies and wrong types are 400 with paths', async () => {
    for (const b of ['[1,2]', '"str"', '42', 'null']) {
      const r = await t.post(path, b, { key });
      expect(r.status, b).toBe(400);
      expect(r.body.error.code).toBe('invalid_input');
    }
    const r = await t.post(path, { url: 42, browser: 'yes', timeout: 4 }, { key });
    expect(r.status).toBe(400);
    expect(r.body.error.details.issues.map((i: { path: string }) => i.path).sort()).toEqual([
      'browser',
      'timeout',
      'url',
    ]);
  });

  it('[http:strict-rejects-unknown] a strict action names each unknown field', async () => {
    const r = await t.post(path, { ...good(), colour: 'red', size: 3 }, { key });
    expect(r.status).toBe(400);
    expect(r.body.error.details.issues.map((i: { path: string }) => i.path).sort()).toEqual([
      'colour',
      'size',
    ]);
  });

  it('[http:hostile-input] non-http schemes are refused at validation', async () => {
    for (const url of [
      'file:///etc/passwd',
      'gopher://127.0.0.1:70/',
      'ftp://example.com/',
      'javascript:alert(1)',
    ]) {
      const r = await t.post(path, { url, browser: false }, { key });
      expect(r.status, url).toBe(400);
      expect(r.body.error.details.issues[0].path).toBe('url');
    }
  });

  it('unknown actions → 404, other methods → 405 with Allow', async () => {
    const r = await t.post('/api/run/nope/missing', {}, { key });
    expect(r.status).toBe(404);
    expect(r.body.error.message).toMatch(/GET \/api\/run/);
    const { request } = await import('undici');
    const res = await request(`${t.url}${path}`, { method: 'DELETE' });
    expect(res.statusCode).toBe(405);
    expect(res.headers.allow).toBe('GET, POST');
    await res.body.dump();
  });

  it('[http:hostile-input] a raw garbage request does not crash the server', async () => {
    await new Promise<void>((resolve) => {
      const s = connect(Number(new URL(t.url).port), '127.0.0.1', () => {
        s.write(
          'POST /api/run/scraperC/scrape HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Type: application/json\r\n\r\n{"a',
        );
        s.end();
      });
      s.on('close', () => resolve());
      s.on('error', () => resolve());
      s.resume();
    });
    expect((await t.get('/healthz')).status).toBe(200);
  });
});
