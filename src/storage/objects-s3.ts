import { pipeline, Readable } from 'node:stream';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { Logger } from 'pino';
import { GatewayError } from '../errors.js';
import { inlineDisposition } from '../lib/content-disposition.js';
import type { StoredFile } from '../ports/index.js';
import {
  byteLimiter,
  FILE_ID,
  type LinkIssuer,
  type ObjectInfo,
  type ObjectStore,
  type PutOptions,
} from './objects.js';

// Objects in an S3-compatible bucket, through the official AWS SDK: `<prefix>files/<file_id>`. Callers upload
// and download with presigned URLs (the bytes never pass through a replica); the gateway itself writes only
// files/upload_from_url bodies, streamed: one PutObject when the source declared its length, else a multipart
// upload of bounded parts. Either way memory stays flat however large the file.

export interface S3Location {
  bucket: string;
  /** Key prefix: '' or ending in '/'. */
  prefix: string;
  /** Custom endpoint (MinIO, R2, a test server); undefined: AWS's own for the region. */
  endpoint: string | undefined;
  region: string;
  forcePathStyle: boolean;
  credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string | undefined };
}

/** Multipart parts for bodies of unknown length: at most QUEUE × PART bytes are buffered at once. */
const PART_BYTES = 5 * 1024 * 1024;
const PART_QUEUE = 2;
/** While the bucket fails, how often it is asked again (a HEAD of the readiness probe). */
const PROBE_MS = 1_000;

export class S3ObjectStore implements ObjectStore, LinkIssuer {
  private readonly client: S3Client;
  /** Set while the bucket fails (since its last failure, until a probe answers): no link is issued. */
  private probing: NodeJS.Timeout | undefined;

  constructor(
    private readonly at: S3Location,
    private readonly log: Logger,
  ) {
    this.client = new S3Client({
      region: at.region,
      endpoint: at.endpoint,
      forcePathStyle: at.forcePathStyle,
      credentials: at.credentials,
      // Checksums only where S3 requires them: the newer default adds CRC headers (and, on streamed bodies,
      // aws-chunked trailers) that several S3-compatible servers reject, and that would be signed into
      // presigned PUT URLs as the checksum of an empty body.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      // Streamed bodies are never retried (the SDK cannot rewind them); the rest up to three times.
      maxAttempts: 3,
      logger: {
        debug: () => {},
        info: () => {},
        warn: (...args: unknown[]) => log.warn({ sdk: args }, 'S3 client warning'),
        error: (...args: unknown[]) => log.error({ sdk: args }, 'S3 client error'),
      },
      requestHandler: { connectionTimeout: 5_000, requestTimeout: 60_000 },
    });
  }

  private key(id: string): string {
    if (!FILE_ID.test(id)) throw new GatewayError('resource_not_found', 'No such file.');
    return `${this.at.prefix}files/${id}`;
  }

  async put(id: string, body: AsyncIterable<Uint8Array>, opts: PutOptions): Promise<number> {
    const Key = this.key(id);
    const length = 'exact' in opts.limit ? opts.limit.exact : opts.length;
    if ('max' in opts.limit && length !== undefined && length > opts.limit.max) {
      throw new GatewayError('payload_too_large', `The body is larger than ${opts.limit.max} bytes.`, {
        details: { max_bytes: opts.limit.max },
      });
    }
    const limiter = byteLimiter(length === undefined ? opts.limit : { exact: length });
    // The SDK does not watch its body for errors: a failing source (the download broke, the limit tripped)
    // must abort the request, or S3 would wait for the rest of the declared length.
    const ac = new AbortController();
    const onAbort = () => ac.abort(opts.signal?.reason);
    if (opts.signal?.aborted) onAbort();
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    let failure: unknown;
    const source = body instanceof Readable ? body : Readable.from(body);
    const stream = pipeline(source, limiter.counter, (err) => {
      if (!err) return;
      failure ??= err;
      ac.abort();
    });
    const params = { Bucket: this.at.bucket, Key, Body: stream, ContentType: opts.contentType ?? undefined };
    try {
      if (length !== undefined) {
        await this.client.send(new PutObjectCommand({ ...params, ContentLength: length }), {
          abortSignal: ac.signal,
        });
      } else {
        const upload = new Upload({
          client: this.client,
          params,
          partSize: PART_BYTES,
          queueSize: PART_QUEUE,
          leavePartsOnError: false,
          abortController: ac,
        });
        await upload.done();
      }
    } catch (e) {
      stream.destroy();
      // Our own verdict (too large, the download's error, the caller's abort) over the SDK's echo of it.
      if (failure !== undefined) throw failure;
      if (opts.signal?.aborted) throw opts.signal.reason;
      throw this.failed(e, 'put', Key);
    } finally {
      opts.signal?.removeEventListener('abort', onAbort);
    }
    limiter.finish();
    return limiter.bytes();
  }

