import type { Readable } from 'node:stream';
import { GatewayError } from '../errors.js';
import type { Clock } from '../lib/clock.js';
import type { FileMetaStore, StoredFile } from '../ports/index.js';
import { FILE_ID, type LinkIssuer } from './objects.js';
import type { LocalObjectStore } from './objects-local.js';
import { type LinkMethod, LinkSigner } from './signing.js';

// Local storage's links: `{public URL}/files/{file_id}?expires=…&signature=…`, signed by the gateway and served
// by it (src/http/file-routes.ts). The link is the capability: no owner check behind it.

export interface GatewayLinksOptions {
  meta: FileMetaStore;
  objects: LocalObjectStore;
  clock: Clock;
  secret: Buffer;
  /** The base URL callers see; read at each call (tests learn it only after binding). */
  publicUrl: () => string;
}

export class GatewayLinks implements LinkIssuer {
  private readonly signer: LinkSigner;
  /** Uploads running in this process; link(2) in the object store settles races between processes. */
  private readonly writing = new Set<string>();

  constructor(private readonly opts: GatewayLinksOptions) {
    this.signer = new LinkSigner(opts.secret);
  }

  sign(file: StoredFile, method: LinkMethod, signedAtMs: number, expiresInSec: number): Promise<string> {
    const expires = Math.floor(signedAtMs / 1000) + expiresInSec;
    const sig = this.signer.sign(method, file.file_id, expires);
    const base = this.opts.publicUrl().replace(/\/+$/, '');
    return Promise.resolve(`${base}/files/${file.file_id}?expires=${expires}&signature=${sig}`);
  }

  /** The file a signed link grants `method` on, or the refusal. */
  async authorize(
    fileId: string,
    method: LinkMethod,
    expires?: string,
    signature?: string,
  ): Promise<StoredFile> {
    // Signature first: an unsigned request learns nothing, not even whether the id exists.
    const verdict = FILE_ID.test(fileId)
      ? this.signer.verify(method, fileId, expires, signature, this.opts.clock.now())
      : 'bad_signature';
    if (verdict === 'missing' || verdict === 'bad_signature') {
      throw new GatewayError('forbidden', 'This file link is not valid (missing or wrong signature).');
    }
    if (verdict === 'expired') {
      throw new GatewayError('forbidden', 'This file link has expired; files/list returns fresh links.');
    }
    const file = await this.opts.meta.get(fileId);
    if (!file) throw new GatewayError('resource_not_found', 'No such file.');
    return file;
  }

  objectPath(fileId: string): string {
    return this.opts.objects.path(fileId);
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
      await this.opts.objects.put(file.file_id, body, { limit: { exact: file.size_bytes } });
      await this.opts.meta.markStored(file.file_id, {
        size_bytes: file.size_bytes,
        mime: file.mime ?? usableType(contentType),
        stored_at: this.opts.clock.now(),
      });
    } finally {
      this.writing.delete(file.file_id);
    }
  }
}

/** A Content-Type worth keeping: printable, type/subtype, at most 100 chars (files/upload's own rule). */
export function usableType(contentType: string | undefined): string | null {
  if (!contentType || contentType.length > 100) return null;
  return /^[\w!#$&^.+-]+\/[\w!#$&^.+-]+(?:\s*;[\x20-\x7e]*)?$/.test(contentType) ? contentType : null;
}
