import { GatewayError } from '../src/errors.js';
import type { HandleRecord, HandlerContext } from './context.js';

// What every poll action shares: who may read a job handle, the `finished` flag, and the throttle on free polls.
//
// Handles are bound to the account that started the job. An accountless x402 payer has no credential to come
// back with, so a handle minted for an x402 payer is a bearer capability: whoever holds it (82 random bits,
// returned only to the payer) may poll it anonymously. Handles of real accounts still need the account's
// credential; anonymously they are "not found", like another account's.

/** Accountless owners, as src/run names an x402 payer's ledger account (`x402_<lowercase address>`). */
const ACCOUNTLESS_OWNER = /^x402_0x[0-9a-f]{40}$/;

/** Seconds an agent should wait before polling a running job again. */
export const POLL_INTERVAL_SECONDS = 3;

/** Anonymous (bearer) polls have no account rate limit: a bucket per handle stands in for it. */
const BEARER_BURST = 5;
const BEARER_PER_SECOND = 1;
const buckets = new Map<string, { tokens: number; at: number }>();

function takeBearerToken(handle: string, now: number): void {
  const b = buckets.get(handle) ?? { tokens: BEARER_BURST, at: now };
  b.tokens = Math.min(BEARER_BURST, b.tokens + ((now - b.at) / 1000) * BEARER_PER_SECOND);
  b.at = now;
  buckets.set(handle, b);
  if (b.tokens < 1) {
    throw new GatewayError(
      'rate_limited',
      `Poll this job at most once every ${POLL_INTERVAL_SECONDS} seconds. Nothing was charged.`,
      { retryAfterSeconds: Math.max(1, Math.ceil((1 - b.tokens) / BEARER_PER_SECOND)) },
    );
  }
  b.tokens -= 1;
  // Bounded by the handles polled in the last few seconds: idle buckets are full again, so forget them.
  if (buckets.size > 10_000) {
    for (const [k, v] of buckets)
      if (now - v.at > (BEARER_BURST / BEARER_PER_SECOND) * 1000) buckets.delete(k);
  }
}

/** The caller's own handle (an account), or a bearer handle of an accountless payer (anonymous callers). */
export async function pollableHandle(
  ctx: HandlerContext,
  kind: string,
  handle: string,
): Promise<HandleRecord | undefined> {
  if (ctx.owner !== 'anonymous') return ctx.services.handles.resolve(ctx.owner, kind, handle);
  const rec = await ctx.services.handles.lookup(handle);
  if (!rec || rec.kind !== kind || !ACCOUNTLESS_OWNER.test(rec.owner)) return undefined;
  takeBearerToken(handle, ctx.now());
  return rec;
}

/**
 * Adds `finished` (the job reached a final state: polling again returns the same answer) and, while it runs,
 * `next_poll_seconds`.
 */
export function pollState<T extends { status: string }>(
  out: T,
  running: readonly string[],
): T & { finished: boolean; next_poll_seconds?: number } {
  const finished = !running.includes(out.status);
  return finished ? { ...out, finished } : { ...out, finished, next_poll_seconds: POLL_INTERVAL_SECONDS };
}
