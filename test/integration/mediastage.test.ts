import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeFal, startFakeFal } from '../fakes/fal.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { STORAGE_MODES, useStorage } from '../helpers/storage.js';

// mediastage/upload through the HTTP shim against the fake fal.ai storage. The caller PUTs to fal, never to
// the gateway, so staging writes nothing to the gateway's storage: the same with local disk and with S3.

describe.each(STORAGE_MODES)('mediastage/upload (HTTP, fake fal, %s storage)', (mode) => {
  const storage = useStorage(mode);
  let fal: FakeFal;
  let t: TestGateway;
  let key: string;

  const balance = async (): Promise<number> =>
    (await t.post('/api/run/platform/balance', {}, { key })).body.data.balance_micros;
  const stage = (body: unknown) => t.post('/api/run/mediastage/upload', body, { key });

  beforeAll(async () => {
    fal = await startFakeFal();
    t = await startGateway({
      env: { TOLLGATE_FAL_API_KEY: fal.apiKey, TOLLGATE_FAL_BASE_URL: fal.url, ...storage.env() },
    });
    key = (await t.account('1')).key;
  });
  afterAll(async () => {
    await t.close();
    await fal.close();
  });

  it('[mediastage:upload] returns upload_url and file_url; PUT the bytes, GET them from file_url', async () => {
    const before = await balance();
    const r = await stage({ file_name: 'photo.png', content_type: 'image/png' });
    expect(r.status).toBe(200);
    expect(r.body.charged_cents).toBe(1);
    expect(await balance()).toBe(before - 10_000);
    const last = fal.initiates.at(-1);
    expect(last?.query).toEqual({ storage_type: 'fal-cdn-v3' });
    expect(last?.authorization).toBe(`Key ${fal.apiKey}`);
    expect(last?.body).toEqual({ content_type: 'image/png', file_name: 'photo.png' });

    const { upload_url, file_url } = r.body.data;
    const bytes = Buffer.from('not really a png');
    const put = await request(upload_url, {
      method: 'PUT',
      body: bytes,
      headers: { 'content-type': 'image/png' },
    });
    await put.body.dump();
    expect(put.statusCode).toBe(200);
    const got = await request(file_url);
    expect(got.headers['content-type']).toBe('image/png');
    expect(Buffer.from(await got.body.arrayBuffer()).equals(bytes)).toBe(true);
  });

  it('[mediastage:vendor-failure-uncharged] fal 401, 422 and 500 charge nothing and show no vendor text', async () => {
    const cases: Array<[number, unknown, number, string]> = [
      [401, { detail: 'Invalid key SECRET-VENDOR-TEXT' }, 503, 'upstream_unavailable'],
      [
        422,
        { detail: [{ loc: ['body', 'file_name'], msg: 'SECRET-VENDOR-TEXT', type: 'x' }] },
        422,
        'upstream_rejected',
      ],
      [500, { detail: 'SECRET-VENDOR-TEXT' }, 502, 'upstream_error'],
    ];
    for (const [status, body, ours, code] of cases) {
      const before = await balance();
      fal.script({ status, body });
      const r = await stage({ file_name: 'a.png', content_type: 'image/png' });
      expect(r.status).toBe(ours);
      expect(r.body.error.code).toBe(code);
      expect(r.body.charged_cents).toBe(0);
      expect(r.text).not.toContain('SECRET-VENDOR-TEXT');
      expect(await balance()).toBe(before);
    }
    fal.script({ status: 200, body: { upload_url: 'not a url' } });
    const bad = await stage({ file_name: 'a.png', content_type: 'image/png' });
    expect(bad.body.error.code).toBe('bad_response');
    expect(bad.body.charged_cents).toBe(0);
  });

  it('[http:strict-rejects-unknown] unknown fields and missing fields are 400 before fal is called', async () => {
    const calls = fal.initiates.length;
    const r = await stage({ file_name: 'a.png', content_type: 'image/png', image_url: 'x' });
    expect(r.status).toBe(400);
    expect(r.body.error.details.issues[0].path).toBe('image_url');
    expect((await stage({ file_name: '' })).status).toBe(400);
    expect(fal.initiates.length).toBe(calls);
  });
});

describe('mediastage without a fal key', () => {
  it('[http:not-configured] answers 503 not_configured naming TOLLGATE_FAL_API_KEY, uncharged', async () => {
    const t = await startGateway();
    try {
      const { key } = await t.account('1');
      const r = await t.post(
        '/api/run/mediastage/upload',
        { file_name: 'a', content_type: 'image/png' },
        { key },
      );
      expect(r.status).toBe(503);
      expect(r.body.error.code).toBe('not_configured');
      expect(r.body.error.message).toContain('TOLLGATE_FAL_API_KEY');
      const tx = await t.post('/api/run/platform/transactions', {}, { key });
      // No call was recorded (the history's only entry is the test credit).
      expect(tx.body.data.transactions.filter((x: { kind: string }) => x.kind === 'call')).toEqual([]);
    } finally {
      await t.close();
    }
  });
});
