import { newId } from '../../lib/ids.js';
import type { prepareStatements } from './statements.js';

/**
 * Voids holds an earlier version left as rows (it wrote holds down; this one keeps them in memory) when its
 * process died mid-call, as that version's start-up did: released, the provisional funding reversed, the call
 * failed with `reason`, its idempotency key freed. Runs inside one durable write at start-up. Returns how many.
 */
export function voidLegacyHolds(
  s: ReturnType<typeof prepareStatements>,
  reason: string,
  now: number,
): number {
  const pending = s.allPending.all();
  for (const hold of pending) {
    if (s.resolveHold.run(now, hold.call_id).changes !== 1) continue;
    s.releaseHeld.run(hold.amount_micros, hold.account_id);
    if (hold.cap_day) s.subSpent.run(hold.amount_micros, hold.account_id, hold.cap_day);
    if (hold.funding_micros > 0) {
      const t = newId('tr', now);
      const memo = 'reversal: funding not collected';
      s.insEntry.run(t, hold.account_id, -hold.funding_micros, 'topup', hold.call_id, memo, now);
      s.insEntry.run(t, 'sys_funding', hold.funding_micros, 'topup', hold.call_id, memo, now);
      s.addBalance.run(-hold.funding_micros, hold.account_id);
      s.addBalance.run(hold.funding_micros, 'sys_funding');
    }
    s.finishFail.run(reason, now, hold.call_id);
    s.delIdemOfCall.run(hold.account_id, hold.call_id);
  }
  return pending.length;
}
