import type { AccountView, TransactionView } from '../../tools/context.js';
import type { CallRow, LedgerReads } from '../ledger/types.js';
import { microsToCents } from '../lib/money.js';

export function transactionView(c: CallRow): TransactionView {
  return {
    id: c.id,
    created_at: new Date(c.created_at).toISOString(),
    action: c.action,
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

/** Read-only view of one account, the only account access a handler gets. */
export function toAccountView(ledger: LedgerReads, accountId: string): AccountView {
  return {
    balance: () => ledger.balance(accountId),
    transactions: async (limit) => (await ledger.transactions(accountId, limit)).map(transactionView),
  };
}
