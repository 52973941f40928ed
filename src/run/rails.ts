import type { PaymentRequired, SettleResponse } from '@x402/core/types';
import type { Action } from '../../catalog/index.js';
import type { CallPayment, Failed, Outcome, RunDeps } from './execute.js';
import { paymentRequired, type Refused } from './refusals.js';

// The payment rails: how a caller without an account pays for one call. x402 (`exact`, and sessions beside it:
// ./x402/rail.ts) and the Machine Payments Protocol (./mpp) are each a PaymentRail, built only when configured
// (src/gateway/run.ts loads their modules on demand). execute (./execute.ts) is the one entry: for an anonymous
// caller of a paid action it hands what the caller presented to the rail that reads it, which answers with a
// RailPayment (driven by execute like any payment: authorize → hold → run → collect, then finish) or with the
// call's answer itself (a refusal, a replay). With nothing presented, every rail adds its way to pay to the one
// 402 (Rails.refusal). Money still moves only through the lifecycle.

export type Transport = 'http' | 'mcp';

/** What a rail adds to the door's response: HTTP headers, MCP `_meta`, and x402's challenge and receipt. */
export interface PaymentParts {
  /** x402 challenge: HTTP 402 with PAYMENT-REQUIRED (the body mirrors it); MCP an isError result carrying it. */
  paymentRequired?: PaymentRequired | undefined;
  /** x402 settlement receipt: HTTP PAYMENT-RESPONSE; MCP `_meta["x402/payment-response"]`. */
  paymentResponse?: SettleResponse | undefined;
  headers?: Record<string, string | string[]>;
  meta?: Record<string, unknown>;
}

/** One anonymous paid call as the rails see it. */
export interface RailCall {
  action: Action;
  /** The request body as sent: a payment pays for one action and body (their fingerprint). */
  body: unknown;
  transport: Transport;
  /** x402: the PAYMENT-SIGNATURE header value, or MCP `_meta["x402/payment"]` (an object or base64). */
  payment: unknown;
  /** MPP: `Authorization: Payment …`, or MCP `_meta["org.paymentauth/credential"]`. */
  credential: unknown;
}

/** A rail's way to pay an action, as the one 402 names it. */
export interface RailOffer {
  /** How, in words, after "Pay with ": `x402: sign the challenge …`. */
  words: string;
  /** Its entry in the refusal's `details.accepts`. */
  accepts: Record<string, unknown>;
  /** Its challenge (x402: PAYMENT-REQUIRED; MPP: WWW-Authenticate: Payment or `_meta`). */
  parts: PaymentParts;
}

/** One presented payment paying for one call: execute authorizes, holds, runs and collects, then finishes it. */
export interface RailPayment extends CallPayment {
  /** The payer, an accountless account (`x402_…`): execute holds and captures on it. */
  principal: { kind: 'x402'; accountId: string; payer: string };
  /** After execute: settles the payment record from how far the call got, and adds the rail's parts. */
  finish(outcome: Outcome): Promise<Outcome>;
}

export type RailTerms = Record<string, unknown> & { protocol: string };

export interface PaymentRail {
  /** What it is called where the gateway lists its rails (server card): `x402`, `x402-session`, `mpp`. */
  readonly names: readonly string[];
  /** Whether the call presented this rail's kind of payment. */
  presented(call: RailCall): boolean;
  /** Its way to pay `action` (undefined when it cannot); `error` is the x402 challenge's reason. */
  offer(action: Action, transport: Transport, error: string): RailOffer | undefined;
  /** Opens the presented payment: a RailPayment, or the call's answer itself (a refusal, a replay). */
  open(run: RunDeps, call: RailCall): Promise<RailPayment | Outcome>;
  /** The terms declared for a paid action (descriptors, /openapi.json, the MCP tool list). */
  terms(action: Action): RailTerms[];
  /** What an MCP tool's `_meta` advertises beside the terms (x402: its requirements). */
  toolMeta?(action: Action): Record<string, unknown> | undefined;
  /** Its OpenAPI security scheme, named. */
  readonly security?: { name: string; scheme: Record<string, unknown> };
  close(): Promise<void>;
}

