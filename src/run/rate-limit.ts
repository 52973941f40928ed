import { GatewayError } from '../errors.js';

/**
 * Per-account token buckets: `ratePerSecond` calls per second on average with bursts of `burst`. In memory (one
 * gateway process owns a data dir). A refusal is a 429 with Retry-After, before anything is reserved.
 */
export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  private sweeps = 0;

  constructor(
    private readonly ratePerSecond: number,
    private readonly burst: number,
    private readonly now: () => number,
  ) {}

  /** Takes one token for `key` or throws `rate_limited`. A rate of 0 disables limiting. */
  take(key: string): void {
    if (this.ratePerSecond <= 0) return;
    const now = this.now();
    const b = this.buckets.get(key) ?? { tokens: this.burst, at: now };
    b.tokens = Math.min(this.burst, b.tokens + ((now - b.at) / 1000) * this.ratePerSecond);
    b.at = now;
    if (b.tokens < 1) {
      this.buckets.set(key, b);
      const retryAfterSeconds = Math.max(1, Math.ceil((1 - b.tokens) / this.ratePerSecond));
      throw new GatewayError(
        'rate_limited',
        `Too many calls: this account may make ${this.ratePerSecond} calls per second (bursts of ${this.burst}). Nothing was charged.`,
        { retryAfterSeconds },
      );
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
