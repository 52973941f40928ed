import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll } from 'vitest';
import type { TestGateway } from './gateway.js';
import { type S3Server, startS3Server } from './s3.js';

// Runs a test suite against each storage the gateway offers: local disk (signed links served by the gateway)
// and S3 (presigned links to the bucket, test/helpers/s3.ts). `describe.each(STORAGE_MODES)` and, inside,
// `useStorage(mode)` before the gateway starts.

export type StorageMode = 'local' | 's3';
export const STORAGE_MODES: StorageMode[] = ['local', 's3'];

export interface StorageFixture {
  mode: StorageMode;
  /** Gateway env: nothing for local storage; for S3, the shared bucket under `prefix` (default: a fresh one). */
  env(prefix?: string): Record<string, string>;
  /** How every link to this file starts, on this gateway. */
  linkBase(t: TestGateway, fileId: string): string;
  /** The names of a link's signature and expiry query parameters. */
  params: { signature: string; expires: string };
  /** The S3 server (S3 mode only). */
  readonly s3: S3Server;
}

export function useStorage(mode: StorageMode): StorageFixture {
  let server: S3Server | undefined;
  if (mode === 's3') {
    beforeAll(async () => {
      server = await startS3Server();
    });
    afterAll(async () => {
      await server?.close();
    });
  }
  const s3 = (): S3Server => {
    if (!server) throw new Error('the S3 server runs only in s3 mode, after beforeAll');
    return server;
  };
  return {
    mode,
    env(prefix) {
      if (mode === 'local') return {};
      return s3().env(prefix ?? `gw-${randomBytes(4).toString('hex')}`);
    },
    linkBase(t, fileId) {
      const at = t.config.storage;
      if (at.kind === 'local') return `${t.url}/files/${fileId}?`;
      return `${at.endpoint}/${at.bucket}/${at.prefix}files/${fileId}?`;
    },
    params:
      mode === 'local'
        ? { signature: 'signature', expires: 'expires' }
        : { signature: 'X-Amz-Signature', expires: 'X-Amz-Expires' },
    get s3() {
      return s3();
    },
  };
}
