import type { Logger } from 'pino';
import type { AlertSignals } from '../alerts/signals.js';
import type { MovementRow } from '../ledger/types.js';
import type { Telemetry } from '../ops/telemetry.js';

// What the lifecycle (./lifecycle.ts, refundCharge and adjust) reports once the operator moved money: the refund
// metric (`operator` as its reason), a log line naming who asked, and the account's alerts, told as for any other
// money that moved (a credit can re-arm a balance alert, a debit cross it; docs/decisions.md "Alerts").

export interface OperatorMovedDeps {
  log: Logger;
  telemetry?: Telemetry | undefined;
  alerts?: AlertSignals | undefined;
}

export function operatorMoved(
  deps: OperatorMovedDeps,
  what: 'refund' | 'adjustment',
  m: MovementRow,
  by: string,
): void {
  const micros = m.amount_micros;
  if (what === 'refund') deps.telemetry?.metrics.refunded('operator', micros);
  const refundOf = what === 'refund' ? { txn: m.meta?.refund_of } : {};
  deps.log.info({ account: m.account_id, ...refundOf, micros, movement: m.id, by }, `operator ${what}`);
  deps.alerts?.touched(m.account_id);
}
