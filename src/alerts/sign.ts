import { createHmac, randomBytes } from 'node:crypto';

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
