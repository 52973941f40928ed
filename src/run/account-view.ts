import type { AccountView, TransactionView } from '../../tools/context.js';
import type { CallRow, LedgerReads, MovementRow, TimeRange } from '../ledger/types.js';
import { microsToCents } from '../lib/money.js';

export type { TransactionView };

// An account's transaction history as callers see it (platform/transactions, `tollgate tx`, the dashboard):
// its calls and the money that moved without a call, merged newest first, so the history is complete.

export function transactionView(c: CallRow): TransactionView {
  return {
    id: c.id,
    created_at: new Date(c.created_at).toISOString(),
    kind: 'call',
    action: c.action,
    // Net of the refunds of failed work only: each refund the operator made is a row of its own (call_refund),
    // so the rows of a history add up to what moved.
    amount_micros: -(c.charged_micros - c.refunded_micros + c.operator_refunded_micros),
    status: c.status,
    price_cents: microsToCents(c.price_micros),
    charged_cents: microsToCents(c.charged_micros),
    charged_micros: c.charged_micros,
    refunded_cents: microsToCents(c.refunded_micros),
    payment_method: c.payment_method,
    provider: c.provider,
    idempotency_key: c.idempotency_key,
    duration_ms: c.duration_ms,
    error_code: c.error_code,
    meta: c.meta,
  };
}

const CARD_KINDS = new Set<MovementRow['kind']>([
  'topup',
  'settlement',
  'refund',
  'refund_reversal',
  'dispute',
  'dispute_reversal',
]);

export function movementView(m: MovementRow): TransactionView {
  const card = CARD_KINDS.has(m.kind);
  // A settlement that has not (or not yet) moved money shows what it asked for in meta, 0 as its effect.
  const moved = m.kind !== 'settlement' || m.status === 'succeeded';
  return {
    id: m.id,
    created_at: new Date(m.created_at).toISOString(),
    kind: m.kind,
    action: `account/${m.kind}`,
    amount_micros: moved ? m.amount_micros : 0,
    status: m.status,
    price_cents: 0,
    charged_cents: 0,
    charged_micros: 0,
    refunded_cents: 0,
    payment_method: card ? 'card' : 'operator',
    provider: card ? 'stripe' : null,
    idempotency_key: null,
    duration_ms: null,
    error_code: m.kind === 'settlement' && m.status === 'failed' ? 'card_declined' : null,
    meta: {
      ...m.meta,
      memo: m.memo,
      ...(m.external_ref ? { reference: m.external_ref } : {}),
      ...(moved ? {} : { requested_micros: m.amount_micros }),
    },
  };
}

/**
 * What a row is, in words (`tollgate tx`, the dashboard): a call's action; an operator refund names the call it
 * gave back (`refund of txn_…: reason`); other money its memo.
 */
export function describeTransaction(t: TransactionView): string {
  if (t.kind === 'call') return t.action;
  const memo = typeof t.meta?.memo === 'string' ? t.meta.memo : '';
  if (t.kind === 'call_refund')
    return `refund of ${String(t.meta?.refund_of ?? '?')}${memo ? `: ${memo}` : ''}`;
  if (t.kind === 'adjustment') return `adjustment${memo ? `: ${memo}` : ''}`;
  return memo || t.kind;
}

/** Calls and movements merged, newest first. */
export async function accountHistory(
  ledger: LedgerReads,
  accountId: string,
  limit: number,
  range?: TimeRange,
): Promise<TransactionView[]> {
  const [calls, moves] = await Promise.all([
    ledger.transactions(accountId, limit, range),
    ledger.movements(accountId, limit, range),
  ]);
  const merged = [
    ...calls.map((c) => ({ at: c.created_at, view: transactionView(c) })),
    ...moves.map((m) => ({ at: m.created_at, view: movementView(m) })),
  ];
  merged.sort((a, b) => b.at - a.at || (a.view.id < b.view.id ? 1 : -1));
  return merged.slice(0, limit).map((x) => x.view);
}

/** Read-only view of one account, the only account access a handler gets. */
export function toAccountView(ledger: LedgerReads, accountId: string): AccountView {
  return {
    balance: () => ledger.balance(accountId),
    transactions: (limit) => accountHistory(ledger, accountId, limit),
  };
}
