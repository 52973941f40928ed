import { randomBytes } from 'node:crypto';
import { createWriteStream, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { GatewayError } from '../errors.js';
import type { Clock } from '../lib/clock.js';
import { newId } from '../lib/ids.js';
import { migrate, type SqliteDb } from '../lib/sqlite.js';
import type { FileStore, NewFileMeta, SignedLink, StoredFile } from '../ports/index.js';
import { type LinkMethod, LinkSigner } from './signing.js';

// The embedded file library: bytes on local disk under <data dir>/files/objects/<file_id>, metadata in the
// gateway's SQLite database. One process owns the data dir (instance lock), so in-process bookkeeping is
// enough to keep two uploads of one file from interleaving.

const MIGRATIONS = [
  `CREATE TABLE files (
     file_id    TEXT PRIMARY KEY,
     owner      TEXT NOT NULL,
     filename   TEXT NOT NULL,
     size_bytes INTEGER NOT NULL,
     mime       TEXT,
     tags       TEXT NOT NULL DEFAULT '[]',
     note       TEXT,
     status     TEXT NOT NULL CHECK (status IN ('pending', 'stored')),
     source_url TEXT,
     created_at INTEGER NOT NULL,
     stored_at  INTEGER
   );
   CREATE INDEX files_owner ON files(owner, created_at);`,
];

/** How long links stay valid: an upload must start within an hour; a download link lasts a day. */
export const LINK_TTL_MS: Record<LinkMethod, number> = { PUT: 3_600_000, GET: 86_400_000 };

const FILE_ID = /^file_[0-9a-z]{25}$/;

interface Row {
  file_id: string;
  owner: string;
  filename: string;
  size_bytes: number;
  mime: string | null;
  tags: string;
  note: string | null;
  status: 'pending' | 'stored';
  source_url: string | null;
  created_at: number;
}

export interface LocalFileStoreOptions {
  db: SqliteDb;
  /** <data dir>/files */
  root: string;
  clock: Clock;
  secret: Buffer;
  /** The base URL callers see; read at each call (tests learn it only after binding). */
  publicUrl: () => string;
}

export class LocalFileStore implements FileStore {
  private readonly db: SqliteDb;
  private readonly clock: Clock;
  private readonly signer: LinkSigner;
  private readonly objects: string;
  private readonly tmp: string;
  private readonly writing = new Set<string>();

  constructor(private readonly opts: LocalFileStoreOptions) {
    this.db = opts.db;
    this.clock = opts.clock;
    this.signer = new LinkSigner(opts.secret);
    this.objects = join(opts.root, 'objects');
    this.tmp = join(opts.root, 'tmp');
    mkdirSync(this.objects, { recursive: true });
    // Partial uploads left by a previous process are garbage: nobody can finish them.
    rmSync(this.tmp, { recursive: true, force: true });
    mkdirSync(this.tmp, { recursive: true });
    migrate(this.db, 'files', MIGRATIONS);
  }

  create(owner: string, meta: NewFileMeta & { size_bytes: number }): Promise<StoredFile> {
    return Promise.resolve(this.insert(owner, meta, meta.size_bytes, 'pending', null));
  }

  async ingest(
    owner: string,
    meta: NewFileMeta & { source_url?: string },
    body: AsyncIterable<Uint8Array>,
    opts: { maxBytes: number; signal: AbortSignal },
  ): Promise<StoredFile> {
    const fileId = newId('file', this.clock.now());
    const size = await this.writeObject(fileId, Readable.from(body), { max: opts.maxBytes }, opts.signal);
    return this.insert(owner, meta, size, 'stored', meta.source_url ?? null, fileId);
  }

  get(owner: string, fileId: string): Promise<StoredFile | undefined> {
    const r = this.db
      .prepare<[string, string], Row>('SELECT * FROM files WHERE file_id = ? AND owner = ?')
      .get(fileId, owner);
    return Promise.resolve(r ? toFile(r) : undefined);
  }

  list(
    owner: string,
    q: { tag?: string | undefined; filename?: string | undefined; limit: number; offset: number },
  ): Promise<{ files: StoredFile[]; total: number }> {
    let where = 'owner = ?';
    const args: unknown[] = [owner];
    if (q.filename !== undefined) {
      where += ' AND filename = ?';
      args.push(q.filename);
    }
    if (q.tag !== undefined) {
      where += ' AND EXISTS (SELECT 1 FROM json_each(files.tags) WHERE json_each.value = ?)';
      args.push(q.tag);
    }
    const total = (
      this.db.prepare(`SELECT count(*) AS n FROM files WHERE ${where}`).get(...args) as { n: number }
    ).n;
    const rows = this.db
      .prepare(`SELECT * FROM files WHERE ${where} ORDER BY created_at DESC, file_id DESC LIMIT ? OFFSET ?`)
      .all(...args, q.limit, q.offset) as Row[];
    return Promise.resolve({ files: rows.map(toFile), total });
  }

  link(fileId: string, method: LinkMethod): SignedLink {
    const expiresMs = this.clock.now() + LINK_TTL_MS[method];
    const expires = Math.floor(expiresMs / 1000);
    const sig = this.signer.sign(method, fileId, expires);
    const base = this.opts.publicUrl().replace(/\/+$/, '');
    return { url: `${base}/files/${fileId}?expires=${expires}&signature=${sig}`, expires_at: expires * 1000 };
  }

  // ---- behind the signed links (src/http/file-routes.ts) ------------------------------------------------

  /** The file a signed link grants `method` on, or the refusal. The link is the capability: no owner check. */
  authorize(fileId: string, method: LinkMethod, expires?: string, signature?: string): StoredFile {
    // Signature first: an unsigned request learns nothing, not even whether the id exists.
    const verdict = FILE_ID.test(fileId)
      ? this.signer.verify(method, fileId, expires, signature, this.clock.now())
      : 'bad_signature';
    if (verdict === 'missing' || verdict === 'bad_signature') {
      throw new GatewayError('forbidden', 'This file link is not valid (missing or wrong signature).');
    }
    if (verdict === 'expired') {
      throw new GatewayError('forbidden', 'This file link has expired; files/list returns fresh links.');
    }
    const r = this.db.prepare<[string], Row>('SELECT * FROM files WHERE file_id = ?').get(fileId);
    if (!r) throw new GatewayError('resource_not_found', 'No such file.');
    return toFile(r);
  }

  objectPath(fileId: string): string {
    if (!FILE_ID.test(fileId)) throw new GatewayError('resource_not_found', 'No such file.');
    return join(this.objects, fileId);
  }

  /** Receives the bytes of a pending file: exactly its declared size, streamed to disk, then made visible. */
  async receive(file: StoredFile, body: Readable, contentType: string | undefined): Promise<void> {
    if (file.status === 'stored') {
      throw new GatewayError('forbidden', 'This file was already uploaded; stored files cannot be replaced.');
    }
    if (this.writing.has(file.file_id)) {
      throw new GatewayError('forbidden', 'An upload to this file is already in progress.');
    }
    this.writing.add(file.file_id);
    try {
      await this.writeObject(file.file_id, body, { exact: file.size_bytes });
      const mime = file.mime ?? usableType(contentType);
      this.db
        .prepare("UPDATE files SET status = 'stored', stored_at = ?, mime = ? WHERE file_id = ?")
        .run(this.clock.now(), mime, file.file_id);
    } finally {
      this.writing.delete(file.file_id);
    }
  }

  // ---- internals --------------------------------------------------------------------------------------

  private insert(
    owner: string,
    meta: NewFileMeta,
    size: number,
    status: 'pending' | 'stored',
    sourceUrl: string | null,
    fileId: string = newId('file', this.clock.now()),
  ): StoredFile {
    const now = this.clock.now();
    const row: Row = {
      file_id: fileId,
      owner,
      filename: meta.filename,
      size_bytes: size,
      mime: meta.mime || null,
      tags: JSON.stringify(meta.tags ?? []),
      note: meta.note ?? null,
      status,
      source_url: sourceUrl,
      created_at: now,
    };
    this.db
      .prepare(
        `INSERT INTO files (file_id, owner, filename, size_bytes, mime, tags, note, status, source_url, created_at, stored_at)
         VALUES (@file_id, @owner, @filename, @size_bytes, @mime, @tags, @note, @status, @source_url, @created_at, @stored_at)`,
      )
      .run({ ...row, stored_at: status === 'stored' ? now : null });
    return toFile(row);
  }

  /**
   * Streams `body` to a temporary file, syncs it, and renames it into place. `exact`: the body must be exactly
   * that long; `max`: at most that long. On any failure the temporary file is removed and nothing is visible.
   */
  private async writeObject(
    fileId: string,
    body: Readable,
    limit: { exact: number } | { max: number },
    signal?: AbortSignal,
  ): Promise<number> {
    const max = 'exact' in limit ? limit.exact : limit.max;
    const tmp = join(this.tmp, `${fileId}.${randomBytes(6).toString('hex')}`);
    let bytes = 0;
    const counter = new Transform({
      transform(chunk: Buffer, _enc, done) {
        bytes += chunk.length;
        if (bytes > max) {
          done(
            new GatewayError('payload_too_large', `The body is larger than ${max} bytes.`, {
              details: { max_bytes: max },
            }),
          );
          return;
        }
        done(null, chunk);
      },
    });
    try {
      const sink = createWriteStream(tmp, { flags: 'wx' });
      await (signal ? pipeline(body, counter, sink, { signal }) : pipeline(body, counter, sink));
      if ('exact' in limit && bytes !== limit.exact) {
        throw new GatewayError(
          'invalid_input',
          `The body was ${bytes} bytes but size_bytes declared ${limit.exact}; nothing was stored.`,
          { details: { issues: [{ path: 'size_bytes', message: `expected exactly ${limit.exact} bytes` }] } },
        );
      }
      const fh = await open(tmp, 'r');
      try {
        await fh.sync();
      } finally {
        await fh.close();
      }
      await rename(tmp, join(this.objects, fileId));
      return bytes;
    } catch (e) {
      await rm(tmp, { force: true });
      throw e;
    }
  }

  /** Files on disk (tests and operators). */
  objectCount(): number {
    return readdirSync(this.objects).length;
  }
}

function toFile(r: Row): StoredFile {
  return {
    file_id: r.file_id,
    filename: r.filename,
    size_bytes: r.size_bytes,
    mime: r.mime,
    tags: JSON.parse(r.tags) as string[],
    note: r.note,
    status: r.status,
    created_at: r.created_at,
    source_url: r.source_url,
  };
}

/** A Content-Type worth keeping: printable, type/subtype, at most 100 chars (files/upload's own rule). */
export function usableType(contentType: string | undefined): string | null {
  if (!contentType || contentType.length > 100) return null;
  return /^[\w!#$&^.+-]+\/[\w!#$&^.+-]+(?:\s*;[\x20-\x7e]*)?$/.test(contentType) ? contentType : null;
}
