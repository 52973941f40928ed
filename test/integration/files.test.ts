import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

// files through the HTTP shim and the signed-link endpoints: upload → PUT → GET, link refusals, ownership,
// files/list, persistence across a restart.

const bytes = (n: number, seed = 7) => Buffer.from(Array.from({ length: n }, (_, i) => (i * seed) % 256));

async function put(url: string, body: Buffer | Readable, headers: Record<string, string> = {}) {
  const res = await request(url, {
    method: 'PUT',
    body,
    headers: { 'content-type': 'video/mp4', ...headers },
  });
  const text = await res.body.text();
  return { status: res.statusCode, body: text ? JSON.parse(text) : undefined };
}

async function get(url: string, headers: Record<string, string> = {}) {
  const res = await request(url, { headers });
  return { status: res.statusCode, headers: res.headers, bytes: Buffer.from(await res.body.arrayBuffer()) };
}

describe('files (HTTP)', () => {
  let t: TestGateway;
  const clock = new ManualClock(Date.UTC(2026, 2, 1));
  let alice: { key: string };
  let bob: { key: string };

  const balance = async (key: string): Promise<number> =>
    (await t.post('/api/run/platform/balance', {}, { key })).body.data.balance_micros;
  const upload = (key: string, body: Record<string, unknown>) =>
    t.post('/api/run/files/upload', body, { key });

  beforeAll(async () => {
    t = await startGateway({ clock });
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
    expect(put_url.startsWith(`${t.url}/files/${file_id}?`)).toBe(true);
    expect(get_url.startsWith(`${t.url}/files/${file_id}?`)).toBe(true);

    // Not uploaded yet: nothing to download.
    expect((await get(get_url)).status).toBe(404);

    const data = bytes(3000);
    const p = await put(put_url, data);
    expect(p.status).toBe(200);
    expect(p.body).toMatchObject({ ok: true, file_id, size_bytes: 3000 });

    const g = await get(get_url);
    expect(g.status).toBe(200);
    expect(g.headers['content-type']).toBe('video/mp4');
    expect(g.headers['x-content-type-options']).toBe('nosniff');
    expect(g.headers['content-disposition']).toBe("inline; filename*=UTF-8''clip%20one.mp4");
    expect(g.bytes.equals(data)).toBe(true);

    const range = await get(get_url, { range: 'bytes=10-19' });
    expect(range.status).toBe(206);
    expect(range.bytes.equals(data.subarray(10, 20))).toBe(true);

    // Stored files are immutable: the PUT link cannot replace them.
    expect((await put(put_url, bytes(3000, 3))).status).toBe(403);
    expect((await get(get_url)).bytes.equals(data)).toBe(true);
  });

  it('[files:put-exact-size] a body that is not exactly size_bytes is refused and stores nothing', async () => {
    const r = await upload(alice.key, { filename: 'x.bin', size_bytes: 100 });
    const { put_url, get_url } = r.body.data;
    const shorter = await put(put_url, bytes(99));
    expect(shorter.status).toBe(400);
    expect(shorter.body.error.details.issues[0].path).toBe('Content-Length');
    expect((await put(put_url, bytes(101))).status).toBe(413);
    // No Content-Length (chunked): refused, naming the header.
    const chunked = await put(put_url, Readable.from([bytes(50), bytes(50)]));
    expect(chunked.status).toBe(400);
    expect((await get(get_url)).status).toBe(404);
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
    const sig = u.searchParams.get('signature') as string;

    const tampered = new URL(put_url);
    tampered.searchParams.set('signature', (sig[0] === 'A' ? 'B' : 'A') + sig.slice(1));
    expect((await put(tampered.toString(), bytes(10))).status).toBe(403);
    const later = new URL(put_url);
    later.searchParams.set('expires', String(Number(u.searchParams.get('expires')) + 3600));
    expect((await put(later.toString(), bytes(10))).status).toBe(403);
    expect((await put(`${t.url}/files/${file_id}`, bytes(10))).status).toBe(403);
    // A download link does not upload, and an upload link does not download.
    expect((await put(get_url, bytes(10))).status).toBe(403);
    // Another file's id with this signature.
    const other = (await upload(alice.key, { filename: 'z.bin', size_bytes: 10 })).body.data.file_id;
    expect((await put(put_url.replace(file_id, other), bytes(10))).status).toBe(403);

    // Expiry: the upload link lasts an hour, the download link a day.
    clock.advance(3_601_000);
    const expired = await put(put_url, bytes(10));
    expect(expired.status).toBe(403);
    const fresh = await upload(alice.key, { filename: 'w.bin', size_bytes: 4 });
    expect((await put(fresh.body.data.put_url, bytes(4))).status).toBe(200);
    clock.advance(86_400_000);
    const g = await get(fresh.body.data.get_url);
    expect(g.status).toBe(403);
    expect(JSON.parse(g.bytes.toString()).error.message).toMatch(/expired/);
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

describe('files persist across a restart', () => {
  it('[files:persist] a stored file and its links survive a restart (generated signing secret kept)', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-files-'));
    try {
      const first = await startGateway({ dataDir });
      const { key } = await first.account('1');
      const r = await first.post('/api/run/files/upload', { filename: 'keep.bin', size_bytes: 64 }, { key });
      const data = bytes(64, 11);
      expect((await put(r.body.data.put_url, data)).status).toBe(200);
      await first.close();

      const second = await startGateway({ dataDir });
      try {
        // Same link, new process and port: the path and signature still hold.
        const path = new URL(r.body.data.get_url);
        const g = await get(`${second.url}${path.pathname}${path.search}`);
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
