import { createApiKey } from '../../auth/api-keys.js';
import type { LedgerRecords } from '../ledger/types.js';
import { formatUsd, parseUsdToMicros } from '../lib/money.js';
import type { Lifecycle } from '../run/lifecycle.js';
import { NotFoundError, type Out, UsageError } from './output.js';

// Operator commands on accounts, keys and credit. They write through the same ledger as the server.

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
    `account ${acct.id} created (balance ${formatUsd(bal.balance_micros)})\nAPI key (shown once): ${key}`,
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
      : rows
          .map(
            (r) =>
              `${r.account_id}  ${(r.name ?? '').padEnd(20)} ${r.balance_usd.padStart(10)}  available ${r.available_usd}` +
              (r.credit_line_usd === '$0.00' ? '' : `  line ${r.credit_line_usd}, drawn ${r.drawn_usd}`) +
              (r.line_frozen ? `  FROZEN: ${r.line_frozen}` : ''),
          )
          .join('\n'),
  );
}

export async function keysCreate(ledger: LedgerRecords, out: Out, accountId: string, name?: string) {
  await mustExist(ledger, accountId);
  const { key, row } = await createApiKey(ledger, accountId, name);
  out.result(
    { account_id: accountId, key_id: row.id, api_key: key },
    `key ${row.id} for ${accountId}\nAPI key (shown once): ${key}`,
  );
}

export async function keysList(ledger: LedgerRecords, out: Out, accountId?: string) {
  const keys = await ledger.listApiKeys(accountId);
  const rows = keys.map((k) => ({
    key_id: k.id,
    account_id: k.account_id,
    prefix: k.prefix,
    name: k.name,
    created_at: new Date(k.created_at).toISOString(),
    revoked_at: k.revoked_at === null ? null : new Date(k.revoked_at).toISOString(),
  }));
  out.result(
    { keys: rows },
    rows.length === 0
      ? 'no keys'
      : rows
          .map(
            (k) =>
              `${k.key_id}  ${k.account_id}  ${k.prefix}  ${k.revoked_at ? `revoked ${k.revoked_at}` : 'active'}`,
          )
          .join('\n'),
  );
}

export async function keysRevoke(ledger: LedgerRecords, out: Out, keyId: string) {
  const revoked = await ledger.revokeApiKey(keyId);
  if (!revoked) throw new NotFoundError(`no active key ${keyId}`);
  out.result({ key_id: keyId, revoked: true }, `key ${keyId} revoked`);
}

export async function credit(
  ledger: LedgerRecords,
  money: Lifecycle,
  out: Out,
  accountId: string,
  amountUsd: string,
) {
  await mustExist(ledger, accountId);
  const micros = usd(amountUsd);
  if (micros === 0) throw new UsageError('the amount must be above zero');
  const bal = await money.credit(accountId, micros, 'operator', 'operator credit');
  out.result(
    { account_id: accountId, credited_usd: formatUsd(micros), ...balanceFields(bal) },
    `credited ${formatUsd(micros)} to ${accountId}; balance ${formatUsd(bal.balance_micros)}`,
  );
}

export async function balance(ledger: LedgerRecords, out: Out, accountId: string) {
  await mustExist(ledger, accountId);
  const bal = await ledger.balance(accountId);
  out.result(
    { account_id: accountId, ...balanceFields(bal) },
    `${accountId}: balance ${formatUsd(bal.balance_micros)}, held ${formatUsd(bal.held_micros)}, available ${formatUsd(bal.available_micros)}`,
  );
}

function balanceFields(b: { balance_micros: number; held_micros: number; available_micros: number }) {
  return {
    balance_usd: formatUsd(b.balance_micros),
    available_usd: formatUsd(b.available_micros),
    balance_micros: b.balance_micros,
    held_micros: b.held_micros,
    available_micros: b.available_micros,
  };
}

async function mustExist(ledger: LedgerRecords, accountId: string): Promise<void> {
  if (!(await ledger.getAccount(accountId))) throw new NotFoundError(`no account ${accountId}`);
}

function usd(s: string): number {
  try {
    return parseUsdToMicros(s);
  } catch {
    throw new UsageError(`not a USD amount: ${s} (use e.g. 5 or 0.25)`);
  }
}
