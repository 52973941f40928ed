import {
  type AdjustRequest,
  type BeginRequest,
  type ChargeRefundRequest,
  type GrantLineRequest,
  LedgerStateError,
  type SettlementRequest,
} from './types.js';

// What every backend refuses before touching the database: amounts are integers of micro-USD, never negative
// where money is held or charged; an external movement and a line move something; a refund gives back more than
// nothing, an adjustment moves something.

export function assertMicros(n: number, what: string): void {
  if (!Number.isSafeInteger(n) || n < 0)
    throw new LedgerStateError(`${what} must be a non-negative integer, got ${n}`);
}

export function checkBegin(req: BeginRequest): void {
  assertMicros(req.priceMicros, 'price');
  assertMicros(req.holdMicros, 'hold');
  if (req.funding) assertMicros(req.funding.micros, 'funding');
}

export function checkExternal(micros: number): void {
  assertMicros(micros, 'amount');
  if (micros === 0) throw new LedgerStateError('an external movement needs an amount above zero');
}

export function checkGrantLine(req: GrantLineRequest): void {
  assertMicros(req.micros, 'credit line');
  if (req.micros === 0 || req.cardFingerprint === '')
    throw new LedgerStateError('a credit line needs an amount and a card fingerprint');
}

export function checkSettlement(req: SettlementRequest): void {
  assertMicros(req.minMicros, 'minimum');
  assertMicros(req.stepMicros, 'step');
}

export function checkRefund(req: ChargeRefundRequest): void {
  if (req.micros !== undefined && (!Number.isSafeInteger(req.micros) || req.micros <= 0))
    throw new LedgerStateError(`a refund needs a positive integer amount, got ${req.micros}`);
}

export function checkAdjust(req: AdjustRequest): void {
  if (!Number.isSafeInteger(req.micros) || req.micros === 0)
    throw new LedgerStateError(`an adjustment needs a non-zero integer amount, got ${req.micros}`);
}
