import type { Balance, CallRow, MovementRow } from './types.js';

// The requests and answers of the operator's money (LedgerMoney.refundCharge and adjust, ./types.ts): a refund of
// all or part of a call's charge, and a signed correction of a balance. Implemented by ./sqlite/operator-moves.ts
// and ./pg/pg-operator-moves.ts, driven only by the lifecycle (src/run/lifecycle.ts).

/** An operator's refund of all or part of what a call was charged (LedgerMoney.refundCharge). */
export interface ChargeRefundRequest {
  callId: string;
  /** What to give back, > 0; absent: everything not refunded yet. */
  micros?: number | undefined;
  /**
   * The refund moves once per reference (a movement's external_ref): a request with a reference already used
   * is answered with that refund (`duplicate`), or refused when it asked for something else (`mismatch`).
   */
  ref: string;
  /** Why: the movement's memo, shown in the account's history. */
  reason: string;
  /** Who asked, for the record (`cli:<user>`, the HTTP caller's name). */
  by: string;
}

export type ChargeRefundResult =
  | { kind: 'refunded'; movement: MovementRow; call: CallRow; balance: Balance }
  /** The reference was used for this same request: that refund, nothing moved again. */
  | { kind: 'duplicate'; movement: MovementRow; call: CallRow; balance: Balance }
  /** The reference was used for another request (another call, amount or reason): nothing moved. */
  | { kind: 'mismatch'; movementId: string }
  | { kind: 'unknown_call' }
  /** The call was not charged (pending, failed, free) or is refunded in full already: nothing moved. */
  | { kind: 'not_refundable'; call: CallRow }
  /** More than is left to refund was asked: nothing moved. */
  | { kind: 'exceeds'; call: CallRow; leftMicros: number };

/** An operator's signed correction of a customer's balance (LedgerMoney.adjust). */
export interface AdjustRequest {
  accountId: string;
  /** Signed, ≠ 0: + into the account (from sys_funding), − out of it. */
  micros: number;
  reason: string;
  by: string;
  /** Optional: the adjustment moves once per reference (as ChargeRefundRequest.ref). */
  ref?: string | undefined;
}

export type AdjustResult =
  | { kind: 'adjusted'; movement: MovementRow; balance: Balance }
  | { kind: 'duplicate'; movement: MovementRow; balance: Balance }
  | { kind: 'mismatch'; movementId: string }
  /** A debit larger than what the account has free of its pending holds (line included unless frozen). */
  | { kind: 'insufficient'; balance: Balance };
