import type { PaymentRequirements, ResourceInfo } from '@x402/core/types';
import { ANONYMOUS, type Principal } from '../../../auth/principal.js';
import { type Action, findAction } from '../../../catalog/index.js';
import { type PaymentLabel, type TraceCarrier, UNKNOWN_ACTION } from '../../ops/telemetry.js';
import { type ExecuteOptions, execute, type RunDeps } from '../execute.js';
import { observeCall } from '../observe.js';
import { mppPaymentRequired } from '../rails.js';
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
  /** An MPP credential (`Authorization: Payment …`, or MCP `_meta["org.paymentauth/credential"]`), if any. */
  credential?: unknown;
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
  const quote = x402 && quoteOf(run, x402, action, req.transport);
  // Another rail's credential (MPP: ../rails.ts); its evm method pays through x402's own path below.
  const mpp = run.rails?.mpp;
  if (mpp && present(req.credential)) {
    const call = { input: req.input, transport: req.transport, opts };
    const payX402 =
      x402 &&
      quote &&
      (async (payment: unknown) =>
        (await import('./pay.js')).pay(run, x402, quote, { ...req, payment }, opts));
    return mpp.pay({ run, action, credential: req.credential, call, quote, payX402 });
  }
  if (!x402 || !quote) {
    const outcome = await execute(run, action.id, req.input, ANONYMOUS, opts);
    if (outcome.ok || outcome.error.code !== 'payment_required') return { outcome };
    const rail = railChallenges(run, action, req.transport);
    const error = rail.rail ? mppPaymentRequired(action) : paymentRequired(action, { enabled: false });
    return { outcome: { ok: false, error }, ...rail };
  }
  const { offer } = quote;

  if (!present(req.payment)) {
    // Validation first: a request that cannot run is a 400, not an invitation to pay.
    const outcome = await execute(run, action.id, req.input, ANONYMOUS, opts);
    if (outcome.ok || outcome.error.code !== 'payment_required') return { outcome };
    return {
      outcome: {
        ok: false,
        error: paymentRequired(action, { enabled: true, accepts: [offer.requirements] }),
      },
      paymentRequired: quote.challenge('Payment required'),
      ...railChallenges(run, action, req.transport),
    };
  }
  // The payment itself: viem and the x402 libraries load with it, on the first x402 payment.
  const { pay } = await import('./pay.js');
  return pay(run, x402, quote, req, opts);
}

function present(v: unknown): boolean {
  return v !== undefined && v !== null && v !== '';
}

/** The challenges of the other rails (MPP) for an unpaid call, beside x402's. */
function railChallenges(run: RunDeps, action: Action, transport: Transport): Pick<CallResult, 'rail'> {
  const parts = run.rails?.mpp?.challenge(action, transport);
  return parts ? { rail: parts } : {};
}

/** What an x402 payer is asked for an action: the `exact` offer, and the session terms when sessions are on. */
function quoteOf(run: RunDeps, x402: X402Deps, action: Action, transport: Transport): Quote {
  const offer = offerFor(x402.config, action);
  const resource: ResourceInfo = {
    url:
      transport === 'mcp'
        ? `mcp://tool/${action.toolName}`
        : `${run.services.publicUrl}/api/run/${action.id}`,
    description: priceDescription(action),
    mimeType: 'application/json',
  };
  const { extensions } = discoveryFor(action, transport);
  const session = run.rails?.sessions?.requirements(action);
  return {
    action,
    offer,
    resource,
    challenge: (error) => challengeFor(offer, resource, error, extensions, session ? [session] : undefined),
  };
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
