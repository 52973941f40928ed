import { PutObjectCommand } from '@aws-sdk/client-s3';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openFileMetaStore } from '../../src/storage/file-meta.js';
import { BACKENDS, type OpenedState } from '../helpers/backends.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { startSite, type TestSite } from '../helpers/site.js';
import { useStorage } from '../helpers/storage.js';

// What is particular to S3 storage (the behaviour shared with local storage is in files*.test.ts, run on both):
// the presigned links, how a file PUT straight to the bucket becomes stored, a store that ignores the signed
// length, a bucket that fails, and several gateways (replicas) sharing one bucket.

const bytes = (n: number, seed = 5) => Buffer.from(Array.from({ length: n }, (_, i) => (i * seed) % 256));

async function put(url: string, body: Buffer) {
  const res = await request(url, { method: 'PUT', body });
  await res.body.dump();
  return res.statusCode;
}

async function get(url: string) {
  const res = await request(url);
  return { status: res.statusCode, bytes: Buffer.from(await res.body.arrayBuffer()) };
}

describe('files on S3', () => {
  const storage = useStorage('s3');
  let t: TestGateway;
  let key: string;
  let accountId: string;
  const keyOf = (fileId: string) => {
    const at = t.config.storage;
    if (at.kind !== 's3') throw new Error('S3 storage expected');
    return `${at.prefix}files/${fileId}`;
  };

  beforeAll(async () => {
    t = await startGateway({ env: storage.env() });
    ({ key, accountId } = await t.account('1'));
  });
  afterAll(async () => {
    await t.close();
  });

  it('[files:s3-presigned] put_url and get_url are presigned S3 URLs; the bytes never pass through the gateway', async () => {
    const r = await t.post('/api/run/files/upload', { filename: 'a.bin', size_bytes: 512 }, { key });
    expect(r.status).toBe(200);
    const { file_id, put_url, get_url } = r.body.data;
    const putLink = new URL(put_url);
    // The declared size is signed into the upload link; the upload must start within the hour.
    expect(putLink.searchParams.get('X-Amz-SignedHeaders')?.split(';')).toContain('content-length');
    expect(putLink.searchParams.get('X-Amz-Expires')).toBe('3600');
    expect(new URL(get_url).searchParams.get('X-Amz-Expires')).toBe('86400');
    // Local storage's routes are not mounted: nothing is served from the gateway itself.
    expect((await t.get(`/files/${file_id}`)).status).toBe(404);

    expect(await t.gw.run.services.files.get(accountId, file_id)).toMatchObject({ status: 'pending' });
    const data = bytes(512);
    expect(await put(put_url, data)).toBe(200);
    expect(await storage.s3.objectSize(keyOf(file_id))).toBe(512);
    // The first read finds the object (HEAD) with the declared size: stored from then on.
    const listed = await t.post('/api/run/files/list', { filename: 'a.bin' }, { key });
    expect(listed.body.data.files[0]).toMatchObject({ file_id, status: 'stored', size_bytes: 512 });
    const g = await get(listed.body.data.files[0].get_url);
    expect(g.status).toBe(200);
    expect(g.bytes.equals(data)).toBe(true);
  });

  it('[files:s3-wrong-size] an object of another size than declared never becomes the file: deleted, still pending', async () => {
    // S3 itself refuses such a PUT (the length is signed); a store that did not is caught on the next read.
    const r = await t.post('/api/run/files/upload', { filename: 'b.bin', size_bytes: 100 }, { key });
    const { file_id, get_url } = r.body.data;
    await storage.s3.client.send(
      new PutObjectCommand({ Bucket: storage.s3.bucket, Key: keyOf(file_id), Body: bytes(5000) }),
    );
    const listed = await t.post('/api/run/files/list', { filename: 'b.bin' }, { key });
    expect(listed.body.data.files[0]).toMatchObject({ status: 'pending', size_bytes: 100, get_url: null });
    expect(await storage.s3.objectSize(keyOf(file_id))).toBeUndefined();
    expect((await get(get_url)).status).toBe(404);
    // The right size still goes through afterwards.
    expect(await put(r.body.data.put_url, bytes(100))).toBe(200);
    expect(await t.gw.run.services.files.get(accountId, file_id)).toMatchObject({ status: 'stored' });
  });

  it('[files:owner-scoped] another account’s file is not found, on S3 as on disk', async () => {
    const other = await t.account('1');
    const r = await t.post('/api/run/files/upload', { filename: 'c.bin', size_bytes: 3 }, { key });
    expect(await put(r.body.data.put_url, bytes(3))).toBe(200);
    expect(await t.gw.run.services.files.get(other.accountId, r.body.data.file_id)).toBeUndefined();
    const theirs = await t.post('/api/run/files/list', {}, { key: other.key });
    expect(theirs.body.data.total).toBe(0);
  });
});