/** The gateway's rails, in the order they are offered. */
export class Rails {
  constructor(readonly list: readonly PaymentRail[]) {}

  /** The rail that reads what the call presented, if any. */
  of(call: RailCall): PaymentRail | undefined {
    return this.list.find((r) => r.presented(call));
  }

  /**
   * The one 402 of a paid action: every rail's way to pay, in words and as its challenge, and the API key;
   * `refused` says why a presented payment did not pay.
   */
  refusal(action: Action, transport: Transport, refused?: Refused): Failed {
    const offers = this.list.flatMap(
      (r) => r.offer(action, transport, refused?.reason ?? 'Payment required') ?? [],
    );
    const parts = offers.reduce<PaymentParts | undefined>((a, o) => mergeParts(a, o.parts), undefined);
    return { ok: false, error: paymentRequired(action, offers, refused), parts };
  }

  terms(action: Action): RailTerms[] {
    return this.list.flatMap((r) => r.terms(action));
  }

  has(name: string): boolean {
    return this.list.some((r) => r.names.includes(name));
  }

  async close(): Promise<void> {
    for (const r of this.list) await r.close();
  }
}

export const NO_RAILS = new Rails([]);

/**
 * How a paid action may be paid, for every machine-readable description of it (the descriptor, the catalog,
 * /openapi.json, the MCP tool list). docs/spec.md §5: "Every paid operation declares x402 as its payment protocol
 * and a fixed price mode". Each rail's terms are those of its challenge, so what is advertised is exactly what a
 * payer will be asked for; without a rail only the API key is declared (advertising a protocol the gateway would
 * refuse helps nobody).
 */
export interface PaymentTerms {
  price_mode: 'fixed';
  price_cents: number;
  currency: 'USD';
  /** Charged only on success; the API key pays from the account balance, the rails need no account. */
  protocols: RailTerms[];
}

const API_KEY: RailTerms = {
  protocol: 'api_key',
  price_mode: 'fixed',
  http_header: 'Authorization',
  format: 'Bearer tg_sk_…',
};

/** The payment terms of a paid action; undefined for free ones. */
export function paymentTerms(rails: Rails | undefined, action: Action): PaymentTerms | undefined {
  if (action.access !== 'paid') return undefined;
  const protocols = [...(rails?.terms(action) ?? []), API_KEY];
  return { price_mode: 'fixed', price_cents: action.priceCents, currency: 'USD', protocols };
}

/** The outcome with more parts (headers append, meta merges, x402's own fields replace). */
export function withParts<O extends Outcome>(o: O, parts: PaymentParts | undefined): O {
  return parts ? { ...o, parts: mergeParts(o.parts, parts) } : o;
}

function mergeParts(a: PaymentParts | undefined, b: PaymentParts | undefined): PaymentParts | undefined {
  if (!a) return b;
  if (!b) return a;
  const headers: Record<string, string | string[]> = { ...a.headers };
  for (const [k, v] of Object.entries(b.headers ?? {})) {
    const prev = headers[k];
    headers[k] = prev === undefined ? v : [...[prev].flat(), ...[v].flat()];
  }
  return {
    paymentRequired: b.paymentRequired ?? a.paymentRequired,
    paymentResponse: b.paymentResponse ?? a.paymentResponse,
    headers,
    meta: { ...a.meta, ...b.meta },
  };
}

/** Whether the caller sent something in a payment field (a header or `_meta` entry). */
export function present(v: unknown): boolean {
  return v !== undefined && v !== null && v !== '';
}

/** MCP `_meta` keys of the MPP transport (draft-payment-transport-mcp; mppx `Mcp`). */
export const MPP_CREDENTIAL_META = 'org.paymentauth/credential';
export const MPP_CHALLENGE_META = 'org.paymentauth/payment-required';

/** The credential of an `Authorization` header when its scheme is `Payment` (MPP), else undefined. */
export function mppCredentialOf(authorization: string | undefined): string | undefined {
  return authorization !== undefined && /^Payment\s+\S/i.test(authorization) ? authorization : undefined;
}
