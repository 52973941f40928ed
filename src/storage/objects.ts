import { Transform } from 'node:stream';
import { GatewayError } from '../errors.js';
import type { StoredFile } from '../ports/index.js';

// Where the file library keeps the bytes: local disk (objects-local.ts, the embedded default) or an
// S3-compatible bucket (objects-s3.ts, for replicas). Objects are named by file id and never change once
// written; the metadata (status, owner, type) lives in the FileMetaStore.

export const FILE_ID = /^file_[0-9a-z]{25}$/;

export interface ObjectInfo {
  size: number;
  /** The Content-Type the object was stored with, when the store keeps one. */
  contentType: string | undefined;
}

/** How long a body may be: exactly the declared size (a files/upload PUT), or at most a limit. */
export type BodyLimit = { exact: number } | { max: number };

export interface PutOptions {
  limit: BodyLimit;
  /** The length the source declared, when it did (already checked against the limit). */
  length?: number | undefined;
  contentType?: string | null | undefined;
  signal?: AbortSignal | undefined;
}

export interface ObjectStore {
  /**
   * Streams `body` into the object `id` and returns its size. Nothing is visible under `id` unless the whole
   * body arrived within the limit; a body over it is payload_too_large, one short of `exact` invalid_input.
   * The local store never replaces an object that exists (ObjectExistsError: two uploads racing to one file);
   * S3 would, so only fresh ids are put there (files/upload_from_url).
   */
  put(id: string, body: AsyncIterable<Uint8Array>, opts: PutOptions): Promise<number>;
  /** The object's size and type, or undefined when there is none. */
  head(id: string): Promise<ObjectInfo | undefined>;
  delete(id: string): Promise<void>;
  close(): Promise<void>;
}

/**
 * Issues the links of a file: signed gateway links (local storage) or presigned URLs of the object store
 * (S3). A GET link serves the bytes with the file's type and name; a PUT link takes exactly size_bytes.
 */
export interface LinkIssuer {
  sign(file: StoredFile, method: 'GET' | 'PUT', signedAtMs: number, expiresInSec: number): Promise<string>;
}

/** The object was already written (by another upload, or another process sharing the store). */
export class ObjectExistsError extends GatewayError {
  constructor() {
    super('forbidden', 'This file was already uploaded; stored files cannot be replaced.');
  }
}

/**
 * Counts the bytes going through and fails the stream as soon as they pass the limit, so an oversized
 * body is cut off instead of read to the end. `finish()` checks an exact limit once the body ended.
 */
export function byteLimiter(limit: BodyLimit): {
  counter: Transform;
  bytes: () => number;
  finish: () => void;
} {
  const max = 'exact' in limit ? limit.exact : limit.max;
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
  const finish = () => {
    if ('exact' in limit && bytes !== limit.exact) {
      throw new GatewayError(
        'invalid_input',
        `The body was ${bytes} bytes but size_bytes declared ${limit.exact}; nothing was stored.`,
        { details: { issues: [{ path: 'size_bytes', message: `expected exactly ${limit.exact} bytes` }] } },
      );
    }
  };
  return { counter, bytes: () => bytes, finish };
}
