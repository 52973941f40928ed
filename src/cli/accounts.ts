import { createApiKey } from '../../auth/api-keys.js';
import type { AccountRow, LedgerRecords } from '../ledger/types.js';
import { nearest } from '../lib/did-you-mean.js';
import { formatUsd, parseUsdToMicros } from '../lib/money.js';
import type { Lifecycle } from '../run/lifecycle.js';
import { balanceFields } from '../run/operator-money.js';
import { CliError, NotFoundError, type Out, table, UsageError } from './output.js';

// Operator commands on accounts, keys and credit. They write through the same ledger as the server. An account is
// named by its id or by its name (`alice`): an id wins; a name must belong to exactly one account.

export async function findAccount(ledger: LedgerRecords, ref: string): Promise<AccountRow> {
  const byId = await ledger.getAccount(ref);
  if (byId) return byId;
  const all = await ledger.listAccounts('customer');
  const named = all.filter((a) => a.name === ref);
  if (named.length === 1) return named[0] as AccountRow;
  if (named.length > 1) {
    throw new CliError(
      'ambiguous_account',
      `${named.length} accounts are named ${ref} (${named.map((a) => a.id).join(', ')}): use the id`,
      2,
    );
  }
  const near = nearest(ref, [...all.map((a) => a.id), ...all.flatMap((a) => (a.name ? [a.name] : []))]);
  throw new NotFoundError(`no account ${ref}${near ? ` (did you mean ${near}?)` : ''}`);
}

/** `acct_x (alice)` */
export function accountLabel(a: AccountRow): string {
  return a.name ? `${a.id} (${a.name})` : a.id;
}

export async function accountsCreate(
  ledger: LedgerRecords,
  money: Lifecycle,
  out: Out,
  opts: { name?: string; creditUsd?: string },
) {
  const acct = await ledger.createAccount({ name: opts.name ?? null });
  if (opts.creditUsd !== undefined) {
    await money.credit(acct.id, usd(opts.creditUsd), 'operator', 'initial credit');
  }
  const { key, row } = await createApiKey(ledger, acct.id, 'default');
  const bal = await ledger.balance(acct.id);
  out.result(
    { account_id: acct.id, api_key: key, key_id: row.id, balance_usd: formatUsd(bal.balance_micros) },
    `account ${accountLabel(acct)} created (balance ${formatUsd(bal.balance_micros)})\nAPI key (shown once): ${key}`,
  );
}

/** Every customer account with its money: balance, what is available, its credit line and what is drawn. */
export async function accountsList(ledger: LedgerRecords, out: Out) {
  const rows = await Promise.all(
    (await ledger.listAccounts('customer')).map(async (a) => {
      const [bal, line] = await Promise.all([ledger.balance(a.id), ledger.creditLine(a.id)]);
      return {
        account_id: a.id,
        name: a.name,
        created_at: new Date(a.created_at).toISOString(),
        ...balanceFields(bal),
        credit_line_usd: formatUsd(line.limit_micros),
        drawn_usd: formatUsd(line.drawn_micros),
        line_frozen: line.frozen?.reason ?? null,
      };
    }),
  );
  out.result(
    { accounts: rows },
    rows.length === 0
      ? 'no accounts'
      : table(
          [
            'ACCOUNT',
            'NAME',
            { header: 'BALANCE', right: true },
            { header: 'AVAILABLE', right: true },
            { header: 'CREDIT LINE', right: true },
            { header: 'DRAWN', right: true },
            'NOTE',
          ],
          rows.map((r) => [
            r.account_id,
            r.name ?? '',
            r.balance_usd,
            r.available_usd,
            r.credit_line_usd,
            r.drawn_usd,
            r.line_frozen ? `line frozen: ${r.line_frozen}` : '',
          ]),
        ),
  );
}

export async function credit(
  ledger: LedgerRecords,
  money: Lifecycle,
  out: Out,
  account: string,
  amountUsd: string,
) {
  const acct = await findAccount(ledger, account);
  const micros = usd(amountUsd);
  if (micros === 0) throw new UsageError('the amount must be above zero', 'tollgate credit <account> <usd>');
  const bal = await money.credit(acct.id, micros, 'operator', 'operator credit');
  out.result(
    { account_id: acct.id, credited_usd: formatUsd(micros), ...balanceFields(bal) },
    `credited ${formatUsd(micros)} to ${accountLabel(acct)}; balance ${formatUsd(bal.balance_micros)}`,
  );
}

export async function balance(ledger: LedgerRecords, out: Out, account: string) {
  const acct = await findAccount(ledger, account);
  const bal = await ledger.balance(acct.id);
  out.result(
    { account_id: acct.id, ...balanceFields(bal) },
    `${accountLabel(acct)}: balance ${formatUsd(bal.balance_micros)}, held ${formatUsd(bal.held_micros)}, available ${formatUsd(bal.available_micros)}`,
  );
}

/** `2025-01-02T03:04:05.678Z` → `2025-01-02 03:04`. */
export function minute(iso: string): string {
  return iso.slice(0, 16).replace('T', ' ');
}

function usd(s: string): number {
  try {
    return parseUsdToMicros(s);
  } catch {
    throw new UsageError(`not a USD amount: ${s} (use e.g. 5 or 0.25)`);
  }
}
