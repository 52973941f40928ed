import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

// How a receiver knows a delivery is ours, as Stripe signs its webhooks: `Tollgate-Signature: t=<unix seconds>,
// v1=<hex HMAC-SHA256 of "<t>.<raw body>" with the endpoint's signing secret>`. The timestamp is inside the MAC,
// so a receiver that refuses old timestamps (5 minutes is Stripe's tolerance) also refuses replays; each attempt
// is signed anew, the body (and its event id) stays the same. docs/operator.md "Alerts" has a receiver's check.

export const SIGNATURE_HEADER = 'Tollgate-Signature';
export const EVENT_ID_HEADER = 'Tollgate-Event-Id';
/** A signing secret: shown once to the account holder, stored to sign with (as Stripe's endpoint secrets are). */
export const SECRET_PREFIX = 'tgwhsec_';

export function newSigningSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString('base64url')}`;
}

export function signatureHeader(secret: string, body: string, timestampSeconds: number): string {
  const v1 = createHmac('sha256', secret).update(`${timestampSeconds}.${body}`).digest('hex');
  return `t=${timestampSeconds},v1=${v1}`;
}

/**
 * A receiver's check (the one docs/operator.md shows): the header parses, one v1 matches in constant time, and
 * the timestamp is within `toleranceSeconds` of now.
 */
export function verifySignature(
  secret: string,
  body: string,
  header: string,
  nowSeconds: number,
  toleranceSeconds = 300,
): boolean {
  const parts = header.split(',').map((p) => p.trim().split('='));
  const t = Number(parts.find(([k]) => k === 't')?.[1]);
  if (!Number.isInteger(t) || Math.abs(nowSeconds - t) > toleranceSeconds) return false;
  const expected = Buffer.from(signatureHeader(secret, body, t).split('v1=')[1] as string, 'hex');
  return parts.some(([k, v]) => {
    if (k !== 'v1' || !v || !/^[0-9a-f]{64}$/.test(v)) return false;
    return timingSafeEqual(Buffer.from(v, 'hex'), expected);
  });
}
