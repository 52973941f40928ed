import type { GatewayError } from '../errors.js';
import type { CallSpan, Door, PaymentLabel, Telemetry, TraceCarrier } from '../ops/telemetry.js';

// One call as metrics and traces see it, whatever its door and price model: execute (./execute.ts, for a call that
// came through a door) and the model router (src/llm/chat.ts) wrap their whole call in it, a payment's refusal
// included. Callers skip it entirely when the gateway has no telemetry.

export interface ObservedCall {
  /** An action id the catalog knows, or UNKNOWN_ACTION: never the caller's string. */
  action: string;
  door: Door;
  payment: PaymentLabel;
  /** The caller's W3C trace context (HTTP headers, MCP `_meta`); read only when tracing. */
  trace?: TraceCarrier | undefined;
}

/** What observeCall reads of a call's result. */
export type ObservedOutcome =
  | { ok: true; replayed?: boolean; chargedCents?: number; transactionId?: string | undefined }
  | { ok: false; error: GatewayError; transactionId?: string | undefined };

export async function observeCall<T>(
  tel: Telemetry,
  call: ObservedCall,
  work: () => Promise<T>,
  outcomeOf: (result: T) => ObservedOutcome,
): Promise<T> {
  const started = performance.now();
  const result = tel.tracing
    ? await tel.tracing.call(call.action, call.door, call.trace, async (span) => {
        const r = await work();
        describe(span, call, outcomeOf(r));
        return r;
      })
    : await work();
  const o = outcomeOf(result);
  const label = o.ok ? (o.replayed ? 'replayed' : 'ok') : o.error.code;
  tel.metrics.call(call.action, call.door, call.payment, label, (performance.now() - started) / 1000);
  return result;
}

function describe(span: CallSpan, call: ObservedCall, o: ObservedOutcome): void {
  span.set('payment_method', call.payment);
  if (o.transactionId) span.set('transaction_id', o.transactionId);
  if (o.ok) {
    if (o.chargedCents !== undefined) span.set('charged_cents', o.chargedCents);
    if (o.replayed) span.set('replayed', true);
  } else span.end(o.error.code);
}
