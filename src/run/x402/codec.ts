import type { PaymentRequired, PaymentRequirements, SettleResponse } from '@x402/core/types';
import { z } from 'zod';

// The x402 v2 wire forms we read and write. A payment arrives as the PAYMENT-SIGNATURE header (base64 of JSON)
// or, over MCP, as `_meta["x402/payment"]`: an object, or a base64 string as some MCP clients send it. Anything
// that does not decode into the `exact` EIP-3009 shape is refused before any other work.

/** Larger than any honest payment (an ERC-6492 smart-wallet signature is a few KB); bounds parsing work. */
export const MAX_PAYMENT_BYTES = 16 * 1024;

const hex = (bytes: number) => z.string().regex(new RegExp(`^0x[0-9a-fA-F]{${bytes * 2}}$`));
export const uint = z.string().regex(/^\d{1,78}$/, 'a decimal integer string');

const requirementsSchema = z.object({
  scheme: z.string(),
  network: z.string(),
  asset: z.string(),
  amount: z.string(),
  payTo: z.string(),
  maxTimeoutSeconds: z.number(),
  extra: z.record(z.string(), z.unknown()),
});

const authorizationSchema = z.object({
  from: hex(20),
  to: hex(20),
  value: uint,
  validAfter: uint,
  validBefore: uint,
  nonce: hex(32),
});

export const paymentSchema = z.object({
  x402Version: z.number(),
  accepted: requirementsSchema,
  payload: z.object({
    signature: z.string().regex(/^0x(?:[0-9a-fA-F]{2})+$/),
    authorization: authorizationSchema,
  }),
  resource: z.unknown().optional(),
  extensions: z.record(z.string(), z.unknown()).optional(),
});

export type Authorization = z.output<typeof authorizationSchema>;

/** A decoded `exact` EVM payment: the wire object (passed verbatim to the facilitator) and its typed parts. */
export interface DecodedPayment {
  /** Exactly what the payer sent, for the facilitator (which re-checks everything itself). */
  wire: {
    x402Version: number;
    accepted: PaymentRequirements;
    payload: Record<string, unknown>;
    resource?: { url: string };
    extensions?: Record<string, unknown>;
  };
  x402Version: number;
  accepted: PaymentRequirements;
  authorization: Authorization;
  signature: `0x${string}`;
}

export type DecodeResult = { ok: true; payment: DecodedPayment } | { ok: false; message: string };

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
const NOT_BASE64 = { ok: false as const, message: 'the payment is not base64-encoded JSON' };

/** The JSON of a payment as it arrives: a header's base64, or MCP `_meta`'s object (or its base64 form). */
export function paymentJson(raw: unknown): { ok: true; json: unknown } | { ok: false; message: string } {
  if (typeof raw === 'string') {
    const s = raw.trim();
    if (s.length === 0 || s.length > MAX_PAYMENT_BYTES * 2 || !BASE64.test(s)) return NOT_BASE64;
    try {
      return { ok: true, json: JSON.parse(Buffer.from(s, 'base64').toString('utf8')) };
    } catch {
      return NOT_BASE64;
    }
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    return { ok: false, message: 'the payment must be an x402 PaymentPayload object or its base64 form' };
  }
  if (JSON.stringify(raw).length > MAX_PAYMENT_BYTES)
    return { ok: false, message: 'the payment is too large' };
  return { ok: true, json: raw };
}

/** Why a payment's JSON is not the scheme's payload, at its first problem. */
export function notThe(what: string, error: z.ZodError): { ok: false; message: string } {
  const first = error.issues[0];
  const where = first && first.path.length > 0 ? ` at ${first.path.join('.')}` : '';
  return {
    ok: false,
    message: `the payment is not an x402 v2 ${what} (${first?.message ?? 'invalid'}${where})`,
  };
}

/** Decodes a payment from a header value or an MCP `_meta` value (object or base64 string). */
export function decodePayment(raw: unknown): DecodeResult {
  const read = paymentJson(raw);
  if (!read.ok) return read;
  const json = read.json;
  const parsed = paymentSchema.safeParse(json);
  if (!parsed.success) return notThe('"exact" EVM payment', parsed.error);
  const p = parsed.data;
  const accepted = { ...p.accepted, network: p.accepted.network as PaymentRequirements['network'] };
  return {
    ok: true,
    payment: {
      wire: json as DecodedPayment['wire'],
      x402Version: p.x402Version,
      accepted,
      authorization: p.payload.authorization,
      signature: p.payload.signature as `0x${string}`,
    },
  };
}

// The two header encoders are @x402/core/http's `encodePaymentRequiredHeader` / `encodePaymentResponseHeader`,
// written out (standard base64 of the UTF-8 JSON; the receipt without `extensionResponses`) so that the doors,
// which import them, do not load the x402 HTTP module on gateways without x402; test/unit/x402-codec.test.ts
// checks they give the library's bytes.

/** PAYMENT-REQUIRED header value: standard base64 of the JSON (the 402 body mirrors the same object). */
export function encodeChallenge(pr: PaymentRequired): string {
  return Buffer.from(JSON.stringify(pr), 'utf8').toString('base64');
}

/** PAYMENT-RESPONSE header value (buyer-facing: the facilitator's extension responses are left out). */
export function encodeReceipt(receipt: SettleResponse): string {
  const { extensionResponses: _omitted, ...buyerFacing } = receipt as SettleResponse & {
    extensionResponses?: unknown;
  };
  return Buffer.from(JSON.stringify(buyerFacing), 'utf8').toString('base64');
}
