import type { PaymentRequirements } from '@x402/core/types';
import type { Action } from '../../catalog/index.js';
import { GatewayError } from '../errors.js';
import { centsPhrase } from '../lib/money.js';
import type { ExecuteOptions, RunDeps } from './execute.js';
import type { CallResult, Quote, X402Deps } from './x402/gate.js';

// The optional payment rails beside x402 `exact`, as the doors' one entry (./x402/call.ts) sees them: the Machine
// Payments Protocol (./mpp) and x402 sessions (./sessions). Each is built only when configured (main.ts loads its
// module on demand) and hangs off RunDeps, so the doors need no new dependency: they pass the credential they
// found and apply the headers / `_meta` a rail returns (RailParts). Each rail pays for one call through execute's
// CallPayment hook (authorize → hold → run → collect), so money still moves only through the lifecycle.

/** What a rail adds to a door's response: HTTP headers, and the MCP result's `_meta` entries. */
export interface RailParts {
  headers?: Record<string, string | string[]>;
  meta?: Record<string, unknown>;
}

export type RailTransport = 'http' | 'mcp';

/** One call presented to a rail (the x402 entry's CallRequest, narrowed). */
export interface RailCall {
  input: unknown;
  transport: RailTransport;
  opts: ExecuteOptions;
}

/** An MPP payment for one call: the credential (the `Authorization: Payment …` value, or MCP `_meta` object). */
export interface MppRail {
  /** Fresh challenges for an unpaid call of `action`; undefined when no method can be offered for its price. */
  challenge(action: Action, transport: RailTransport): RailParts | undefined;
  /**
   * Pays for one call with a credential. `quote` and `payX402` are x402's (undefined without x402): the evm
   * method is an EIP-3009 authorization that x402's own path reserves, verifies and settles.
   */
  pay(p: {
    run: RunDeps;
    action: Action;
    credential: unknown;
    call: RailCall;
    quote: Quote | undefined;
    payX402: ((payment: unknown) => Promise<CallResult>) | undefined;
  }): Promise<CallResult>;
  /** The terms declared for a paid action (descriptors, /openapi.json, MCP tool `_meta`). */
  terms(action: Action): Record<string, unknown> | undefined;
  close(): Promise<void>;
}

/** x402 sessions: the `batch-settlement` scheme, offered beside `exact` in the same challenge. */
export interface SessionRail {
  /** The session terms of an action, for the challenge's `accepts` (undefined until the facilitator answered). */
  requirements(action: Action): PaymentRequirements | undefined;
  /** Whether an x402 payment (the header's base64 or the MCP object) is a session payment. */
  accepts(payment: unknown): boolean;
  pay(p: {
    run: RunDeps;
    x402: X402Deps;
    quote: Quote;
    payment: unknown;
    call: RailCall;
  }): Promise<CallResult>;
  /** The terms declared for a paid action. */
  terms(action: Action): Record<string, unknown> | undefined;
  /** Claims every charged voucher on chain and sweeps the claimed funds to the pay-to address (also on a timer). */
  claimAndSettle(): Promise<{ claimed: number; transactions: string[] }>;
  close(): Promise<void>;
}

export interface PaymentRails {
  mpp?: MppRail | undefined;
  sessions?: SessionRail | undefined;
  /** Stops the rails' timers and clients (the gateway's close). */
  close(): Promise<void>;
}

/** MCP `_meta` keys of the MPP transport (draft-payment-transport-mcp; mppx `Mcp`). */
export const MPP_CREDENTIAL_META = 'org.paymentauth/credential';
export const MPP_CHALLENGE_META = 'org.paymentauth/payment-required';

/** The credential of an `Authorization` header when its scheme is `Payment` (MPP), else undefined. */
export function mppCredentialOf(authorization: string | undefined): string | undefined {
  return authorization !== undefined && /^Payment\s+\S/i.test(authorization) ? authorization : undefined;
}

/** The 402 of an unpaid call when MPP is offered and x402 is not: the ways to pay, in words. */
export function mppPaymentRequired(action: Action): GatewayError {
  return new GatewayError(
    'payment_required',
    `${action.id} costs ${centsPhrase(action.priceCents)} per successful call. Pay with MPP: answer a ` +
      'WWW-Authenticate: Payment challenge and retry with Authorization: Payment <credential>; or send an API key ' +
      'as "Authorization: Bearer tg_sk_…".',
    {
      details: {
        price_cents: action.priceCents,
        accepts: [
          { method: 'api_key', header: 'Authorization: Bearer tg_sk_…' },
          { method: 'mpp', header: 'Authorization: Payment <credential>', challenge: 'WWW-Authenticate' },
        ],
      },
    },
  );
}

/** Merges rail parts (headers append, meta merges). */
export function mergeRailParts(a: RailParts | undefined, b: RailParts | undefined): RailParts | undefined {
  if (!a) return b;
  if (!b) return a;
  const headers: Record<string, string | string[]> = { ...a.headers };
  for (const [k, v] of Object.entries(b.headers ?? {})) {
    const prev = headers[k];
    headers[k] = prev === undefined ? v : [...[prev].flat(), ...[v].flat()];
  }
  return { headers, meta: { ...a.meta, ...b.meta } };
}
