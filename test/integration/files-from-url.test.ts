import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { startSite, type TestSite } from '../helpers/site.js';
import { STORAGE_MODES, useStorage } from '../helpers/storage.js';

// files/upload_from_url through the HTTP shim against a local site (TOLLGATE_FETCH_ALLOW=127.0.0.1 in tests),
// on local and S3 storage, and its SSRF refusal when loopback is not allowed.

const png = Buffer.concat([
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  Buffer.alloc(4000, 7),
]);

describe.each(STORAGE_MODES)('files/upload_from_url (HTTP, %s storage)', (mode) => {
  const storage = useStorage(mode);
  let t: TestGateway;
  let site: TestSite;
  let key: string;

  const balance = async (): Promise<number> =>
    (await t.post('/api/run/platform/balance', {}, { key })).body.data.balance_micros;
  const fromUrl = (body: Record<string, unknown>) => t.post('/api/run/files/upload_from_url', body, { key });

  beforeAll(async () => {
    site = await startSite({
      '/media/photo.png': (_req, res) => {
        res.writeHead(200, { 'content-type': 'image/png', 'content-length': png.length }).end(png);
      },
      '/go': (_req, res) => {
        res.writeHead(302, { location: '/media/photo.png' }).end();
      },
      '/download': (_req, res) => {
        res.writeHead(200, {
          'content-type': 'application/pdf',
          'content-disposition': 'attachment; filename="report 2026.pdf"',
        });
        res.end(Buffer.from('%PDF-1.7 fake'));
      },
      '/stream.bin': (_req, res) => {
        // No Content-Length: the store cannot know the size until the body ends.
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        for (let i = 0; i < 4; i++) res.write(Buffer.alloc(1000, i));
        res.end();
      },
      '/huge.bin': (_req, res) => {
        // Declares one byte more than the limit; the gateway must refuse without reading it.
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': '104857601' });
        res.write(Buffer.alloc(1024));
      },
    });
    t = await startGateway({ env: storage.env() });
    key = (await t.account('1')).key;
  });
  afterAll(async () => {
    await t.close();
    await site.close();
  });

  it('[files:upload-from-url] [billing:charge-only-on-success] fetches, stores and serves the bytes', async () => {
    const before = await balance();
    const r = await fromUrl({ url: `${site.url}/media/photo.png`, tags: ['web'], note: 'from the site' });
    expect(r.status).toBe(200);
    expect(r.body.charged_cents).toBe(1);
    expect(await balance()).toBe(before - 10_000);
    expect(r.body.data).toMatchObject({ filename: 'photo.png', mime: 'image/png', size_bytes: png.length });
    expect(r.body.data.get_url.startsWith(storage.linkBase(t, r.body.data.file_id))).toBe(true);
    const g = await request(r.body.data.get_url);
    expect(g.statusCode).toBe(200);
    expect(g.headers['content-type']).toBe('image/png');
    expect(Buffer.from(await g.body.arrayBuffer()).equals(png)).toBe(true);
    const listed = await t.post('/api/run/files/list', { tag: 'web' }, { key });
    expect(listed.body.data.files[0]).toMatchObject({
      file_id: r.body.data.file_id,
      status: 'stored',
      note: 'from the site',
    });
  });

  it('[files:upload-from-url] follows redirects; takes the name from Content-Disposition; filename overrides', async () => {
    const redirected = await fromUrl({ url: `${site.url}/go` });
    expect(redirected.body.data).toMatchObject({ filename: 'photo.png', size_bytes: png.length });
    const named = await fromUrl({ url: `${site.url}/download` });
    expect(named.body.data).toMatchObject({ filename: 'report 2026.pdf', mime: 'application/pdf' });
    const given = await fromUrl({ url: `${site.url}/download`, filename: 'mine.pdf' });
    expect(given.body.data.filename).toBe('mine.pdf');
  });

  it('[files:upload-from-url] a body of unknown length (chunked) is stored whole', async () => {
    const r = await fromUrl({ url: `${site.url}/stream.bin` });
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({ filename: 'stream.bin', size_bytes: 4000 });
    const g = await request(r.body.data.get_url);
    const body = Buffer.from(await g.body.arrayBuffer());
    expect(body.length).toBe(4000);
    expect(body[3999]).toBe(3);
  });

  it('[billing:charge-only-on-success] a target 404 is a 422, uncharged', async () => {
    const before = await balance();
    const r = await fromUrl({ url: `${site.url}/nothing-here` });
    expect(r.status).toBe(422);
    expect(r.body.charged_cents).toBe(0);
    expect(await balance()).toBe(before);
  });

  it('[files:size-limit] a file declared larger than 100 MB is refused with 413, uncharged, nothing stored', async () => {
    const before = await balance();
    const count = (await t.post('/api/run/files/list', {}, { key })).body.data.total;
    const r = await fromUrl({ url: `${site.url}/huge.bin` });
    expect(r.status).toBe(413);
    expect(r.body.error.code).toBe('payload_too_large');
    expect(await balance()).toBe(before);
    expect((await t.post('/api/run/files/list', {}, { key })).body.data.total).toBe(count);
  });
});

describe('files/upload_from_url SSRF guard', () => {
  it('[files:upload-from-url] a loopback URL is refused (400 naming url), uncharged, never fetched', async () => {
    const site = await startSite({
      '/secret': (_req, res) => {
        res.end('internal');
      },
    });
    // No TOLLGATE_FETCH_ALLOW: loopback and private ranges are refused, as in production.
    const t = await startGateway({ env: { TOLLGATE_FETCH_ALLOW: '' } });
    try {
      const { key } = await t.account('1');
      for (const url of [`${site.url}/secret`, `http://localhost:${new URL(site.url).port}/secret`]) {
        const r = await t.post('/api/run/files/upload_from_url', { url }, { key });
        expect(r.status).toBe(400);
        expect(r.body.error.details.issues[0].path).toBe('url');
        expect(r.body.charged_cents).toBe(0);
      }
      expect(site.hits.get('/secret')).toBeUndefined();
      const bal = await t.post('/api/run/platform/balance', {}, { key });
      expect(bal.body.data.balance_micros).toBe(1_000_000);
    } finally {
      await t.close();
      await site.close();
    }
  });
});
