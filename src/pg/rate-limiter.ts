import type { PgPool } from './pool.js';

/** The bucket's tokens now: what it had plus the refill since its last take, capped at the burst ($2 burst, $3 now, $4 rate). */
const REFILLED = 'least($2::float8, r.tokens + greatest(0, $3::bigint - r.at) / 1000.0 * $4::float8)';

/**
 * The per-account rate limit (src/run/rate-limit.ts) shared by every replica on one PostgreSQL (table
 * `rate_buckets`): one UPSERT refills the bucket in SQL from the time since its last take, takes a token if there
 * is one, and says whether it did, in one round trip. The row lock serializes replicas taking from one bucket, so
 * a burst is N calls in total, not N per replica. `at` only moves forward, so replicas whose clocks differ
 * slightly never mint tokens out of the skew.
 */
export class PgRateLimiter {
  private sweeps = 0;

  constructor(
    private readonly pool: PgPool,
    private readonly ratePerSecond: number,
    private readonly burst: number,
    private readonly now: () => number,
    /** The refusal of a take that found less than one token (the rate limiter's 429). */
    private readonly refused: (tokens: number) => Error,
  ) {}

  async take(key: string): Promise<void> {
    if (this.ratePerSecond <= 0) return;
    const now = this.now();
    const r = await this.pool.query<{ tokens: number; granted: boolean }>({
      name: 'rate_take',
      text: `INSERT INTO rate_buckets AS r (key, tokens, at, granted) VALUES ($1, $2::float8 - 1, $3, $2::float8 >= 1)
             ON CONFLICT (key) DO UPDATE SET
               tokens = CASE WHEN ${REFILLED} >= 1 THEN ${REFILLED} - 1 ELSE ${REFILLED} END,
               at = greatest(r.at, excluded.at),
               granted = ${REFILLED} >= 1
             RETURNING r.tokens, r.granted`,
      values: [key, this.burst, now, this.ratePerSecond],
    });
    const row = r.rows[0];
    if (++this.sweeps % 10_000 === 0) this.forgetIdle(now);
    if (row && !row.granted) throw this.refused(row.tokens);
  }

  /** Idle buckets are full again: forgetting them changes nothing and keeps the table small. */
  private forgetIdle(now: number): void {
    const full = (this.burst / this.ratePerSecond) * 1000;
    this.pool.query('DELETE FROM rate_buckets WHERE at < $1', [now - full]).catch(() => undefined);
  }
}
