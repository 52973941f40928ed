import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors.js';
import { FileLibrary } from '../../src/storage/file-library.js';
import { openFileMetaStore } from '../../src/storage/file-meta.js';
import { GatewayLinks } from '../../src/storage/gateway-links.js';
import { LocalObjectStore } from '../../src/storage/objects-local.js';
import { LinkSigner } from '../../src/storage/signing.js';
import { createDownloader } from '../../src/upstreams/safe-download.js';
import { BACKENDS, type OpenedState } from '../helpers/backends.js';
import { ManualClock } from '../helpers/clock.js';
import { startSite, type TestSite } from '../helpers/site.js';

// The size-limited, SSRF-guarded download and the store's streaming writes, with small limits.

async function drain(body: AsyncIterable<Uint8Array>): Promise<number> {
  let n = 0;
  for await (const c of body) n += c.length;
  return n;
}

const code = async (p: Promise<unknown>) => {
  try {
    await p;
    return 'resolved';
  } catch (e) {
    return e instanceof GatewayError ? e.code : String(e);
  }
};

describe('safe download', () => {
  let site: TestSite;
  const signal = new AbortController().signal;

  beforeAll(async () => {
    site = await startSite({
      '/chunked': async (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        for (let i = 0; i < 5; i++) res.write(Buffer.alloc(1000, i));
        res.end();
      },
      '/to-loopback': (_req, res) => {
        res.writeHead(302, { location: `${site.url}/chunked` }).end();
      },
    });
  });
  afterAll(() => site.close());

  it('[files:size-limit] stops reading a body without Content-Length once it passes maxBytes', async () => {
    const dl = createDownloader({ allow: ['127.0.0.1'] });
    try {
      const ok = await dl.open(`${site.url}/chunked`, { signal, maxBytes: 5000 });
      expect(await drain(ok.body)).toBe(5000);
      const over = await dl.open(`${site.url}/chunked`, { signal, maxBytes: 4999 });
      expect(await code(drain(over.body))).toBe('payload_too_large');
    } finally {
      await dl.close();
    }
  });

  it('[files:upload-from-url] checks every redirect hop with the SSRF guard', async () => {
    // "localhost" is allowed by name, but its redirect to the 127.0.0.1 literal is not.
    const dl = createDownloader({ allow: ['localhost'] });
    try {
      const port = new URL(site.url).port;
      expect(await code(dl.open(`http://localhost:${port}/to-loopback`, { signal, maxBytes: 10_000 }))).toBe(
        'invalid_input',
      );
      expect(await code(dl.open('ftp://example.com/x', { signal, maxBytes: 10 }))).toBe('invalid_input');
      expect(await code(dl.open('http://169.254.169.254/latest/meta-data', { signal, maxBytes: 10 }))).toBe(
        'invalid_input',
      );
    } finally {
      await dl.close();
    }
  });
});

describe.each(BACKENDS)('local file store ($name)', (backend) => {
  const root = mkdtempSync(join(tmpdir(), 'tollgate-store-'));
  const clock = new ManualClock();
  const objects = new LocalObjectStore(join(root, 'files'));
  let state: OpenedState;
  let store: FileLibrary;
  beforeAll(async () => {
    state = await backend.open();
    const meta = openFileMetaStore(state.db);
    const links = new GatewayLinks({
      meta,
      objects,
      clock,
      secret: Buffer.alloc(32, 1),
      publicUrl: () => 'https://gw.example',
    });
    store = new FileLibrary({ meta, objects, links, clock, directUploads: false });
  });
  afterAll(async () => {
    await state.close();
    rmSync(root, { recursive: true, force: true });
  });

  async function* chunks(n: number, size: number) {
    for (let i = 0; i < n; i++) yield Buffer.alloc(size, i);
  }

  it('[files:size-limit] ingest refuses more than maxBytes and leaves nothing behind', async () => {
    const signal = new AbortController().signal;
    expect(await code(store.ingest('o', { filename: 'a' }, chunks(3, 100), { maxBytes: 299, signal }))).toBe(
      'payload_too_large',
    );
    expect(readdirSync(join(root, 'files', 'tmp'))).toEqual([]);
    expect(objects.count()).toBe(0);
    const f = await store.ingest('o', { filename: 'a' }, chunks(3, 100), { maxBytes: 300, signal });
    expect(f).toMatchObject({ size_bytes: 300, status: 'stored' });
    expect(objects.count()).toBe(1);
  });

  it('[files:owner-scoped] get answers another owner’s file as not found', async () => {
    const f = await store.create('alice', { filename: 'x', size_bytes: 1 });
    expect(await store.get('alice', f.file_id)).toMatchObject({ file_id: f.file_id });
    expect(await store.get('bob', f.file_id)).toBeUndefined();
    expect((await store.list('bob', { limit: 10, offset: 0 })).total).toBe(0);
  });

  it('[files:signed-links] links are bound to method, file and expiry', () => {
    const signer = new LinkSigner(Buffer.alloc(32, 1));
    const now = Date.UTC(2026, 0, 1);
    const exp = String(now / 1000 + 60);
    const sig = signer.sign('GET', 'file_a', Number(exp));
    expect(signer.verify('GET', 'file_a', exp, sig, now)).toBe('ok');
    expect(signer.verify('PUT', 'file_a', exp, sig, now)).toBe('bad_signature');
    expect(signer.verify('GET', 'file_b', exp, sig, now)).toBe('bad_signature');
    expect(signer.verify('GET', 'file_a', String(Number(exp) + 1), sig, now)).toBe('bad_signature');
    expect(signer.verify('GET', 'file_a', exp, undefined, now)).toBe('missing');
    expect(signer.verify('GET', 'file_a', exp, sig, now + 60_000)).toBe('expired');
    expect(new LinkSigner(Buffer.alloc(32, 2)).verify('GET', 'file_a', exp, sig, now)).toBe('bad_signature');
  });
});
