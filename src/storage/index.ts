import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { StateDb } from '../backend.js';
import type { Clock } from '../lib/clock.js';
import type { FileMetaStore } from '../ports/index.js';
import { FileLibrary } from './file-library.js';
import { GatewayLinks } from './gateway-links.js';
import { LocalObjectStore } from './objects-local.js';
import type { S3Location } from './objects-s3.js';
import { loadSigningSecret } from './signing.js';

// Opens the file library on the configured storage: local disk under the data dir (the embedded default), or
// an S3-compatible bucket that every replica shares. The AWS SDK is loaded only when S3 is configured.

export type StorageLocation = { kind: 'local' } | ({ kind: 's3' } & S3Location);

export interface FileStorageOptions {
  location: StorageLocation;
  /** Where the gateway's state lives: the generated signing secret is kept there. */
  state: StateDb;
  /** Local storage: the files live under <data dir>/files. */
  dataDir: string;
  meta: FileMetaStore;
  clock: Clock;
  log: Logger;
  /** Local storage: the base URL of the gateway's own file links. */
  publicUrl: () => string;
  /**
   * Local storage: TOLLGATE_SIGNING_SECRET; unset, one is generated once into the database (replicas on several
   * machines share no data dir, but must sign alike).
   */
  signingSecret?: string | undefined;
}

export interface FileStorage {
  library: FileLibrary;
  /** What the gateway's `/files/{id}` routes serve: only local storage has them (S3 links go to the bucket). */
  gatewayLinks: GatewayLinks | undefined;
  /** Resolves when the storage answers (GET /readyz): the bucket, or the files directory writable. */
  ready(): Promise<void>;
  close(): Promise<void>;
}

export async function openFileStorage(o: FileStorageOptions): Promise<FileStorage> {
  if (o.location.kind === 's3') {
    const { S3ObjectStore } = await import('./objects-s3.js');
    const objects = new S3ObjectStore(o.location, o.log);
    const library = new FileLibrary({
      meta: o.meta,
      objects,
      links: objects,
      clock: o.clock,
      directUploads: true,
      log: o.log,
    });
    return {
      library,
      gatewayLinks: undefined,
      ready: () => objects.ready(),
      close: () => objects.close(),
    };
  }
  const root = join(o.dataDir, 'files');
  const objects = new LocalObjectStore(root);
  const gatewayLinks = new GatewayLinks({
    meta: o.meta,
    objects,
    clock: o.clock,
    secret: await loadSigningSecret(
      o.state.stores,
      join(root, 'signing.key'),
      o.signingSecret,
      o.clock.now(),
    ),
    publicUrl: o.publicUrl,
  });
  const library = new FileLibrary({
    meta: o.meta,
    objects,
    links: gatewayLinks,
    clock: o.clock,
    directUploads: false,
  });
  return {
    library,
    gatewayLinks,
    ready: () => access(join(root, 'objects'), constants.W_OK),
    close: () => objects.close(),
  };
}
