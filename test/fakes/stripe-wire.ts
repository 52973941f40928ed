import { createHash, createHmac, randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

// Stripe's wire format, for the fake: form-encoded bodies with bracketed keys (`line_items[0][price_data][currency]`),
// JSON answers with `object` fields and prefixed ids, error objects, and signed webhook payloads.

export type Json = Record<string, unknown>;

/** Parses Stripe's bracketed form encoding into nested objects and arrays (`a[0][b]=1` → { a: [{ b: '1' }] }). */
export function parseStripeForm(body: string): Json {
  const out: Json = {};
  for (const [rawKey, value] of new URLSearchParams(body)) {
    const parts = rawKey.replace(/\]/g, '').split('[');
    let node: Record<string, unknown> | unknown[] = out;
    for (let i = 0; i < parts.length; i++) {
      const key = parts[i] as string;
      const last = i === parts.length - 1;
      const nextIsIndex = !last && /^\d*$/.test(parts[i + 1] as string);
      const slot = Array.isArray(node) ? (key === '' ? node.length : Number(key)) : key;
      const container = node as Record<string | number, unknown>;
      if (last) {
        container[slot] = value;
      } else {
        container[slot] ??= nextIsIndex ? [] : {};
        node = container[slot] as Record<string, unknown> | unknown[];
      }
    }
  }
  return out;
}

export function stripeId(prefix: string): string {
  return `${prefix}_${randomBytes(12).toString('base64url').replace(/[-_]/g, 'x')}`;
}

/** The same card number always has the same fingerprint (per account of the processor), as at Stripe. */
export function cardFingerprint(number: string): string {
  return createHash('sha256').update(`fake-stripe:${number}`).digest('base64url').slice(0, 16);
}

export class StripeApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: { type: string; code?: string; message: string; param?: string; [k: string]: unknown },
  ) {
    super(body.message);
  }
}

export const missing = (what: string, id: string, param = 'id') =>
  new StripeApiError(404, {
    type: 'invalid_request_error',
    code: 'resource_missing',
    message: `No such ${what}: '${id}'`,
    param,
    doc_url: 'https://stripe.com/docs/error-codes/resource-missing',
  });

export const invalid = (param: string, message: string, code = 'parameter_invalid') =>
  new StripeApiError(400, { type: 'invalid_request_error', code, message, param });

export async function readBody(req: IncomingMessage): Promise<string> {
  let body = '';
  for await (const chunk of req) body += chunk;
  return body;
}

export function send(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, {
    'content-type': 'application/json',
    'request-id': stripeId('req'),
    ...headers,
  });
  res.end(JSON.stringify(body));
}

/** `Stripe-Signature: t=<unix seconds>,v1=<HMAC-SHA256 of "t.payload" with the endpoint secret>`. */
export function signPayload(payload: string, secret: string, timestampSeconds: number): string {
  const v1 = createHmac('sha256', secret).update(`${timestampSeconds}.${payload}`).digest('hex');
  return `t=${timestampSeconds},v1=${v1}`;
}

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Stripe's test cards: what each does. */
export const TEST_CARDS = {
  '4242424242424242': { brand: 'visa', behaviour: 'succeeds' },
  '5555555555554444': { brand: 'mastercard', behaviour: 'succeeds' },
  '4000056655665556': { brand: 'visa', behaviour: 'succeeds' },
  '5200828282828210': { brand: 'mastercard', behaviour: 'succeeds' },
  '5105105105105100': { brand: 'mastercard', behaviour: 'succeeds' },
  '378282246310005': { brand: 'amex', behaviour: 'succeeds' },
  '6011111111111117': { brand: 'discover', behaviour: 'succeeds' },
  '3566002020360505': { brand: 'jcb', behaviour: 'succeeds' },
  /** Attaching it succeeds; every later charge is declined. */
  '4000000000000341': { brand: 'visa', behaviour: 'charges_fail' },
  /** Declined at once: insufficient funds. */
  '4000000000009995': { brand: 'visa', behaviour: 'insufficient_funds' },
} as const;
export type TestCard = keyof typeof TEST_CARDS;
