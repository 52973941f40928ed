import { type AdjustRequest, type ChargeRefundRequest, LedgerStateError } from './types.js';

// What every backend refuses in an operator's refund or adjustment before touching the database: amounts are
// integers of micro-USD, a refund gives back more than nothing, an adjustment moves something.

export function checkRefund(req: ChargeRefundRequest): void {
  if (req.micros !== undefined && (!Number.isSafeInteger(req.micros) || req.micros <= 0))
    throw new LedgerStateError(`a refund needs a positive integer amount, got ${req.micros}`);
}

export function checkAdjust(req: AdjustRequest): void {
  if (!Number.isSafeInteger(req.micros) || req.micros === 0)
    throw new LedgerStateError(`an adjustment needs a non-zero integer amount, got ${req.micros}`);
}
