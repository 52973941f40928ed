import { readdirSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_FILE_BYTES } from '../../catalog/files.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { startSite, type TestSite } from '../helpers/site.js';
import { STORAGE_MODES, useStorage } from '../helpers/storage.js';

// files/upload_from_url at the 100 MB limit (docs/spec.md §8), on local disk and on S3: the body is streamed into the
// store, so the gateway's memory stays flat however large the file. Bodies of known length go to S3 in one
// streamed PutObject; of unknown length, in a multipart upload of bounded parts.

const CHUNK = Buffer.alloc(64 * 1024, 0x5a);

/** Writes `total` bytes in 64 KiB chunks, waiting for the socket to drain, so the site itself buffers little. */
async function send(res: ServerResponse, total: number): Promise<void> {
  let left = total;
  while (left > 0) {
    const n = Math.min(left, CHUNK.length);
    left -= n;
    if (!res.write(n === CHUNK.length ? CHUNK : CHUNK.subarray(0, n))) {
      await new Promise<void>((r) => {
        const done = () => {
          res.off('drain', done);
          res.off('close', done);
          r();
        };
        res.on('drain', done);
        res.on('close', done);
      });
      if (res.destroyed) return;
    }
  }
  res.end();
}

// A full collection before each sample, so what is measured is memory still in use, not garbage that V8
// has not collected yet (with 100 MB streaming through, that alone can reach tens of MiB).
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const live = () => {
  gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
};

/** Runs `work` while sampling the live memory of this process; reports the peak growth above the start, MiB. */
async function peakGrowth<T>(work: () => Promise<T>): Promise<{ result: T; liveMiB: number }> {
  const start = live();
  let peak = start;
  let running = true;
  // Each sample waits for the work to move on (a full collection is not free): a tenth of the time at most. A store that buffered the body would
  // grow all along the transfer, so sparse samples still see it.
  const sampler = (async () => {
    while (running) {
      const t0 = performance.now();
      peak = Math.max(peak, live());
      await new Promise((r) => setTimeout(r, Math.max(100, 9 * (performance.now() - t0))));
    }
  })();
  try {
    const result = await work();
    return { result, liveMiB: (peak - start) / 2 ** 20 };
  } finally {
    running = false;
    await sampler;
  }
}

/** 100 MB through loopback twice takes seconds alone, and far longer on a machine busy with other work. */
const LARGE_TIMEOUT_MS = 180_000;

/** Less than half the file: a store that held the whole body (100 MiB) in memory could not stay under it. */
const FLAT_MIB = 50;

describe.each(STORAGE_MODES)('files/upload_from_url at 100 MB (%s storage)', (mode) => {
  const storage = useStorage(mode);
  let t: TestGateway;
  let site: TestSite;
  let key: string;

  const fromUrl = (path: string) =>
    t.post('/api/run/files/upload_from_url', { url: `${site.url}${path}` }, { key });
  const balance = async (): Promise<number> =>
    (await t.post('/api/run/platform/balance', {}, { key })).body.data.balance_micros;
  /** Objects the store holds: files on disk, or keys under the gateway's prefix in the bucket. */
  const stored = async (fileId: string): Promise<number | undefined> => {
    const at = t.config.storage;
    if (at.kind === 's3') return storage.s3.objectSize(`${at.prefix}files/${fileId}`);
    return readdirSync(join(t.dataDir, 'files', 'objects')).includes(fileId) ? MAX_FILE_BYTES : undefined;
  };
  const objectCount = () =>
    mode === 'local' ? readdirSync(join(t.dataDir, 'files', 'objects')).length : undefined;

  beforeAll(async () => {
    site = await startSite({
      '/exact.bin': (_req, res) => {
        res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': String(MAX_FILE_BYTES) });
        return send(res, MAX_FILE_BYTES);
      },
      '/over-chunked.bin': (_req, res) => {
        // No Content-Length: the limit can only be enforced while reading.
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        return send(res, MAX_FILE_BYTES + 1);
      },
      '/twenty-chunked.bin': (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        return send(res, 20 * 2 ** 20);
      },
    });
    t = await startGateway({ env: storage.env() });
    key = (await t.account('1')).key;
  });
  afterAll(async () => {
    await t?.close();
    await site?.close();
  });

  it(
    '[files:size-limit] [files:stream-memory] exactly 100 MB is stored, streamed: memory stays flat',
    async () => {
      const { result: r, liveMiB } = await peakGrowth(() => fromUrl('/exact.bin'));
      expect(r.status).toBe(200);
      expect(r.body.data).toMatchObject({ size_bytes: MAX_FILE_BYTES, mime: 'video/mp4' });
      expect(await stored(r.body.data.file_id)).toBe(MAX_FILE_BYTES);
      if (process.env.TOLLGATE_TEST_REPORT) {
        process.stdout.write(`${mode} 100 MB, Content-Length: live memory +${liveMiB.toFixed(1)} MiB\n`);
      }
      expect(liveMiB).toBeLessThan(FLAT_MIB);
      // The stored bytes are whole: the last range reads back.
      const tail = await request(r.body.data.get_url, { headers: { range: `bytes=${MAX_FILE_BYTES - 4}-` } });
      expect(tail.statusCode).toBe(206);
      expect(Buffer.from(await tail.body.arrayBuffer()).equals(Buffer.alloc(4, 0x5a))).toBe(true);
    },
    LARGE_TIMEOUT_MS,
  );

  it(
    '[files:size-limit] [files:stream-memory] one byte over, with no Content-Length: 413 mid-stream, uncharged, nothing stored',
    async () => {
      const before = await balance();
      const count = (await t.post('/api/run/files/list', {}, { key })).body.data.total;
      const objects = objectCount();
      const { result: r, liveMiB } = await peakGrowth(() => fromUrl('/over-chunked.bin'));
      expect(r.status).toBe(413);
      expect(r.body.error.code).toBe('payload_too_large');
      expect(r.body.charged_cents).toBe(0);
      expect(await balance()).toBe(before);
      expect((await t.post('/api/run/files/list', {}, { key })).body.data.total).toBe(count);
      expect(objectCount()).toBe(objects);
      const at = t.config.storage;
      // Nothing under the gateway's prefix but the one stored file of the previous test.
      if (at.kind === 's3') expect(await storage.s3.keys(`${at.prefix}files/`)).toHaveLength(1);
      if (process.env.TOLLGATE_TEST_REPORT) {
        process.stdout.write(`${mode} 100 MB + 1, chunked: live memory +${liveMiB.toFixed(1)} MiB\n`);
      }
      expect(liveMiB).toBeLessThan(FLAT_MIB);
    },
    LARGE_TIMEOUT_MS,
  );

  it('[files:upload-from-url] 20 MB of unknown length is stored whole (S3: a multipart upload)', async () => {
    const r = await fromUrl('/twenty-chunked.bin');
    expect(r.status).toBe(200);
    expect(r.body.data.size_bytes).toBe(20 * 2 ** 20);
    const g = await request(r.body.data.get_url, { headers: { range: 'bytes=0-1' } });
    await g.body.dump();
    expect(g.statusCode).toBe(206);
    expect(g.headers['content-range']).toBe(`bytes 0-1/${20 * 2 ** 20}`);
  });
});
