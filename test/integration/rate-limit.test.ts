import { describe, expect, it } from 'vitest';
import { MemoryRateLimiter } from '../../src/run/rate-limit.js';
import { ManualClock } from '../helpers/clock.js';
import { startGateway } from '../helpers/gateway.js';

describe('per-account rate limit', () => {
  it('[http:rate-limit] a burst beyond the limit gets 429 with Retry-After, uncharged; other accounts are unaffected', async () => {
    const t = await startGateway({
      env: { TOLLGATE_RATE_LIMIT_PER_SECOND: '1', TOLLGATE_RATE_LIMIT_BURST: '3' },
      handlers: { 'scraperC/scrape': async () => ({ raw: 'x' }) },
    });
    try {
      const a = await t.account('1');
      const b = await t.account('1');
      const body = { url: 'https://example.com/', browser: false };
      const replies = await Promise.all(
        Array.from({ length: 5 }, () => t.post('/api/run/scraperC/scrape', body, { key: a.key })),
      );
      expect(replies.map((r) => r.status).sort()).toEqual([200, 200, 200, 429, 429]);
      const limited = replies.find((r) => r.status === 429);
      expect(limited?.body.error.code).toBe('rate_limited');
      expect(Number(limited?.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect((await t.gw.ledger.balance(a.accountId)).balance_micros).toBe(970_000);
      expect((await t.post('/api/run/scraperC/scrape', body, { key: b.key })).status).toBe(200);
    } finally {
      await t.close();
    }
  });

  it('refills at the configured rate', async () => {
    const clock = new ManualClock();
    const rl = new MemoryRateLimiter(2, 2, () => clock.now());
    await rl.take('a');
    await rl.take('a');
    await expect(rl.take('a')).rejects.toThrow(/Too many calls/);
    clock.advance(500);
    await rl.take('a');
    await expect(rl.take('a')).rejects.toThrow();
    await expect(new MemoryRateLimiter(0, 1, () => 0).take('a')).resolves.toBeUndefined();
  });
});
