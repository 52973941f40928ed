// The ledger's part of `tollgate export` / `tollgate import` (src/cli/transfer): which of its tables move between
// the backends, in which columns, and the SQL that reads and writes them where the backends keep money in
// different shapes. The portable form is SQLite's: one row per account with its whole balance. PostgreSQL keeps
// parts of a system account's balance elsewhere (src/pg/migrations/ledger.ts, ledger-lean.ts): revenue on the
// paying account's row (`accounts.revenue_micros`), funding and card money on `account_shards`, added up by the
// view `accounts_v`. An export reads balances through that view; an import writes each account's whole balance on
// its row and then moves revenue where PostgreSQL's own capture would have put it, so that every later capture,
// refund and the view keep agreeing.
//
// Every table of either backend's ledger is named here: carried (in this order: the referenced before the
// referencing), or backend-only with the reason it does not travel. test/contract/transfer-tables.test.ts fails
// on a table or column that is neither.

export type Backend = 'sqlite' | 'postgres';

export interface LedgerTable {
  table: string;
  columns: readonly string[];
  /** The primary key, for a stable order ('#': an integer column). */
  order: readonly string[];
  /** Upserted rather than inserted: the system accounts, which every new ledger already has (at zero). */
  upsert?: string;
  /**
   * Lists of text: a JSON list on SQLite (as the file carries them), a text[] on PostgreSQL (a call's cap
   * counters, `calls.cap_keys`).
   */
  textLists?: readonly string[];
}

export const LEDGER_TABLES: readonly LedgerTable[] = [
  {
    table: 'accounts',
    columns: [
      'id',
      'name',
      'kind',
      'balance_micros',
      'held_micros',
      'created_at',
      'credit_line_micros',
      'line_frozen_at',
      'line_frozen_reason',
    ],
    order: ['id'],
    upsert: 'id',
  },
  {
    table: 'api_keys',
    columns: [
      'id',
      'account_id',
      'hash',
      'prefix',
      'name',
      'created_at',
      'revoked_at',
      'max_call_micros',
      'daily_limit_micros',
      'monthly_limit_micros',
      'actions',
    ],
    order: ['id'],
  },
  {
    table: 'calls',
    columns: [
      'id',
      'account_id',
      'action',
      'price_micros',
      'hold_micros',
      'charged_micros',
      'refunded_micros',
      'operator_refunded_micros',
      'status',
      'error_code',
      'idempotency_key',
      'payment_method',
      'principal',
      'provider',
      'duration_ms',
      'created_at',
      'finished_at',
      'meta',
      'cap_keys',
    ],
    order: ['id'],
    textLists: ['cap_keys'],
  },
  {
    table: 'entries',
    columns: ['id', 'transfer_id', 'account_id', 'amount_micros', 'kind', 'call_id', 'memo', 'created_at'],
    order: ['#id'],
  },
  {
    table: 'movements',
    columns: [
      'id',
      'account_id',
      'kind',
      'amount_micros',
      'status',
      'memo',
      'external_ref',
      'created_at',
      'finished_at',
      'meta',
    ],
    order: ['id'],
  },
  {
    table: 'credit_line_grants',
    columns: ['account_id', 'card_fingerprint', 'micros', 'granted_at'],
    order: ['account_id'],
  },
  {
    table: 'idempotency_keys',
    columns: ['account_id', 'key', 'fingerprint', 'call_id', 'status', 'response', 'created_at'],
    order: ['account_id', 'key'],
  },
  // The spending caps' counters (src/ledger/spend-caps.ts): what each cap counted in its window, so a key's or
  // an app's day and month go on counting where they were.
  {
    table: 'spend_counters',
    columns: ['account_id', 'counter', 'spent_micros'],
    order: ['account_id', 'counter'],
  },
  { table: 'call_jobs', columns: ['account_id', 'handle', 'call_id'], order: ['account_id', 'handle'] },
];

/** What one backend's ledger has that does not travel, and why. */
export const LEDGER_BACKEND_ONLY: Record<
  Backend,
  { tables: Record<string, string>; columns: Record<string, string> }
> = {
  sqlite: {
    tables: {
      holds:
        'holds written as rows by an older release: a pending one stops the export (the next start voids it); a resolved one is history its call row keeps (hold, charge, status)',
    },
    columns: {},
  },
  postgres: {
    tables: {
      pending_holds: 'holds of calls in flight: any stops the export; an import writes none',
      account_shards:
        "parts of the system accounts' balances: exported inside each balance (accounts_v), imported onto the account rows",
    },
    columns: {
      'accounts.revenue_micros':
        'revenue paid by this account (a part of sys_revenue): recomputed on import from its charge and refund entries',
      'calls.replica_id': 'the replica that took the call, read by nothing once the call is resolved',
    },
  },
};

/** The accounts with their whole balances: PostgreSQL's view adds the parts kept elsewhere. */
export const ACCOUNTS_VIEW: Record<Backend, string> = { sqlite: 'accounts', postgres: 'accounts_v' };

/**
 * Calls still in flight, one count per kind of trace they leave: a pending hold (a row, or a call marked
 * pending), money reserved on an account, an idempotency key claimed. Any of them stops an export: its outcome is
 * not known yet, and the start of a gateway resolves them (it voids what dead processes left).
 */
export const UNRESOLVED_SQL: Record<Backend, string> = {
  sqlite: `SELECT
      (SELECT count(*) FROM holds WHERE status = 'pending') AS holds,
      (SELECT count(*) FROM calls WHERE status = 'pending') AS calls,
      (SELECT count(*) FROM accounts WHERE held_micros <> 0) AS held,
      (SELECT count(*) FROM idempotency_keys WHERE status <> 'done') AS claims`,
  postgres: `SELECT
      (SELECT count(*) FROM pending_holds) AS holds,
      (SELECT count(*) FROM calls WHERE status = 'pending') AS calls,
      (SELECT count(*) FROM accounts WHERE held_micros <> 0) AS held,
      (SELECT count(*) FROM idempotency_keys WHERE status <> 'done') AS claims`,
};