describe('files on an S3 bucket that fails', () => {
  const storage = useStorage('s3');
  let site: TestSite;

  beforeAll(async () => {
    site = await startSite({
      '/x.bin': (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': '10' });
        res.end(Buffer.alloc(10));
      },
    });
  });
  afterAll(async () => {
    await site.close();
  });

  it('[files:s3-unavailable] a missing bucket is a 503, uncharged; once it failed, no link is issued either', async () => {
    const env = storage.env();
    const t = await startGateway({
      env: {
        ...env,
        TOLLGATE_STORAGE_URL: String(env.TOLLGATE_STORAGE_URL).replace(storage.s3.bucket, 'no-such-bucket'),
      },
    });
    try {
      const { key } = await t.account('1');
      const r = await t.post('/api/run/files/upload_from_url', { url: `${site.url}/x.bin` }, { key });
      expect(r.status).toBe(503);
      expect(r.body.error.code).toBe('upstream_unavailable');
      expect(r.body.charged_cents).toBe(0);
      expect(r.text).not.toContain('NoSuchBucket');
      // files/upload only signs, without a round trip; but a bucket known to fail gets no paid link.
      const up = await t.post('/api/run/files/upload', { filename: 'd.bin', size_bytes: 4 }, { key });
      expect(up.status).toBe(503);
      expect(up.body.charged_cents).toBe(0);
      const listed = await t.post('/api/run/files/list', {}, { key });
      expect(listed.status).toBe(200);
      const tx = await t.post('/api/run/platform/balance', {}, { key });
      expect(tx.body.data.balance_micros).toBe(1_000_000);
    } finally {
      await t.close();
    }
  });
});

describe.each(BACKENDS)('replicas sharing one bucket (metadata on $name)', (backend) => {
  const storage = useStorage('s3');
  let meta: OpenedState;
  let site: TestSite;

  beforeAll(async () => {
    meta = await backend.open();
    site = await startSite({
      '/photo.png': (_req, res) => {
        res.writeHead(200, { 'content-type': 'image/png', 'content-length': '2048' });
        res.end(bytes(2048, 3));
      },
    });
  });
  afterAll(async () => {
    await meta.close();
    await site.close();
  });

  it('[files:shared-storage] a file stored through one gateway is read through another with its own data dir', async () => {
    // One metadata store for both (the database replicas share); one bucket prefix.
    const fileMeta = openFileMetaStore(meta.db);
    const env = storage.env('shared');
    const a = await startGateway({ env, fileMeta });
    const b = await startGateway({ env, fileMeta });
    try {
      expect(a.dataDir).not.toBe(b.dataDir);
      const alice = await a.account('1');
      const r = await a.post('/api/run/files/upload', { filename: 'shared.bin', size_bytes: 1000 }, alice);
      const { file_id, put_url, get_url } = r.body.data;
      // A is gone; the links it issued still work, and B settles and serves the file.
      await a.close();
      const data = bytes(1000, 7);
      expect(await put(put_url, data)).toBe(200);
      const onB = await b.gw.run.services.files.get(alice.accountId, file_id);
      expect(onB).toMatchObject({ file_id, status: 'stored', size_bytes: 1000 });
      if (!onB) throw new Error('stored file expected');
      expect((await get((await b.gw.run.services.files.link(onB, 'GET')).url)).bytes.equals(data)).toBe(true);
      expect((await get(get_url)).bytes.equals(data)).toBe(true);
      // Ownership holds across replicas too.
      expect(await b.gw.run.services.files.get('acct_someone_else', file_id)).toBeUndefined();

      // B stores one from a URL; a third gateway reads it.
      const bob = await b.account('1');
      const fetched = await b.post('/api/run/files/upload_from_url', { url: `${site.url}/photo.png` }, bob);
      expect(fetched.status).toBe(200);
      const c = await startGateway({ env, fileMeta });
      try {
        const page = await c.gw.run.services.files.list(bob.accountId, { limit: 10, offset: 0 });
        const [first] = page.files;
        expect(page.files).toHaveLength(1);
        expect(first).toMatchObject({ file_id: fetched.body.data.file_id, mime: 'image/png' });
        if (!first) throw new Error('listed file expected');
        const link = await c.gw.run.services.files.link(first, 'GET');
        const g = await request(link.url);
        expect(g.headers['content-type']).toBe('image/png');
        expect(Buffer.from(await g.body.arrayBuffer()).equals(bytes(2048, 3))).toBe(true);
      } finally {
        await c.close();
      }
    } finally {
      await a.close();
      await b.close();
    }
  });
});
