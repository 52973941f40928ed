import type { PaymentRequirements, ResourceInfo } from '@x402/core/types';
import { ANONYMOUS, type Principal } from '../../../auth/principal.js';
import { findAction } from '../../../catalog/index.js';
import { type PaymentLabel, type TraceCarrier, UNKNOWN_ACTION } from '../../ops/telemetry.js';
import { type ExecuteOptions, execute, type RunDeps } from '../execute.js';
import { observeCall } from '../observe.js';
import { paymentRequired } from '../refusals.js';
import { discoveryFor } from './discovery.js';
import type { CallResult, Quote, X402Deps } from './gate.js';
import { challengeFor, offerFor, priceDescription } from './requirements.js';

// The entry point both doors call for a catalog action: it runs the call through execute, and for an anonymous
// caller of a paid action it speaks x402 — the challenge, and a paid call's whole life:
//
//   decode → local checks → reserve the nonce (atomic) → [execute: verify → hold → run → settle → capture]
//
// Settlement happens only after the action succeeded (unless the action is configured to settle first), and
// one signed payment pays for at most one call, however often and however concurrently it is presented: the
// same payment with the same body gets the stored result again (a lost response is recovered without paying
// twice), with another body it is refused.

export type { CallResult, X402Deps } from './gate.js';

export type Transport = 'http' | 'mcp';

export interface CallRequest {
  actionId: string;
  input: unknown;
  /** From the Authorization header (or MCP auth); anonymous when the caller sent none. */
  principal: Principal;
  /**
   * The x402 payment, if any: the PAYMENT-SIGNATURE header value, or MCP `_meta["x402/payment"]` (an object or
   * a base64 string). Ignored when the caller has an account (it pays from its balance) or the action is free.
   */
  payment?: unknown;
  /** Sets the challenge's `resource.url`: the action's URL over HTTP, `mcp://tool/{name}` over MCP. */
  transport: Transport;
  opts?: ExecuteOptions;
  /** The caller's W3C trace context: the HTTP headers, or MCP `_meta` (SEP-414). Read only when tracing. */
  trace?: TraceCarrier | undefined;
}

export function executeCall(run: RunDeps, x402: X402Deps | undefined, req: CallRequest): Promise<CallResult> {
  const tel = run.telemetry;
  if (tel === undefined) return dispatch(run, x402, req);
  // Metrics and traces see the whole call, x402 refusals before execute included.
  return observeCall(
    tel,
    {
      action: findAction(req.actionId) ? req.actionId : UNKNOWN_ACTION,
      door: req.transport,
      payment: paymentLabel(req),
      trace: req.trace,
    },
    () => dispatch(run, x402, req),
    (r) => r.outcome,
  );
}

function paymentLabel(req: CallRequest): PaymentLabel {
  if (req.principal.kind !== 'anonymous') return req.principal.kind;
  return req.payment === undefined || req.payment === null || req.payment === '' ? 'anonymous' : 'x402';
}

async function dispatch(run: RunDeps, x402: X402Deps | undefined, req: CallRequest): Promise<CallResult> {
  const opts = req.opts ?? {};
  const action = findAction(req.actionId);
  if (action?.access !== 'paid' || req.principal.kind !== 'anonymous') {
    return { outcome: await execute(run, req.actionId, req.input, req.principal, opts) };
  }
  if (!x402) {
    const outcome = await execute(run, action.id, req.input, ANONYMOUS, opts);
    if (outcome.ok || outcome.error.code !== 'payment_required') return { outcome };
    return { outcome: { ok: false, error: paymentRequired(action, { enabled: false }) } };
  }
  const offer = offerFor(x402.config, action);
  const resource: ResourceInfo = {
    url:
      req.transport === 'mcp'
        ? `mcp://tool/${action.toolName}`
        : `${run.services.publicUrl}/api/run/${action.id}`,
    description: priceDescription(action),
    mimeType: 'application/json',
  };
  const { extensions } = discoveryFor(action, req.transport);
  const quote: Quote = {
    action,
    offer,
    challenge: (error) => challengeFor(offer, resource, error, extensions),
  };

  if (req.payment === undefined || req.payment === null || req.payment === '') {
    // Validation first: a request that cannot run is a 400, not an invitation to pay.
    const outcome = await execute(run, action.id, req.input, ANONYMOUS, opts);
    if (outcome.ok || outcome.error.code !== 'payment_required') return { outcome };
    return {
      outcome: {
        ok: false,
        error: paymentRequired(action, { enabled: true, accepts: [offer.requirements] }),
      },
      paymentRequired: quote.challenge('Payment required'),
    };
  }
  // The payment itself: viem and the x402 libraries load with it, on the first x402 payment.
  const { pay } = await import('./pay.js');
  return pay(run, x402, quote, req, opts);
}

/** The payment requirements of a paid action, for advertising its x402 price (MCP tool `_meta`). */
export function advertisedPayment(
  x402: X402Deps | undefined,
  actionId: string,
): PaymentRequirements | undefined {
  const action = findAction(actionId);
  if (!x402 || !action || action.access !== 'paid') return undefined;
  return offerFor(x402.config, action).requirements;
}
