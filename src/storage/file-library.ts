import type { Logger } from 'pino';
import type { Clock } from '../lib/clock.js';
import { newId } from '../lib/ids.js';
import type {
  FileListQuery,
  FileMetaStore,
  FileRecord,
  FileStore,
  NewFileMeta,
  SignedLink,
  StoredFile,
} from '../ports/index.js';
import { usableType } from './gateway-links.js';
import type { LinkIssuer, ObjectStore } from './objects.js';

// The file library (files/*): metadata in a FileMetaStore, bytes in an ObjectStore, links from a LinkIssuer.
// The same library serves the embedded gateway (SQLite + local disk + gateway links) and replicas (PostgreSQL +
// S3 + presigned URLs); nothing here is kept in process memory, so any replica answers for any file.

/** How long links stay valid: an upload must start within an hour; a download link lasts a day. */
export const LINK_TTL_SEC = { PUT: 3600, GET: 86_400 } as const;

/**
 * With direct uploads, how long after files/upload a pending file is still worth a HEAD: its PUT link lasts an
 * hour, and a PUT started in time may run long. Past this, a pending file's bytes are never coming.
 */
const SETTLE_WINDOW_MS = LINK_TTL_SEC.PUT * 1000 + 24 * 3_600_000;

/** S3 stores objects with no declared type under these; they say nothing about the bytes. */
const UNTYPED = new Set(['binary/octet-stream', 'application/octet-stream']);

export interface FileLibraryOptions {
  meta: FileMetaStore;
  objects: ObjectStore;
  links: LinkIssuer;
  clock: Clock;
  /**
   * True when callers PUT straight to the object store (S3 presigned URLs): the gateway never sees the upload,
   * so a pending file becomes stored when a read finds its object (HEAD) with exactly the declared size.
   */
  directUploads: boolean;
  log?: Logger | undefined;
}

export class FileLibrary implements FileStore {
  constructor(private readonly opts: FileLibraryOptions) {}

  async create(owner: string, meta: NewFileMeta & { size_bytes: number }): Promise<StoredFile> {
    const rec = this.record(owner, meta, meta.size_bytes, 'pending', null);
    await this.opts.meta.insert(rec);
    return view(rec);
  }

  async ingest(
    owner: string,
    meta: NewFileMeta & { source_url?: string },
    body: AsyncIterable<Uint8Array>,
    o: { maxBytes: number; signal: AbortSignal; length?: number | undefined },
  ): Promise<StoredFile> {
    const fileId = newId('file', this.opts.clock.now());
    const size = await this.opts.objects.put(fileId, body, {
      limit: { max: o.maxBytes },
      length: o.length,
      contentType: meta.mime,
      signal: o.signal,
    });
    const rec = this.record(owner, meta, size, 'stored', meta.source_url ?? null, fileId);
    try {
      await this.opts.meta.insert(rec);
    } catch (e) {
      // Bytes nobody can name are garbage.
      await this.opts.objects.delete(fileId).catch(() => undefined);
      throw e;
    }
    return view(rec);
  }

  async get(owner: string, fileId: string): Promise<StoredFile | undefined> {
    const rec = await this.opts.meta.get(fileId);
    if (!rec || rec.owner !== owner) return undefined;
    return view(await this.settle(rec));
  }

  async list(owner: string, q: FileListQuery): Promise<{ files: StoredFile[]; total: number }> {
    const page = await this.opts.meta.list(owner, q);
    const files = await Promise.all(page.files.map((f) => this.settle(f)));
    return { files: files.map(view), total: page.total };
  }

  async link(file: StoredFile, method: 'GET' | 'PUT'): Promise<SignedLink> {
    // Whole seconds: both kinds of link carry their expiry in seconds.
    const signedAtMs = Math.floor(this.opts.clock.now() / 1000) * 1000;
    const ttl = LINK_TTL_SEC[method];
    const url = await this.opts.links.sign(file, method, signedAtMs, ttl);
    return { url, expires_at: signedAtMs + ttl * 1000 };
  }

  /**
   * A pending file whose object arrived by a direct PUT becomes stored. Only an object of exactly the declared
   * size counts: S3 refuses other sizes (Content-Length is signed into the PUT link), and a store that did not
   * has its object deleted, so no download link ever serves more than was declared (and paid for).
   */
  private async settle(rec: FileRecord): Promise<FileRecord> {
    if (rec.status !== 'pending' || !this.opts.directUploads) return rec;
    const now = this.opts.clock.now();
    if (now - rec.created_at > SETTLE_WINDOW_MS) return rec;
    // The store being unreachable (logged by it) leaves the file pending for this read rather than failing it.
    const found = await this.opts.objects.head(rec.file_id).catch(() => undefined);
    if (!found) return rec;
    if (found.size !== rec.size_bytes) {
      this.opts.log?.warn(
        { file_id: rec.file_id, declared: rec.size_bytes, found: found.size },
        'object store accepted a PUT of the wrong size; deleted it',
      );
      await this.opts.objects.delete(rec.file_id).catch(() => undefined);
      return rec;
    }
    const type = found.contentType && !UNTYPED.has(found.contentType) ? found.contentType : undefined;
    const mime = rec.mime ?? usableType(type);
    if (await this.opts.meta.markStored(rec.file_id, { size_bytes: found.size, mime, stored_at: now })) {
      return { ...rec, status: 'stored', mime };
    }
    // Another replica settled it first; its record is the one.
    return (await this.opts.meta.get(rec.file_id)) ?? rec;
  }

  private record(
    owner: string,
    meta: NewFileMeta,
    size: number,
    status: 'pending' | 'stored',
    sourceUrl: string | null,
    fileId = newId('file', this.opts.clock.now()),
  ): FileRecord {
    return {
      file_id: fileId,
      owner,
      filename: meta.filename,
      size_bytes: size,
      mime: meta.mime || null,
      tags: meta.tags ?? [],
      note: meta.note ?? null,
      status,
      source_url: sourceUrl,
      created_at: this.opts.clock.now(),
    };
  }
}

/** The handler's view: everything but the owner. */
function view(r: FileRecord): StoredFile {
  const { owner: _owner, ...file } = r;
  return file;
}
