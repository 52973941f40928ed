import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { HeadObjectCommand, ListObjectsV2Command, S3Client, S3ServiceException } from '@aws-sdk/client-s3';

// An S3-compatible server on 127.0.0.1 (test/helpers/s3-server.mjs, in a child process) and the official AWS
// SDK pointed at it. Gateways share its one bucket under their own key prefixes, or the same prefix to act as
// replicas of one deployment.

/** s3rver's built-in account. */
const ACCESS_KEY = 'S3RVER';
const SECRET_KEY = 'S3RVER';

export interface S3Server {
  endpoint: string;
  bucket: string;
  /** The official client, for looking at the bucket from the outside. */
  client: S3Client;
  /** Gateway env for storage under `prefix` of the bucket. */
  env(prefix: string): Record<string, string>;
  /** The object's size, or undefined when the bucket has no such object. */
  objectSize(key: string): Promise<number | undefined>;
  /** The keys under `prefix`. */
  keys(prefix: string): Promise<string[]>;
  close(): Promise<void>;
}

/** `port`: listen there (a store restarted where its gateways expect it); default any free one. */
export async function startS3Server(bucket = 'tollgate-test', port?: number): Promise<S3Server> {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-s3-'));
  const child: ChildProcess = spawn(
    process.execPath,
    [join(import.meta.dirname, 's3-server.mjs'), dir, bucket, ...(port === undefined ? [] : [String(port)])],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const bound = await new Promise<number>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
    lines.once('line', (line) => resolve((JSON.parse(line) as { port: number }).port));
    child.once('exit', (code) => reject(new Error(`the S3 server exited (${code}) before listening`)));
  });
  const endpoint = `http://127.0.0.1:${bound}`;
  const client = new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY },
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  // s3rver drops the trailing slash of a bucket-level path (`/bucket/?list-type=2`) before checking the
  // signature, which the SDK computed with it: sign bucket-level requests without it (the same resource).
  client.middlewareStack.add(
    (next) => async (args) => {
      const req = args.request as { path?: string };
      if (req.path === `/${bucket}/`) req.path = `/${bucket}`;
      return next(args);
    },
    { step: 'build', name: 's3rverBucketPath' },
  );
  return {
    endpoint,
    bucket,
    client,
    env: (prefix) => ({
      TOLLGATE_STORAGE_URL: `s3://${bucket}/${prefix}?endpoint=${encodeURIComponent(endpoint)}&region=us-east-1&force_path_style=true`,
      AWS_ACCESS_KEY_ID: ACCESS_KEY,
      AWS_SECRET_ACCESS_KEY: SECRET_KEY,
    }),
    async objectSize(key) {
      try {
        const r = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
        return r.ContentLength;
      } catch (e) {
        if (e instanceof S3ServiceException && e.$metadata.httpStatusCode === 404) return undefined;
        throw e;
      }
    },
    async keys(prefix) {
      const r = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix }));
      return (r.Contents ?? []).map((o) => o.Key as string);
    },
    async close() {
      client.destroy();
      const exited = new Promise((r) => child.once('exit', r));
      child.stdin?.end();
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
