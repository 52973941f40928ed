import type { Billing } from '../billing/index.js';
import type { LedgerRecords, TimeRange } from '../ledger/types.js';
import { accountHistory, movementView, type TransactionView, transactionView } from '../run/account-view.js';
import { lastDays, usageChart } from './chart.js';
import type { AppView, DashboardScope, DashboardView, Filters } from './dashboard-view.js';
import { can } from './roles.js';

// What the dashboard shows, read from the ledger (balance, line, usage, history), billing (card, payments) and
// the OAuth grants (connected apps); and the transaction filters shared by the table and its CSV export.

export interface Apps {
  list(accountId: string): Promise<AppView[]>;
  setLimit(accountId: string, clientId: string, micros: number | undefined): Promise<void>;
  revoke(accountId: string, clientId: string): Promise<number>;
}

export interface DashboardDeps {
  ledger: LedgerRecords;
  billing: Billing | undefined;
  apps: Apps;
  now: () => number;
}

const DAY = 86_400_000;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
export const CHART_DAYS = 30;
export const TABLE_ROWS = 100;
export const CSV_ROWS = 10_000;
const PAYMENT_KINDS = new Set([
  'topup',
  'settlement',
  'refund',
  'refund_reversal',
  'dispute',
  'dispute_reversal',
  'line',
]);

/** The filters of a query string; anything unreadable is dropped (and said). */
export function parseFilters(q: Record<string, unknown>): { filters: Filters; error?: string } {
  const str = (v: unknown) => (typeof v === 'string' ? v.trim() : '');
  const filters: Filters = { from: '', to: '', kind: 'all', status: '' };
  const problems: string[] = [];
  for (const f of ['from', 'to'] as const) {
    const v = str(q[f]);
    if (v && (!DATE.test(v) || Number.isNaN(Date.parse(`${v}T00:00:00Z`))))
      problems.push(`“${f}” is not a date`);
    else filters[f] = v;
  }
  const kind = str(q.kind);
  if (kind === 'calls' || kind === 'payments') filters.kind = kind;
  const status = str(q.status);
  if (status === 'succeeded' || status === 'failed' || status === 'refunded' || status === 'pending') {
    filters.status = status;
  }
  return problems.length > 0 ? { filters, error: `Filter ignored: ${problems.join(', ')}.` } : { filters };
}

function rangeOf(f: Filters): TimeRange {
  return {
    fromMs: f.from ? Date.parse(`${f.from}T00:00:00Z`) : undefined,
    toMs: f.to ? Date.parse(`${f.to}T00:00:00Z`) + DAY : undefined,
  };
}

/**
 * The history matching the filters, newest first (calls, money without a call, or both). `principals`: a team
 * member's keys, whose calls only it is (no money movements: those are the account's).
 */
export async function filteredHistory(
  ledger: LedgerRecords,
  accountId: string,
  f: Filters,
  limit: number,
  principals?: readonly string[],
): Promise<TransactionView[]> {
  const range = rangeOf(f);
  // A status filter drops rows after the read: read more so the page still fills.
  const read = f.status ? Math.min(limit * 5, CSV_ROWS) : limit;
  let rows: TransactionView[];
  if (principals) {
    const [calls, refunds] = await Promise.all([
      f.kind === 'payments' ? [] : ledger.transactionsOf(accountId, principals, read, range),
      f.kind === 'calls' ? [] : refundsOfOwnCalls(ledger, accountId, principals, read, range),
    ]);
    rows = [...calls.map(transactionView), ...refunds].sort(
      (a, b) => b.created_at.localeCompare(a.created_at) || (a.id < b.id ? 1 : -1),
    );
  } else if (f.kind === 'calls')
    rows = (await ledger.transactions(accountId, read, range)).map(transactionView);
  else if (f.kind === 'payments') rows = (await ledger.movements(accountId, read, range)).map(movementView);
  else rows = await accountHistory(ledger, accountId, read, range);
  return (f.status ? rows.filter((r) => r.status === f.status) : rows).slice(0, limit);
}

/**
 * The operator's refunds of a team member's own calls (`call_refund` rows naming the call): a member sees what was
 * given back for its calls, never the account's other money. Looked for among the account's latest movements.
 */
async function refundsOfOwnCalls(
  ledger: LedgerRecords,
  accountId: string,
  principals: readonly string[],
  limit: number,
  range: TimeRange,
): Promise<TransactionView[]> {
  const moves = (await ledger.movements(accountId, limit, range)).filter((m) => m.kind === 'call_refund');
  const own = new Set(principals);
  const mine = new Map<string, boolean>();
  const out: TransactionView[] = [];
  for (const m of moves) {
    const id = String(m.meta?.refund_of ?? '');
    if (!mine.has(id)) {
      const principal = (await ledger.getCall(id))?.principal;
      mine.set(id, typeof principal === 'string' && own.has(principal));
    }
    if (mine.get(id)) out.push(movementView(m));
  }
  return out;
}

