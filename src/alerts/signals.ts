import type {
  ExternalRequest,
  ExternalResult,
  SettlementOutcome,
  SettlementResult,
} from '../ledger/types.js';

// What the money path tells alerts (the seam the lifecycle and billing report to; src/alerts/index.ts implements
// it). The call path's part is `touched` and `capRefused`: synchronous, O(1) (a set lookup and insert, only for
// accounts that have alerts), never throwing; the work (reading the balance and caps, deciding whether a threshold
// was crossed, queueing the alert) happens in the background a moment later. The card methods run on the Stripe
// webhook's path, not a call's, and wait for the alert to be queued (durably, before Stripe is answered).

export interface AlertSignals {
  /** Money moved on the account (a capture, a credit, card money, the line): its thresholds are looked at soon. */
  touched(accountId: string): void;
  /** A hold was refused by a cap of `scope` (`oauth:<client>`, `key:<key id>`): that cap is reached. */
  capRefused(accountId: string, scope: string): void;
  /** Card money was recorded or reported again (a top-up succeeded). Never rejects. */
  cardMoney(req: ExternalRequest, r: ExternalResult): Promise<void>;
  /** A settlement of the line was resolved (or reported again). Never rejects. */
  settlementFinished(movementId: string, outcome: SettlementOutcome, r: SettlementResult): Promise<void>;
  /** A top-up's payment failed (Stripe reported it): nothing was credited. Never rejects. */
  topUpFailed(accountId: string, reference: string, micros: number | null, reason: string): Promise<void>;
}
