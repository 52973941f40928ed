import type { StateDb } from '../backend.js';
import { GatewayError } from '../errors.js';
import { PgRateLimiter } from '../pg/rate-limiter.js';

/**
 * Per-account token buckets: `ratePerSecond` calls per second on average with bursts of `burst`. A refusal is a
 * 429 with Retry-After, before anything is reserved.
 */
export interface RateLimiter {
  /** Takes one token for `key` or throws `rate_limited`. A rate of 0 disables limiting. */
  take(key: string): Promise<void>;
}

/** Opens the limiter for the gateway's state: in memory on SQLite (one process), shared in PostgreSQL. */
export function openRateLimiter(
  state: StateDb,
  ratePerSecond: number,
  burst: number,
  now: () => number,
): RateLimiter {
  return state.kind === 'sqlite'
    ? new MemoryRateLimiter(ratePerSecond, burst, now)
    : new PgRateLimiter(state.pool, ratePerSecond, burst, now, (tokens) =>
        rateLimited(ratePerSecond, burst, tokens),
      );
}

function rateLimited(ratePerSecond: number, burst: number, tokens: number): GatewayError {
  const retryAfterSeconds = Math.max(1, Math.ceil((1 - tokens) / ratePerSecond));
  return new GatewayError(
    'rate_limited',
    `Too many calls: this account may make ${ratePerSecond} calls per second (bursts of ${burst}). Nothing was charged.`,
    { retryAfterSeconds },
  );
}

/** In memory: one gateway process owns a SQLite data dir, so its buckets are the only ones. */
export class MemoryRateLimiter implements RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  private sweeps = 0;

  constructor(
    private readonly ratePerSecond: number,
    private readonly burst: number,
    private readonly now: () => number,
  ) {}

  take(key: string): Promise<void> {
    try {
      this.takeNow(key);
      return Promise.resolve();
    } catch (e) {
      return Promise.reject(e);
    }
  }

  private takeNow(key: string): void {
    if (this.ratePerSecond <= 0) return;
    const now = this.now();
    const b = this.buckets.get(key) ?? { tokens: this.burst, at: now };
    b.tokens = Math.min(this.burst, b.tokens + ((now - b.at) / 1000) * this.ratePerSecond);
    b.at = now;
    if (b.tokens < 1) {
      this.buckets.set(key, b);
      throw rateLimited(this.ratePerSecond, this.burst, b.tokens);
    }
    b.tokens -= 1;
    this.buckets.set(key, b);
    // Forget idle buckets now and then so the map stays bounded by active accounts.
    if (++this.sweeps % 10_000 === 0) this.forgetIdle(now);
  }

  private forgetIdle(now: number): void {
    const full = (this.burst / this.ratePerSecond) * 1000;
    for (const [k, b] of this.buckets) if (now - b.at > full) this.buckets.delete(k);
  }
}