export async function dashboardData(
  d: DashboardDeps,
  accountId: string,
  extra: {
    csrf: string;
    scope: DashboardScope;
    signedInKey: string | null;
    query: Record<string, unknown>;
    flash?: string | undefined;
    error?: string | undefined;
    newKey?: DashboardView['newKey'];
  },
): Promise<DashboardView | undefined> {
  const account = await d.ledger.getAccount(accountId);
  if (!account) return undefined;
  const days = lastDays(d.now(), CHART_DAYS);
  const { filters, error: filterError } = parseFilters(extra.query);
  const { scope } = extra;
  const since = { fromMs: Date.parse(`${days[0]}T00:00:00Z`) };
  const [balance, line, usage, history, usageOfKeys, moves] = await Promise.all([
    d.ledger.balance(accountId),
    d.ledger.creditLine(accountId),
    scope.principals
      ? d.ledger.usageByDayOf(accountId, scope.principals, since)
      : d.ledger.usageByDay(accountId, since),
    filteredHistory(d.ledger, accountId, filters, TABLE_ROWS, scope.principals),
    d.ledger.keyUsage(accountId),
    d.ledger.movements(accountId, 50),
  ]);
  // What a role may not use is not read either.
  const b = can(scope.role, 'payments') ? d.billing : undefined;
  const spent = new Map(usageOfKeys.map((u) => [u.id, u]));
  const apps = can(scope.role, 'apps') ? await d.apps.list(accountId) : [];
  return {
    csrf: extra.csrf,
    scope,
    account,
    balance,
    line,
    chart: usageChart(days, usage, `Spend per UTC day by service, ${days[0]} to ${days.at(-1)}`),
    chartDays: days,
    history,
    filters,
    // The keys it sees, newest first, with their limits and what each spent today and this month.
    keys: scope.keys
      .slice()
      .reverse()
      .flatMap((k) => {
        const u = spent.get(k.id);
        return u ? [{ ...u, member_id: k.member_id }] : [];
      }),
    signedInKey: extra.signedInKey,
    // One row per app (a client connected twice has two grants, one limit).
    apps: [...new Map(apps.map((a) => [a.client_id, a])).values()],
    payments: b
      ? {
          enabled: true,
          card: await b.card(accountId),
          movements: moves.filter((m) => PAYMENT_KINDS.has(m.kind)),
          topUpMin: b.limits.topUpMinMicros,
          topUpMax: b.limits.topUpMaxMicros,
          welcomeLine: b.limits.welcomeLineMicros,
        }
      : { enabled: false },
    flash: extra.flash,
    error: extra.error ?? filterError,
    newKey: extra.newKey,
  };
}

const CSV_COLUMNS = [
  'id',
  'created_at',
  'kind',
  'action',
  'status',
  'amount_usd',
  'amount_micros',
  'price_cents',
  'charged_micros',
  'payment_method',
  'provider',
  'error_code',
  'idempotency_key',
  'memo',
] as const;
const NUMERIC_COLUMNS = new Set<string>(['amount_usd', 'amount_micros', 'price_cents', 'charged_micros']);

/** Micro-USD as a plain decimal (-0.35, 12.000001), from integers only. */
export function decimalUsd(micros: number): string {
  const abs = Math.abs(micros);
  const frac = String(abs % 1_000_000)
    .padStart(6, '0')
    .replace(/0+$/, '')
    .padEnd(2, '0');
  return `${micros < 0 ? '-' : ''}${Math.floor(abs / 1_000_000)}.${frac}`;
}

/** One CSV field: quoted when needed, and text that a spreadsheet would run as a formula is defused. */
export function csvField(v: unknown, numeric: boolean): string {
  if (v === null || v === undefined) return '';
  let s = String(v);
  if (!numeric && /^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

export function toCsv(rows: readonly TransactionView[]): string {
  const lines = [CSV_COLUMNS.join(',')];
  for (const t of rows) {
    const row = { ...t, amount_usd: decimalUsd(t.amount_micros), memo: t.meta?.memo ?? null };
    lines.push(CSV_COLUMNS.map((c) => csvField(row[c], NUMERIC_COLUMNS.has(c))).join(','));
  }
  return `${lines.join('\r\n')}\r\n`;
}
