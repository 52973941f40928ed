import { createHash } from 'node:crypto';
import {
  balancesSql,
  ledgerRowsSql,
  totalsSql,
  UNRESOLVED_SQL,
  unbalancedSql,
} from '../../ledger/transfer.js';
import { formatUsd } from '../../lib/money.js';
import { CliError } from '../output.js';
import { plan } from './plan.js';
import type { TransferDb } from './sides.js';

// What an export checks on its source and an import on its target: nothing in flight, a ledger that holds
// together (every balance the sum of its entries, every entry an account's), its totals, every balance as one
// digest, and (import) a target without data.

/** Refuses a source with calls in flight: their outcome is not known yet. */
export async function refuseUnresolved(db: TransferDb): Promise<void> {
  const [r] = await db.all<Record<string, number>>(UNRESOLVED_SQL[db.backend]);
  const n = Math.max(r?.holds ?? 0, r?.calls ?? 0, r?.held ?? 0, r?.claims ?? 0);
  if (n === 0) return;
  throw new CliError(
    'calls_in_flight',
    `${n} call(s) are still in flight (held money no capture or void resolved: a gateway stopped without finishing them): start the gateway once and stop it, which voids what a dead process left, then export again`,
    1,
    { in_flight: r },
  );
}

/** Refuses a ledger whose balances are not the sums of its entries, or whose entries do not sum to zero. */
export async function refuseUnbalanced(db: TransferDb, where: string): Promise<void> {
  const off = await db.all<{ id: string; balance_micros: number | null; entries_micros: number | null }>(
    unbalancedSql(db.backend, 5),
  );
  const [t] = await db.all<{ s: number }>(
    'SELECT CAST(coalesce(sum(amount_micros), 0) AS bigint) AS s FROM entries',
  );
  const sum = t?.s ?? 0;
  if (off.length === 0 && sum === 0) return;
  const what = off.map((a) =>
    a.balance_micros === null
      ? `entries of ${a.id}, which is no account`
      : `${a.id}: balance ${formatUsd(a.balance_micros)}, entries ${formatUsd(a.entries_micros ?? 0)}`,
  );
  if (sum !== 0) what.push(`the entries sum to ${formatUsd(sum)}, not zero`);
  throw new CliError(
    'ledger_unbalanced',
    `the ledger of ${where} does not hold together: ${what.join('; ')}`,
    1,
    { accounts: off.map((a) => a.id) },
  );
}

export async function ledgerTotals(db: TransferDb): Promise<Record<string, number>> {
  const [row] = await db.all<Record<string, number | string>>(totalsSql(db.backend));
  // Counts come back as int8 (numbers) on PostgreSQL and integers on SQLite; anything else is a bug.
  return Object.fromEntries(Object.entries(row ?? {}).map(([k, v]) => [k, Number(v)]));
}

/** SHA-256 over "id:balance\n" of every account in id order: every balance, to the micro-dollar. */
export async function balancesDigest(db: TransferDb): Promise<string> {
  const hash = createHash('sha256');
  for await (const batch of db.stream(balancesSql(db.backend))) {
    for (const [id, balance] of batch) hash.update(`${String(id)}:${String(balance)}\n`);
  }
  return hash.digest('hex');
}

/** Rows in every carried table (the system accounts at zero do not count: every new ledger has them). */
export async function tableCounts(db: TransferDb): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const s of plan()) {
    const [r] = await db.all<{ n: number }>(`SELECT count(*) AS n FROM "${s.table}"`, s.file);
    out[s.table] = Number(r?.n ?? 0);
  }
  return out;
}

/** The tables of a target that already hold data, with their row counts (none: it is empty). */
export async function dataIn(db: TransferDb): Promise<string[]> {
  const counts = await tableCounts(db);
  const [accounts] = await db.all<{ n: number }>(ledgerRowsSql(db.backend));
  counts.accounts = Number(accounts?.n ?? 0);
  return Object.entries(counts)
    .filter(([, n]) => n > 0)
    .map(([t, n]) => `${t} (${n})`);
}