  /**
   * Resolves when the bucket answers these credentials (GET /readyz), using only the object rights docs/operator.md
   * asks for: a HEAD of a probe object under the prefix, written once when missing (S3 answers 403, not 404, for a
   * missing key to a caller without s3:ListBucket). A missing bucket, refused credentials, a 5xx or no answer
   * throws. The probe stays, so the SDK's error log sees no failed request while all is well.
   */
  async ready(): Promise<void> {
    const probe = { Bucket: this.at.bucket, Key: `${this.at.prefix}files/.readyz` };
    try {
      await this.client.send(new HeadObjectCommand(probe));
    } catch (e) {
      const status = statusOf(e);
      if (status !== 404 && status !== 403) throw e;
      await this.client.send(new PutObjectCommand({ ...probe, Body: 'ready\n', ContentType: 'text/plain' }));
    }
  }

  async head(id: string): Promise<ObjectInfo | undefined> {
    const Key = this.key(id);
    try {
      const r = await this.client.send(new HeadObjectCommand({ Bucket: this.at.bucket, Key }));
      return { size: r.ContentLength ?? 0, contentType: r.ContentType };
    } catch (e) {
      if (statusOf(e) === 404) return undefined;
      throw this.failed(e, 'head', Key);
    }
  }

  async delete(id: string): Promise<void> {
    const Key = this.key(id);
    try {
      await this.client.send(new DeleteObjectCommand({ Bucket: this.at.bucket, Key }));
    } catch (e) {
      throw this.failed(e, 'delete', Key);
    }
  }

  /**
   * Presigned URLs. PUT has Content-Length signed in, so S3 refuses a body of any other size (403). GET serves
   * the file's declared type and our Content-Disposition whatever the PUT said; without a declared type, the
   * type the PUT sent (as the local store keeps it).
   */
  async sign(
    file: StoredFile,
    method: 'GET' | 'PUT',
    signedAtMs: number,
    expiresInSec: number,
  ): Promise<string> {
    // A link into a store known not to answer would be paid for and then fail: refused (503, uncharged).
    // Believed up, a link costs no round trip.
    if (this.probing) throw unavailable();
    const Bucket = this.at.bucket;
    const Key = this.key(file.file_id);
    const cmd =
      method === 'PUT'
        ? new PutObjectCommand({ Bucket, Key, ContentLength: file.size_bytes })
        : new GetObjectCommand({
            Bucket,
            Key,
            ResponseContentType: file.mime ?? undefined,
            ResponseContentDisposition: inlineDisposition(file.filename),
          });
    return getSignedUrl(this.client, cmd, { expiresIn: expiresInSec, signingDate: new Date(signedAtMs) });
  }

  close(): Promise<void> {
    if (this.probing) clearInterval(this.probing);
    this.client.destroy();
    return Promise.resolve();
  }

  /**
   * The bucket failing is ours to fix (credentials, bucket, endpoint) or transient: 503, logged loudly, and no
   * link is issued until a probe finds it answering again.
   */
  private failed(e: unknown, op: string, key: string): GatewayError {
    this.log.error(
      { err: e, op, key, bucket: this.at.bucket, status: statusOf(e) },
      'object storage request failed',
    );
    if (!this.probing) {
      this.probing = setInterval(() => {
        this.ready().then(
          () => {
            clearInterval(this.probing);
            this.probing = undefined;
            this.log.warn({ bucket: this.at.bucket }, 'object storage answers again');
          },
          () => undefined,
        );
      }, PROBE_MS);
      this.probing.unref();
    }
    return unavailable(e);
  }
}

function unavailable(cause?: unknown): GatewayError {
  return new GatewayError(
    'upstream_unavailable',
    'The file storage is unavailable right now; nothing was charged. Try again shortly.',
    { cause },
  );
}

function statusOf(e: unknown): number | undefined {
  return e instanceof S3ServiceException ? e.$metadata.httpStatusCode : undefined;
}
