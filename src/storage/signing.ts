import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

// Signed links for stored files: HMAC-SHA256 over (method, file id, expiry). The method is signed so that a
// download link can never be used to upload, and the expiry so that a leaked link stops working.

export type LinkMethod = 'GET' | 'PUT';

/**
 * The signing secret: TOLLGATE_SIGNING_SECRET when set, else one generated on first start and kept in the data
 * dir (mode 0600), so links stay valid across restarts and every process sharing the data dir signs alike.
 * The file is written whole under a temporary name and published with link(2), so a process starting at the
 * same moment never reads it half-written: whoever links first wins, the others read theirs.
 */
export function loadSigningSecret(path: string, configured?: string): Buffer {
  if (configured) return Buffer.from(configured, 'utf8');
  const existing = readSecret(path);
  if (existing) return existing;
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}`;
  writeFileSync(tmp, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
  try {
    linkSync(tmp, path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  } finally {
    rmSync(tmp, { force: true });
  }
  const secret = readSecret(path);
  if (!secret) throw new Error(`${path} vanished while it was being created`);
  return secret;
}

function readSecret(path: string): Buffer | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8').trim();
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
  if (!/^[0-9a-f]{64}$/.test(text)) {
    throw new Error(
      `the signing secret in ${path} is not 32 hex bytes; remove it or set TOLLGATE_SIGNING_SECRET`,
    );
  }
  return Buffer.from(text, 'hex');
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
