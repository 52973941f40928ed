// The one seam through which the gateway reports what it does: metrics (counted in memory, exposed on
// /metrics by src/ops/prometheus.ts) and traces (OpenTelemetry, src/ops/tracing.ts). The execution path calls
// it at the points docs/operator.md "Monitoring" lists — execute and the model router per call, the lifecycle
// per money movement, the ledger per commit; vendor clients and the x402 facilitator are wrapped by the
// composition root (src/ops/instrument.ts) — and nothing else knows how it is exported.
//
// Cheap by construction: with nothing configured the composition root passes no Telemetry at all, and each
// call site is one optional-chaining test. With metrics on, a call updates pre-bound counters (no label
// objects, no strings built). With tracing off, `tracing` is undefined and no span is ever created.
//
// Labels are closed sets chosen by the code (action ids of the catalog, doors, payment methods, error codes,
// vendor names, tiers): never an account id, a key, a URL or anything else a caller sends.

/** The door a call came through. */
export type Door = 'http' | 'mcp' | 'llm';

/** How a call is paid: a principal's kind. */
export type PaymentLabel = 'api_key' | 'oauth' | 'x402' | 'anonymous';

/** Why a hold was refused (the GatewayError code the caller gets). */
export type HoldRefusal =
  | 'insufficient_credit'
  | 'daily_cap_exceeded'
  | 'monthly_cap_exceeded'
  | 'call_limit_exceeded'
  | 'idempotency_in_flight'
  | 'idempotency_mismatch';

/** Whose limit refused a hold: an API key's, an OAuth client's, or a door's (the inference cap); none. */
export type CapScope = 'account' | 'client' | 'door' | 'key' | 'none';

/** The label of a call to an action id the catalog does not have (never the caller's string). */
export const UNKNOWN_ACTION = '_unknown';

export interface Metrics {
  /** A call finished (execute or the model router). `outcome`: `ok`, `replayed` or the error code. */
  call(action: string, door: Door, payment: PaymentLabel, outcome: string, seconds: number): void;
  /** Money posted by a capture, micro-USD (0 when the result went out uncharged). */
  charged(action: string, payment: PaymentLabel, micros: number): void;
  /** A hold released without a charge; `reason` is the failure's error code. */
  voided(reason: string): void;
  /** A capture that could not be written: the result was delivered uncharged. */
  captureFailed(): void;
  refunded(reason: string, micros: number): void;
  credited(reason: string, micros: number): void;
  holdRefused(reason: HoldRefusal, scope: CapScope): void;
  /** Card money recorded (`topup`, `refund`, `dispute`, `dispute_reversal`): what moved, micro-USD. */
  cardMoney(kind: string, micros: number): void;
  /** A card charge settling a credit line: `settled` (with its amount), `failed` or `already`. */
  cardSettlement(outcome: string, micros: number): void;
  /** Holds the sweeper voided because they outlived their TTL. */
  holdsExpired(count: number): void;
  /** A lifecycle write as its caller waited for it (queueing included). */
  ledgerOp(op: 'hold' | 'capture' | 'void', seconds: number): void;
  /** One call to a vendor; `outcome`: `ok` or the error code. */
  upstream(vendor: string, outcome: string, seconds: number): void;
  /** A metered model call settled: tokens and cost, by tier (`none` for a model named directly). */
  llmUsage(tier: string, promptTokens: number, completionTokens: number, costMicros: number): void;
  /** An x402 facilitator answer: verify (valid|invalid|unavailable) or settle (settled|failed|unknown). */
  x402(step: 'verify' | 'settle', outcome: string, seconds: number): void;
}

/** A span in progress. `end` takes the error code when the step failed. */
export interface Span {
  end(error?: string): void;
}

export interface CallSpan extends Span {
  /** Facts known at the end: outcome, charge, transaction id, payment method. */
  set(key: string, value: string | number | boolean): void;
}

/** Where a caller's trace context is read from: HTTP headers, or MCP `_meta` (SEP-414: same key names). */
export type TraceCarrier = Readonly<Record<string, unknown>>;

export interface Tracing {
  /**
   * Runs `fn` as one call's span, the child of the caller's trace when `carrier` holds a valid W3C
   * `traceparent`. The span is current inside `fn`, so steps and vendor spans started there are its children;
   * steps still open when it ends are ended as failed.
   */
  call<T>(
    action: string,
    door: Door,
    carrier: TraceCarrier | undefined,
    fn: (span: CallSpan) => Promise<T>,
  ): Promise<T>;
  /** Starts a step (validate, hold, upstream, capture, void, a vendor call) under the current span. */
  step(name: string): Span;
  /** Runs `fn` with `step` current, so spans started inside (vendor calls) are its children. */
  within<T>(step: Span, fn: () => Promise<T>): Promise<T>;
}

export interface Telemetry {
  metrics: Metrics;
  /** Undefined unless an exporter is configured: callers then create no span at all. */
  tracing: Tracing | undefined;
}

export const NOOP_METRICS: Metrics = {
  call() {},
  charged() {},
  voided() {},
  captureFailed() {},
  refunded() {},
  credited() {},
  holdRefused() {},
  cardMoney() {},
  cardSettlement() {},
  holdsExpired() {},
  ledgerOp() {},
  upstream() {},
  llmUsage() {},
  x402() {},
};