/**
 * After the rows are in (PostgreSQL): revenue moves from sys_revenue's row onto the accounts that paid it, as
 * tg_capture and refunds keep it (what an account paid: minus its charge and refund entries), sys_revenue's row
 * keeps the rest, so accounts_v still shows the balance imported; the entries' sequence continues after the
 * imported ids.
 */
export const AFTER_IMPORT_SQL: Record<Backend, readonly string[]> = {
  sqlite: [],
  postgres: [
    `UPDATE accounts a SET revenue_micros = r.paid
       FROM (SELECT account_id, -sum(amount_micros) AS paid FROM entries
              WHERE kind IN ('charge', 'refund') GROUP BY account_id) r
      WHERE a.id = r.account_id AND a.kind <> 'system'`,
    `UPDATE accounts SET balance_micros = balance_micros - (SELECT coalesce(sum(revenue_micros), 0) FROM accounts)
      WHERE id = 'sys_revenue'`,
    `SELECT setval(pg_get_serial_sequence('entries', 'id'), coalesce((SELECT max(id) FROM entries), 0) + 1, false)`,
  ],
};

const sum = (expr: string) => `CAST(coalesce(sum(${expr}), 0) AS bigint)`;

/**
 * The ledger's totals, the same SQL on both backends (one row of integers): what an export promises in its
 * manifest and an import must find again, to the micro-dollar.
 */
export function totalsSql(backend: Backend): string {
  const view = ACCOUNTS_VIEW[backend];
  const of = (kind: string) => sum(`CASE WHEN kind = '${kind}' THEN balance_micros END`);
  const system = (id: string) => sum(`CASE WHEN id = '${id}' THEN balance_micros END`);
  return `SELECT
      (SELECT count(*) FROM ${view}) AS accounts,
      (SELECT ${of('customer')} FROM ${view}) AS customer_balance_micros,
      (SELECT ${of('x402')} FROM ${view}) AS x402_balance_micros,
      (SELECT ${of('system')} FROM ${view}) AS system_balance_micros,
      (SELECT ${system('sys_revenue')} FROM ${view}) AS revenue_micros,
      (SELECT ${system('sys_funding')} FROM ${view}) AS funding_micros,
      (SELECT ${system('sys_card')} FROM ${view}) AS card_micros,
      (SELECT ${sum('credit_line_micros')} FROM ${view}) AS credit_line_micros,
      (SELECT count(*) FROM entries) AS entries,
      (SELECT ${sum('amount_micros')} FROM entries) AS entries_sum_micros,
      (SELECT ${sum('CASE WHEN amount_micros < 0 THEN amount_micros END')} FROM entries) AS entries_debit_micros,
      (SELECT count(*) FROM calls) AS calls,
      (SELECT ${sum('charged_micros')} FROM calls) AS charged_micros,
      (SELECT ${sum('refunded_micros')} FROM calls) AS refunded_micros,
      (SELECT count(*) FROM movements) AS movements,
      (SELECT ${sum('amount_micros')} FROM movements) AS movement_micros,
      (SELECT ${sum('spent_micros')} FROM spend_counters) AS counted_micros`;
}

/**
 * Accounts whose balance is not the sum of their entries, and entries of no account (at most `limit` of each):
 * none in a ledger that holds together.
 */
export function unbalancedSql(backend: Backend, limit: number): string {
  return `SELECT a.id AS id, a.balance_micros AS balance_micros, CAST(coalesce(e.s, 0) AS bigint) AS entries_micros
      FROM ${ACCOUNTS_VIEW[backend]} a
      LEFT JOIN (SELECT account_id, sum(amount_micros) AS s FROM entries GROUP BY account_id) e ON e.account_id = a.id
     WHERE a.balance_micros <> coalesce(e.s, 0)
    UNION ALL
    SELECT DISTINCT e.account_id, CAST(NULL AS bigint), CAST(NULL AS bigint) FROM entries e
     WHERE NOT EXISTS (SELECT 1 FROM accounts a WHERE a.id = e.account_id)
    LIMIT ${limit}`;
}

/** Every account and its whole balance, in id order (byte order on both: ids are COLLATE "C" on PostgreSQL). */
export function balancesSql(backend: Backend): string {
  return `SELECT id, balance_micros FROM ${ACCOUNTS_VIEW[backend]} ORDER BY id`;
}

/** What makes a ledger not empty: an account besides the system ones, or money on one of those. */
export function ledgerRowsSql(backend: Backend): string {
  return `SELECT count(*) AS n FROM ${ACCOUNTS_VIEW[backend]} WHERE kind <> 'system' OR balance_micros <> 0`;
}

/** The SELECT an export streams a ledger table with (accounts through the view on PostgreSQL). */
export function selectSql(t: LedgerTable, backend: Backend): string {
  const from = t.table === 'accounts' ? ACCOUNTS_VIEW[backend] : t.table;
  return `SELECT ${t.columns.map((c) => `"${c}"`).join(', ')} FROM ${from} ORDER BY ${orderBy(t.order, backend)}`;
}

/** ORDER BY the key columns in byte order on both backends ('#': integer, no collation). */
export function orderBy(order: readonly string[], backend: Backend): string {
  return order
    .map((c) =>
      c.startsWith('#') ? `"${c.slice(1)}"` : backend === 'postgres' ? `"${c}" COLLATE "C"` : `"${c}"`,
    )
    .join(', ');
}
