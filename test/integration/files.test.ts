import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../helpers/clock.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { STORAGE_MODES, useStorage } from '../helpers/storage.js';

// files through the HTTP shim and the file links: upload → PUT → GET, link refusals, ownership, files/list,
// persistence across a restart. Run against local storage (links served by the gateway) and S3 (presigned
// links to the bucket; the S3 server checks their signatures and expiry against its own clock).

const bytes = (n: number, seed = 7) => Buffer.from(Array.from({ length: n }, (_, i) => (i * seed) % 256));

async function put(url: string, body: Buffer | Readable, headers: Record<string, string> = {}) {
  const res = await request(url, {
    method: 'PUT',
    body,
    headers: { 'content-type': 'video/mp4', ...headers },
  });
  const text = await res.body.text();
  // The gateway answers JSON; S3 an empty body, or an XML error.
  const json = String(res.headers['content-type'] ?? '').includes('json');
  return { status: res.statusCode, body: json ? JSON.parse(text) : undefined };
}

async function get(url: string, headers: Record<string, string> = {}) {
  const res = await request(url, { headers });
  return { status: res.statusCode, headers: res.headers, bytes: Buffer.from(await res.body.arrayBuffer()) };
}

describe.each(STORAGE_MODES)('files (HTTP, %s storage)', (mode) => {
  const storage = useStorage(mode);
  let t: TestGateway;
  // Real time: S3 judges a presigned link's expiry by its own clock.
  const clock = new ManualClock(Date.now());
  let alice: { key: string };
  let bob: { key: string };

  const balance = async (key: string): Promise<number> =>
    (await t.post('/api/run/platform/balance', {}, { key })).body.data.balance_micros;
  const upload = (key: string, body: Record<string, unknown>) =>
    t.post('/api/run/files/upload', body, { key });

  beforeAll(async () => {
    t = await startGateway({ clock, env: storage.env() });
    alice = await t.account('1');
    bob = await t.account('1');
  });
  afterAll(async () => {
    await t.close();
  });

  it('[files:upload-put-get] [billing:charge-only-on-success] upload → PUT the bytes → GET them back', async () => {
    const before = await balance(alice.key);
    const r = await upload(alice.key, {
      filename: 'clip one.mp4',
      size_bytes: 3000,
      mime: 'video/mp4',
      tags: ['a'],
    });
    expect(r.status).toBe(200);
    expect(r.body.charged_cents).toBe(1);
    expect(await balance(alice.key)).toBe(before - 10_000);
    const { file_id, put_url, get_url } = r.body.data;
    expect(file_id).toMatch(/^file_/);
    expect(put_url.startsWith(storage.linkBase(t, file_id))).toBe(true);
    expect(get_url.startsWith(storage.linkBase(t, file_id))).toBe(true);

    // Not uploaded yet: nothing to download.
    expect((await get(get_url)).status).toBe(404);

    const data = bytes(3000);
    const p = await put(put_url, data, { 'content-type': 'text/html' });
    expect(p.status).toBe(200);
    if (mode === 'local') expect(p.body).toMatchObject({ ok: true, file_id, size_bytes: 3000 });

    const g = await get(get_url);
    expect(g.status).toBe(200);
    // The declared type and our name, whatever the PUT sent.
    expect(g.headers['content-type']).toBe('video/mp4');
    expect(g.headers['content-disposition']).toBe("inline; filename*=UTF-8''clip%20one.mp4");
    expect(g.bytes.equals(data)).toBe(true);
    // Bytes served from our own origin must never be sniffed or run there (S3 serves them from its own).
    if (mode === 'local') expect(g.headers['x-content-type-options']).toBe('nosniff');

    const range = await get(get_url, { range: 'bytes=10-19' });
    expect(range.status).toBe(206);
    expect(range.bytes.equals(data.subarray(10, 20))).toBe(true);

    if (mode === 'local') {
      // Stored files are immutable: the PUT link cannot replace them.
      expect((await put(put_url, bytes(3000, 3))).status).toBe(403);
      expect((await get(get_url)).bytes.equals(data)).toBe(true);
    } else {
      // S3 cannot revoke a presigned URL: until it expires, the owner's PUT link can send the bytes again,
      // but never another size (docs/decisions.md), and the name and type stay ours.
      expect((await put(put_url, bytes(3001, 3))).status).toBe(403);
      expect((await put(put_url, bytes(3000, 3))).status).toBe(200);
      const again = await get(get_url);
      expect(again.bytes.length).toBe(3000);
      expect(again.headers['content-type']).toBe('video/mp4');
    }
    const listed = await t.post('/api/run/files/list', { filename: 'clip one.mp4' }, { key: alice.key });
    expect(listed.body.data.files[0]).toMatchObject({ file_id, status: 'stored', size_bytes: 3000 });
  });

  it('[files:put-exact-size] a body that is not exactly size_bytes is refused and stores nothing', async () => {
    const r = await upload(alice.key, { filename: 'x.bin', size_bytes: 100 });
    const { put_url, get_url } = r.body.data;
    const shorter = await put(put_url, bytes(99));
    const longer = await put(put_url, bytes(101));
    // No Content-Length (chunked).
    const chunked = await put(put_url, Readable.from([bytes(50), bytes(50)]));
    if (mode === 'local') {
      // Refused before the body is read, naming the header.
      expect(shorter.status).toBe(400);
      expect(shorter.body.error.details.issues[0].path).toBe('Content-Length');
      expect(longer.status).toBe(413);
      expect(chunked.status).toBe(400);
    } else {
      // Content-Length is signed into the URL: S3 refuses any other length as a signature mismatch.
      expect(shorter.status).toBe(403);
      expect(longer.status).toBe(403);
      expect([403, 411, 501]).toContain(chunked.status);
    }
    expect((await get(get_url)).status).toBe(404);
    const pending = await t.post('/api/run/files/list', { filename: 'x.bin' }, { key: alice.key });
    expect(pending.body.data.files[0]).toMatchObject({ status: 'pending', get_url: null });
    // The right size still works afterwards; without a declared mime the PUT's Content-Type is kept.
    expect((await put(put_url, bytes(100), { 'content-type': 'image/png' })).status).toBe(200);
    const g = await get(get_url);
    expect(g.headers['content-type']).toBe('image/png');
    expect(g.bytes.length).toBe(100);
  });

  it('[files:size-limit] size_bytes above 104857600 is a 400 naming the field, uncharged', async () => {
    const before = await balance(alice.key);
    const r = await upload(alice.key, { filename: 'big.bin', size_bytes: 104_857_601 });
    expect(r.status).toBe(400);
    expect(r.body.error.details.issues.map((i: { path: string }) => i.path)).toEqual(['size_bytes']);
    expect(await balance(alice.key)).toBe(before);
  });

  it('[files:signed-links] tampered, wrong-method, unsigned and expired links are refused', async () => {
    const r = await upload(alice.key, { filename: 'y.bin', size_bytes: 10 });
    const { file_id, put_url, get_url } = r.body.data;
    const u = new URL(put_url);
    const { signature, expires } = storage.params;
    const sig = u.searchParams.get(signature) as string;

    const tampered = new URL(put_url);
    tampered.searchParams.set(signature, (sig[0] === 'a' ? 'b' : 'a') + sig.slice(1));
    expect((await put(tampered.toString(), bytes(10))).status).toBe(403);
    const later = new URL(put_url);
    later.searchParams.set(expires, String(Number(u.searchParams.get(expires)) + 3600));
    expect((await put(later.toString(), bytes(10))).status).toBe(403);
    expect((await put(`${u.origin}${u.pathname}`, bytes(10))).status).toBe(403);
    // A download link does not upload, and an upload link does not download.
    expect((await put(get_url, bytes(10))).status).toBe(403);
    expect((await get(put_url)).status).toBe(403);
    // Another file's id with this signature.
    const other = (await upload(alice.key, { filename: 'z.bin', size_bytes: 10 })).body.data.file_id;
    expect((await put(put_url.replace(file_id, other), bytes(10))).status).toBe(403);

    // Expiry: the upload link lasts an hour, the download link a day. Links are issued in the past (the
    // clock set back) and used now, since S3 judges expiry by its own clock.
    const now = Date.now();
    clock.set(now - 3_601_000);
    const old = await upload(alice.key, { filename: 'v.bin', size_bytes: 10 });
    clock.set(now);
    expect((await put(old.body.data.put_url, bytes(10))).status).toBe(403);
    const fresh = await upload(alice.key, { filename: 'w.bin', size_bytes: 4 });
    expect((await put(fresh.body.data.put_url, bytes(4))).status).toBe(200);
    clock.set(now - 86_401_000);
    const stale = await t.post('/api/run/files/list', { filename: 'w.bin' }, { key: alice.key });
    clock.set(now);
    const g = await get(stale.body.data.files[0].get_url);
    expect(g.status).toBe(403);
    if (mode === 'local') expect(JSON.parse(g.bytes.toString()).error.message).toMatch(/expired/);
    else expect(g.bytes.toString()).toMatch(/expired/);
    // files/list hands out fresh links.
    const listed = await t.post('/api/run/files/list', { filename: 'w.bin' }, { key: alice.key });
    expect(listed.body.charged_cents).toBe(0);
    const again = await get(listed.body.data.files[0].get_url);
    expect(again.status).toBe(200);
    expect(again.bytes.length).toBe(4);
  });

  it('[files:list] [files:owner-scoped] files/list shows only the caller’s files, filters by tag, needs a key', async () => {
    await upload(bob.key, { filename: 'bob.txt', size_bytes: 5, tags: ['mine', 'b'], note: 'hello' });
    const mine = await t.post('/api/run/files/list', {}, { key: bob.key });
    expect(mine.status).toBe(200);
    expect(mine.body.data.total).toBe(1);
    expect(mine.body.data.files[0]).toMatchObject({
      filename: 'bob.txt',
      size_bytes: 5,
      tags: ['mine', 'b'],
      note: 'hello',
      status: 'pending',
      get_url: null,
    });
    const aliceFiles = await t.post('/api/run/files/list', { limit: 100 }, { key: alice.key });
    expect(aliceFiles.body.data.files.some((f: { filename: string }) => f.filename === 'bob.txt')).toBe(
      false,
    );
    expect(aliceFiles.body.data.total).toBeGreaterThan(2);
    const tagged = await t.post('/api/run/files/list', { tag: 'a' }, { key: alice.key });
    expect(tagged.body.data.files.map((f: { filename: string }) => f.filename)).toEqual(['clip one.mp4']);
    const paged = await t.post('/api/run/files/list', { limit: 1, offset: 1 }, { key: alice.key });
    expect(paged.body.data.files).toHaveLength(1);
    expect((await t.post('/api/run/files/list', {})).status).toBe(401);
  });
});

describe.each(STORAGE_MODES)('files persist across a restart (%s storage)', (mode) => {
  const storage = useStorage(mode);
  it('[files:persist] a stored file and its links survive a restart (generated signing secret kept)', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-files-'));
    const env = storage.env();
    try {
      const first = await startGateway({ dataDir, env });
      const { key } = await first.account('1');
      const r = await first.post('/api/run/files/upload', { filename: 'keep.bin', size_bytes: 64 }, { key });
      const data = bytes(64, 11);
      expect((await put(r.body.data.put_url, data)).status).toBe(200);
      await first.close();

      const second = await startGateway({ dataDir, env });
      try {
        // Same link, new process and port: the path and signature still hold.
        const link = new URL(r.body.data.get_url);
        const g = await get(mode === 'local' ? `${second.url}${link.pathname}${link.search}` : link.href);
        expect(g.status).toBe(200);
        expect(g.bytes.equals(data)).toBe(true);
        const listed = await second.post('/api/run/files/list', {}, { key });
        expect(listed.body.data.files[0]).toMatchObject({ filename: 'keep.bin', status: 'stored' });
      } finally {
        await second.close();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
