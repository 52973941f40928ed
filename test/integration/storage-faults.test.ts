import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { type S3Server, startS3Server } from '../helpers/s3.js';
import { html, startSite, type TestSite } from '../helpers/site.js';

// [storage:unavailable-503] The object store going away (issue 21 item 4): file actions are refused cleanly —
// a retryable 503 that says nothing was charged, and nothing is — while everything else keeps working, and
// /readyz says the storage is not ready.

let s3: S3Server;
let site: TestSite;
let t: TestGateway;
let key: string;
let accountId: string;
let s3Closed = false;

beforeAll(async () => {
  s3 = await startS3Server();
  site = await startSite({
    '/page': (_req, res) => void res.writeHead(200, { 'content-type': 'text/html' }).end(html('<p>hi</p>')),
    '/file.txt': (_req, res) => void res.writeHead(200, { 'content-type': 'text/plain' }).end('hello'),
  });
  t = await startGateway({ env: { ...s3.env('faults'), TOLLGATE_FETCH_ALLOW: '127.0.0.1' } });
  ({ key, accountId } = await t.account('1'));
});
afterAll(async () => {
  await t?.close();
  await site?.close();
  if (!s3Closed) await s3?.close();
});

describe('[storage:unavailable-503] the object store goes away', () => {
  it('file actions answer 503 uncharged; other actions, listings and liveness keep working', async () => {
    const first = await t.post('/api/run/files/upload_from_url', { url: `${site.url}/file.txt` }, { key });
    expect(first.status).toBe(200);
    expect((await t.get('/readyz')).status).toBe(200);
    await s3.close();
    s3Closed = true;

    const before = (await t.gw.ledger.balance(accountId)).balance_micros;
    for (const [path, body] of [
      ['/api/run/files/upload_from_url', { url: `${site.url}/file.txt` }],
      ['/api/run/files/upload', { filename: 'a.txt', size_bytes: 5 }],
    ] as const) {
      const r = await t.post(path, body, { key });
      expect(r.status, `${path}: ${JSON.stringify(r.body)}`).toBe(503);
      expect(r.body.error.retryable).toBe(true);
      expect(r.body.error.message).toMatch(/nothing was charged/i);
      expect(r.body.charged_cents).toBe(0);
    }
    expect((await t.gw.ledger.balance(accountId)).balance_micros).toBe(before);

    // Nothing else breaks: a scrape is charged, the file list (metadata in the database) answers.
    const scrape = await t.post(
      '/api/run/scraperC/scrape',
      { url: `${site.url}/page`, browser: false },
      { key },
    );
    expect(scrape.status).toBe(200);
    expect(scrape.body.charged_cents).toBe(1);
    expect((await t.post('/api/run/platform/balance', {}, { key })).status).toBe(200);
    // The listing needs links into the store too: refused alike (it is free).
    expect((await t.post('/api/run/files/list', {}, { key })).status).toBe(503);
    expect((await t.get('/healthz')).status).toBe(200);
    const ready = await t.get('/readyz');
    expect(ready.status).toBe(503);
    expect(ready.body).toMatchObject({ storage: 'unavailable', database: 'ok' });

    // The store comes back (on another port: a new server): here, the gateway keeps refusing links until its
    // probe answers, which it cannot at the old address — what matters is that it never charged meanwhile.
    expect((await t.gw.ledger.balance(accountId)).balance_micros).toBe(before - 10_000);

    // The store comes back where it was: within the probe's interval, links are issued (and charged) again.
    s3 = await startS3Server(s3.bucket, Number(new URL(s3.endpoint).port));
    s3Closed = false;
    await expect
      .poll(
        async () =>
          (await t.post('/api/run/files/upload', { filename: 'b.txt', size_bytes: 5 }, { key })).status,
        {
          timeout: 10_000,
          interval: 300,
        },
      )
      .toBe(200);
    expect((await t.get('/readyz')).status).toBe(200);
  });
});
