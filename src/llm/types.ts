import type { PaymentRequired, SettleResponse } from '@x402/core/types';
import type { Logger } from 'pino';
import type { GatewayError } from '../errors.js';
import type { Clock } from '../lib/clock.js';
import type { ScopeDeps } from '../run/call-scope.js';
import type { Lifecycle } from '../run/lifecycle.js';
import type { ReceiptSigner } from '../run/receipts.js';
import type { MeteredX402 } from '../run/x402/metered.js';
import type { ModelPrice } from './cost.js';

// The model router's shapes: what the metered path (./chat.ts) needs from the upstream side (./router.ts,
// ./upstream.ts) and from the door (./routes.ts).

export interface PricedModel {
  /** Exact upstream slug. */
  id: string;
  price: ModelPrice;
  /** The operator set this model's prices: bill tokens × these prices, even when the upstream reports a cost. */
  overridden: boolean;
}

export interface ModelRoute {
  /** What the caller asked for: a slug or a tier alias. */
  requested: string;
  /** The tier alias, when one was asked for. */
  tier: string | undefined;
  /** Models to try in order; every one is priced and (for a tier) within the tier's ceiling. */
  candidates: PricedModel[];
}

/** One SSE event as received, normalized to `\n` line ends and terminated by a blank line. */
export interface SseEvent {
  text: string;
  /** The joined `data:` lines; undefined for a comment-only event (`: OPENROUTER PROCESSING`). */
  data: string | undefined;
}

/** A failed attempt on one model, before anything reached the caller. */
export interface AttemptFailure {
  ok: false;
  error: GatewayError;
  /** True when the next model of a tier may succeed (5xx, 429, timeout, model unavailable). */
  fallback: boolean;
}

export interface CompletionAttempt {
  ok: true;
  body: Record<string, unknown>;
}

export interface StreamAttempt {
  ok: true;
  /** The first data event (already read, not an error): the stream has begun. */
  first: SseEvent;
  firstJson: Record<string, unknown>;
  /** The rest of the stream. */
  events: AsyncIterator<SseEvent>;
  /** Aborts the upstream request (client gone, deadline). */
  abort(): void;
}

export interface ModelRouter {
  /** Resolves a slug or tier to priced candidates; throws a GatewayError when none can be served. */
  resolve(model: string, signal: AbortSignal): Promise<ModelRoute>;
  complete(
    model: string,
    body: Record<string, unknown>,
    opts: { signal: AbortSignal; timeoutMs: number },
  ): Promise<CompletionAttempt | AttemptFailure>;
  /** Opens a stream and waits for its first data event, at most `firstByteTimeoutMs`. */
  stream(
    model: string,
    body: Record<string, unknown>,
    opts: { signal: AbortSignal; firstByteTimeoutMs: number },
  ): Promise<StreamAttempt | AttemptFailure>;
}

/** The door's streaming response. */
export interface ChatStreamSink {
  /** Aborted when the client goes away. */
  readonly signal: AbortSignal;
  /** Commits the 200 SSE response; called once, just before the first event. */
  open(headers: Record<string, string>): void;
  /** Writes one event as received; resolves when the client can take more (backpressure). */
  write(text: string): Promise<void>;
  /**
   * Resolves once the events written so far have left for the client. node:http corks the socket until the end of
   * the tick, and a stream that arrived in one upstream read ends in that same tick: without this the capture's
   * commit (for a lone call, an fdatasync right there) would run before the first byte leaves.
   */
  flush(): Promise<void>;
  /** Ends an open stream with an error event (the status is already 200). */
  fail(error: GatewayError): void;
  end(): void;
}

export interface MeteredLimits {
  dailyCapMicros: number;
  /** Whole call, all attempts included. */
  timeoutMs: number;
  /** Streaming: from the request to the first data event, per attempt. */
  firstByteTimeoutMs: number;
}

/** The metered path's dependencies; the rate limiter is the catalog's (a router call counts as one call). */
export interface MeteredDeps extends ScopeDeps {
  money: Lifecycle;
  clock: Clock;
  log: Logger;
  router: ModelRouter;
  limits: MeteredLimits;
  /** Signs the receipt of every charged call (src/run/receipts.ts). */
  receipts?: ReceiptSigner | undefined;
  /** x402 `upto` payments for accountless callers (src/run/x402/metered.ts); absent without x402. */
  x402?: MeteredX402 | undefined;
}

export type ChatOutcome =
  | { ok: true; streamed: false; body: Record<string, unknown>; headers: Record<string, string> }
  /** The response went out as a stream, ending with an error event if the call failed after it began. */
  | { ok: true; streamed: true }
  | {
      ok: false;
      streamed: false;
      error: GatewayError;
      /** x402: the challenge (HTTP 402 with PAYMENT-REQUIRED, the body mirrors it). */
      paymentRequired?: PaymentRequired | undefined;
      /** x402: a settlement's outcome (PAYMENT-RESPONSE). */
      paymentResponse?: SettleResponse | undefined;
    };
