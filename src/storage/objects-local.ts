import { randomBytes } from 'node:crypto';
import { createWriteStream, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { link, open, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { GatewayError } from '../errors.js';
import {
  byteLimiter,
  FILE_ID,
  ObjectExistsError,
  type ObjectInfo,
  type ObjectStore,
  type PutOptions,
} from './objects.js';

// The embedded object store: one file per object under <data dir>/files/objects/<file_id>. Several gateway
// processes may share the directory (workers on one machine): a body is written to its own temporary file,
// synced, and published with link(2), which fails if the object exists, so the first complete upload wins
// and a stored object is never replaced.

/** A temporary file older than this belongs to no running upload (the HTTP server cuts requests at 30 min). */
const STALE_TMP_MS = 2 * 3_600_000;

export class LocalObjectStore implements ObjectStore {
  private readonly objects: string;
  private readonly tmp: string;

  /** `root`: <data dir>/files. */
  constructor(root: string) {
    this.objects = join(root, 'objects');
    this.tmp = join(root, 'tmp');
    mkdirSync(this.objects, { recursive: true });
    mkdirSync(this.tmp, { recursive: true });
    // Partial uploads left by dead processes are garbage; live ones (other workers') are recent.
    const cutoff = Date.now() - STALE_TMP_MS;
    for (const name of readdirSync(this.tmp)) {
      const p = join(this.tmp, name);
      try {
        if (statSync(p).mtimeMs < cutoff) rmSync(p, { force: true });
      } catch {
        // Removed meanwhile by another process.
      }
    }
  }

  /** The object's path on disk (the GET route streams it with ranges). */
  path(id: string): string {
    if (!FILE_ID.test(id)) throw new GatewayError('resource_not_found', 'No such file.');
    return join(this.objects, id);
  }

  async put(id: string, body: AsyncIterable<Uint8Array>, opts: PutOptions): Promise<number> {
    const target = this.path(id);
    const tmp = join(this.tmp, `${id}.${randomBytes(6).toString('hex')}`);
    const limiter = byteLimiter(opts.limit);
    const source = body instanceof Readable ? body : Readable.from(body);
    try {
      const sink = createWriteStream(tmp, { flags: 'wx' });
      await (opts.signal
        ? pipeline(source, limiter.counter, sink, { signal: opts.signal })
        : pipeline(source, limiter.counter, sink));
      limiter.finish();
      const fh = await open(tmp, 'r');
      try {
        await fh.sync();
      } finally {
        await fh.close();
      }
      try {
        await link(tmp, target);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'EEXIST') throw new ObjectExistsError();
        throw e;
      }
      return limiter.bytes();
    } finally {
      await rm(tmp, { force: true });
    }
  }

  async head(id: string): Promise<ObjectInfo | undefined> {
    try {
      const s = await stat(this.path(id));
      return { size: s.size, contentType: undefined };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw e;
    }
  }

  async delete(id: string): Promise<void> {
    await rm(this.path(id), { force: true });
  }

  close(): Promise<void> {
    return Promise.resolve();
  }

  /** Objects on disk (tests and operators). */
  count(): number {
    return readdirSync(this.objects).length;
  }
}
