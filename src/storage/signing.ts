import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { StoreDb } from '../db/schema.js';
import { getOrCreate } from '../db/secrets.js';

// Signed links for stored files: HMAC-SHA256 over (method, file id, expiry). The method is signed so that a
// download link can never be used to upload, and the expiry so that a leaked link stops working.

export type LinkMethod = 'GET' | 'PUT';

const NAME = 'file_link_signing';

/**
 * The signing secret: TOLLGATE_SIGNING_SECRET when set, else one generated once into the database (table
 * `shared_secrets`), so links stay valid across restarts and a link signed by one replica verifies on every
 * other. A gateway that kept it in <data dir>/files/signing.key before (SQLite) stores that one, so the links it
 * gave out stay good.
 */
export async function loadSigningSecret(
  db: StoreDb,
  legacyPath: string,
  configured: string | undefined,
  now: number,
): Promise<Buffer> {
  if (configured) return Buffer.from(configured, 'utf8');
  const hex = await getOrCreate(
    db,
    'shared_secrets',
    NAME,
    () => readLegacy(legacyPath) ?? randomBytes(32).toString('hex'),
    now,
  );
  if (!/^[0-9a-f]{64}$/.test(hex)) {
    throw new Error(`the signing secret in the database (shared_secrets.${NAME}) is not 32 hex bytes`);
  }
  return Buffer.from(hex, 'hex');
}

function readLegacy(path: string): string | undefined {
  try {
    const text = readFileSync(path, 'utf8').trim();
    return /^[0-9a-f]{64}$/.test(text) ? text : undefined;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

export class LinkSigner {
  constructor(private readonly secret: Buffer) {
    if (secret.length < 16) throw new Error('the signing secret must be at least 16 bytes');
  }

  sign(method: LinkMethod, fileId: string, expiresSec: number): string {
    return createHmac('sha256', this.secret)
      .update(`${method}\n${fileId}\n${expiresSec}`)
      .digest('base64url');
  }

  /** 'ok', or why the link is refused. The signature is compared in constant time. */
  verify(
    method: LinkMethod,
    fileId: string,
    expires: string | undefined,
    signature: string | undefined,
    nowMs: number,
  ): 'ok' | 'missing' | 'bad_signature' | 'expired' {
    if (!expires || !signature) return 'missing';
    if (!/^\d{1,12}$/.test(expires)) return 'bad_signature';
    const expected = Buffer.from(this.sign(method, fileId, Number(expires)));
    const given = Buffer.from(signature);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'bad_signature';
    // Checked after the signature, so that an expired answer also proves the link was genuine.
    if (Number(expires) * 1000 <= nowMs) return 'expired';
    return 'ok';
  }
}
