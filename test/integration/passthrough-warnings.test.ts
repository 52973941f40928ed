import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { html, startSite, type TestSite } from '../helpers/site.js';

// [http:passthrough-warnings] A non-strict action passes extra fields through to its provider as given (the
// spec's "additional properties allowed"), but names each in the answer's `warnings`, with the field meant when
// it looks like a typo; a strict action still refuses them. Unit test of the distance rule included.

let t: TestGateway;
let site: TestSite;
let key: string;

beforeAll(async () => {
  site = await startSite({
    '/page': (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' }).end(html('<h1>Hello</h1><p>text</p>'));
    },
  });
  t = await startGateway();
  ({ key } = await t.account('1'));
});
afterAll(async () => {
  await t.close();
  await site.close();
});

describe('[http:passthrough-warnings] extra fields on non-strict actions', () => {
  it('a misspelt field is passed through, charged as the call is, and named with the field meant', async () => {
    const r = await t.post(
      '/api/run/scraperA/scrape',
      { url: `${site.url}/page`, formatz: ['markdown'], custom_vendor_option: 1 },
      { key },
    );
    expect(r.status).toBe(200);
    expect(r.body.charged_cents).toBe(1);
    expect(r.body.warnings).toEqual([
      '"formatz" is not a field of scraperA/scrape; it was passed through to the provider unchecked (did you mean "formats"?)',
      '"custom_vendor_option" is not a field of scraperA/scrape; it was passed through to the provider unchecked.',
    ]);
  });

  it('an answer without extra fields has no warnings; a strict action refuses the field instead', async () => {
    const clean = await t.post('/api/run/scraperA/scrape', { url: `${site.url}/page` }, { key });
    expect(clean.status).toBe(200);
    expect(clean.body).not.toHaveProperty('warnings');
    const strict = await t.post(
      '/api/run/scraperC/markdown',
      { url: `${site.url}/page`, browzer: false },
      { key },
    );
    expect(strict.status).toBe(400);
    expect(JSON.stringify(strict.body)).toContain('browzer');
  });

  it('an idempotent replay carries the warnings of the call it replays', async () => {
    const body = { url: `${site.url}/page`, onlyMainContnet: true };
    const headers = { 'idempotency-key': 'warnings-replay' };
    const first = await t.post('/api/run/scraperA/scrape', body, { key, headers });
    const again = await t.post('/api/run/scraperA/scrape', body, { key, headers });
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body.warnings).toEqual(first.body.warnings);
    expect(first.body.warnings[0]).toContain('did you mean "onlyMainContent"?');
  });
});
