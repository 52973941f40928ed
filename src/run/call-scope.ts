import type { Principal } from '../../auth/principal.js';
import { GatewayError } from '../errors.js';
import { adoptController, type LinkedSignal, linkSignals } from '../lib/abort.js';
import type { Telemetry } from '../ops/telemetry.js';
import type { DatabaseHealth } from './db-health.js';
import type { Inflight } from './inflight.js';
import type { RateLimiter } from './rate-limit.js';

// What every paid call shares before and around its work, whichever door and price model it came by: admission
// (the per-account rate limit, refused while the gateway shuts down), one signal that aborts the work when the
// caller leaves, the gateway stops or time runs out, and the error that says which of the three it was.

export interface ScopeDeps {
  inflight: Inflight;
  /** Per-account admission rate; absent where it is not exercised (tests). */
  rateLimiter?: RateLimiter | undefined;
  /** Metrics and traces (src/ops/telemetry.ts); absent when neither is configured. */
  telemetry?: Telemetry | undefined;
  /** Whether the database answers: while it does not, calls are refused before any work starts. */
  health?: DatabaseHealth | undefined;
}

/** Refuses a call before anything is reserved: over its account's rate, or while the gateway shuts down. */
export async function admit(deps: ScopeDeps, principal: Principal): Promise<void> {
  deps.health?.admit();
  if (principal.kind !== 'anonymous') await deps.rateLimiter?.take(principal.accountId);
  if (!deps.inflight.accepting)
    throw shuttingDown('The gateway is shutting down; retry shortly. Nothing was charged.');
}

const shuttingDown = (message: string) =>
  new GatewayError('shutting_down', message, { retryAfterSeconds: 5 });

export interface CallScope {
  /** Aborted when the caller leaves, the gateway stops, or the deadline passes. */
  readonly signal: AbortSignal;
  /** True when the deadline (not the caller or shutdown) aborted it. */
  readonly timedOut: boolean;
  /** What aborted the work, as the error the caller gets; `e` itself when the scope was not aborted. */
  abortError(e: unknown): unknown;
  /** Detaches from the caller and shutdown signals and clears the deadline. Call when the work is done. */
  dispose(): void;
}

/**
 * Opens the scope of one call's work. `caller`: the door's own controller (aborted when the caller leaves), which
 * becomes the call's one controller — no second controller, no listener — or a signal to link to. `timeoutMessage`
 * is what the caller reads when the deadline passes ("The action did not finish within 30s").
 */
export function openScope(
  deps: ScopeDeps,
  caller: AbortController | AbortSignal | undefined,
  timeoutMs: number,
  timeoutMessage: string,
): CallScope {
  // The deadline is one entry in the process's one deadline structure; shutdown is a registry entry, not a
  // listener on a signal every call shares.
  const linked: LinkedSignal =
    caller instanceof AbortController ? adoptController(caller, timeoutMs) : linkSignals([caller], timeoutMs);
  let stopping = false;
  const unenlist = deps.inflight.enlist((reason) => {
    stopping = true;
    linked.abort(reason);
  });
  return {
    signal: linked.signal,
    get timedOut() {
      return linked.timedOut;
    },
    abortError(e) {
      if (e instanceof GatewayError || !linked.signal.aborted) return e;
      if (linked.timedOut)
        return new GatewayError('upstream_timeout', `${timeoutMessage}; nothing was charged.`);
      if (stopping) return shuttingDown('The gateway shut down during the call; nothing was charged.');
      return new GatewayError('cancelled', 'The call was cancelled; nothing was charged.');
    },
    dispose: () => {
      unenlist();
      linked.dispose();
    },
  };
}
