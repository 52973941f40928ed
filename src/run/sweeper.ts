import type { Logger } from 'pino';
import { isDatabaseUnavailable } from '../errors.js';
import type { Clock } from '../lib/clock.js';
import type { DatabaseHealth } from './db-health.js';
import type { Lifecycle } from './lifecycle.js';
import type { X402Deps } from './x402/gate.js';

/**
 * The gateway's background sweep, every `intervalMs`: holds past their expiry are voided (and, on PostgreSQL,
 * those of replicas whose lease expired), idempotency keys past their TTL purged, x402 payment records past
 * theirs purged, and payments a dead replica left mid-call recovered. A failure is logged (a
 * database that does not answer also counts toward the outage) and the next round tries again.
 */
export function startSweeper(d: {
  money: Lifecycle;
  x402: X402Deps | undefined;
  clock: Clock;
  log: Logger;
  health: DatabaseHealth;
  intervalMs: number;
}): { stop(): void } {
  const failed = (what: string) => (err: unknown) => {
    d.health.report(err);
    // A database that does not answer is the outage, which the health watch logs once; not a line a round.
    if (!isDatabaseUnavailable(err)) d.log.error({ err }, what);
  };
  const timer = setInterval(() => {
    d.money
      .sweep(d.clock.now())
      .then((r) => {
        if (r.expiredHolds > 0) d.log.warn(r, 'sweeper voided expired holds');
        if ((r.orphanedHolds ?? 0) > 0)
          d.log.warn(r, 'sweeper voided the holds of a replica whose lease expired');
      })
      .catch(failed('sweep failed'));
    d.x402?.payments.purge(d.clock.now()).catch(failed('x402 purge failed'));
    // Payments a dead replica left mid-call (its lease expired) are recovered by the survivors (on SQLite, a
    // cluster of one, there are none); this replica's own are its running calls and stay theirs.
    d.x402?.payments.recover(false).catch(failed('x402 recovery'));
  }, d.intervalMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
