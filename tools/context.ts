import type { Logger } from 'pino';
import type { Services } from '../src/ports/index.js';

// The ports handlers are given (files, handles, fetchers, the model router, vendor clients) live in src/ports.
export type * from '../src/ports/index.js';

// What a handler is given. Handlers never see money or credentials: vendor clients carry their own keys,
// and the only account access is a read-only view of the caller's own account.

export interface HandlerContext {
  /** Aborted on client cancellation, timeout or shutdown; pass it to every upstream call. */
  signal: AbortSignal;
  now(): number;
  /** Opaque id of the account the call belongs to; binds server-minted handles (crawl ids, render ids). */
  owner: string;
  /** This call's transaction id (for evidence that cites it). */
  transactionId: string;
  log: Logger;
  /** Reports progress while a call blocks; the MCP door forwards it when the client asked for it. */
  progress(progress: number, total?: number, message?: string): void;
  account: AccountView;
  services: Services;
}

export interface AccountView {
  balance(): Promise<{ balance_micros: number; held_micros: number; available_micros: number }>;
  transactions(limit: number): Promise<TransactionView[]>;
}

export type TransactionView = {
  id: string;
  created_at: string;
  /**
   * `call`, or the money that moved without one: credit, topup, settlement, refund, refund_reversal, dispute,
   * dispute_reversal, line, call_refund (the operator gave back all or part of a call: `meta.refund_of` names it),
   * adjustment (the operator corrected the balance).
   */
  kind:
    | 'call'
    | 'credit'
    | 'topup'
    | 'settlement'
    | 'refund'
    | 'refund_reversal'
    | 'dispute'
    | 'dispute_reversal'
    | 'line'
    | 'call_refund'
    | 'adjustment';
  /** The action id of a call; `account/<kind>` for the others. */
  action: string;
  /**
   * What it did to the balance, signed (a call: minus what it charged net of the refunds of failed work — each
   * refund by the operator is a `call_refund` row of its own; a top-up: plus), so the rows add up.
   */
  amount_micros: number;
  /** A call refunded in full is `refunded`; one refunded in part stays `succeeded` with its refunded_cents. */
  status: 'pending' | 'succeeded' | 'failed' | 'refunded';
  /** Refunded later: because the work it started failed (a render, a job), or by the operator. */
  refunded_cents: number;
  price_cents: number;
  charged_cents: number;
  charged_micros: number;
  payment_method: string;
  provider: string | null;
  idempotency_key: string | null;
  duration_ms: number | null;
  error_code: string | null;
  meta: Record<string, unknown> | null;
};
