import { createApiKey } from '../../auth/api-keys.js';
import { OPERATOR_ACTOR, recordAuditEvent } from '../account/audit.js';
import type { StoreDb } from '../db/schema.js';
import type { KeyLimits, KeyUsage, LedgerRecords } from '../ledger/types.js';
import { nearest } from '../lib/did-you-mean.js';
import { formatUsd } from '../lib/money.js';
import {
  CLI_FIELDS,
  type LimitInput,
  LimitInputError,
  limitsText,
  parseLimitInput,
} from '../run/key-limit-input.js';
import { accountLabel, findAccount, minute } from './accounts.js';
import { NotFoundError, type Out, table, UsageError } from './output.js';
import { usageOf } from './usage.js';

// `tollgate keys create|list|revoke|limit`: API keys and their limits (docs/operator.md "Limits per API key").
// Limits are USD amounts (`5`, `0.25`) or `none`; allowed actions are services or action ids, comma-separated.

function limitsOf(input: LimitInput, command: 'create' | 'limit'): Partial<KeyLimits> {
  try {
    return parseLimitInput(input, CLI_FIELDS);
  } catch (e) {
    if (e instanceof LimitInputError) throw new UsageError(e.message, usageOf('keys', command));
    throw e;
  }
}

const usd = (micros: number | null) => (micros === null ? null : formatUsd(micros));

/** A key's limits as JSON shows them: USD text and exact micro-USD, null where there is none. */
function limitsJson(k: KeyLimits) {
  return {
    max_call_usd: usd(k.max_call_micros),
    daily_limit_usd: usd(k.daily_limit_micros),
    monthly_limit_usd: usd(k.monthly_limit_micros),
    actions: k.actions,
    max_call_micros: k.max_call_micros,
    daily_limit_micros: k.daily_limit_micros,
    monthly_limit_micros: k.monthly_limit_micros,
  };
}

export async function keysCreate(
  ledger: LedgerRecords,
  out: Out,
  account: string,
  opts: { name?: string | undefined } & LimitInput,
) {
  const limits = limitsOf(opts, 'create');
  const acct = await findAccount(ledger, account);
  const { key, row } = await createApiKey(ledger, acct.id, opts.name, limits);
  out.result(
    { account_id: acct.id, key_id: row.id, name: row.name, api_key: key, limits: limitsJson(row) },
    `key ${row.id}${row.name ? ` "${row.name}"` : ''} for ${accountLabel(acct)} (${limitsText(row)})\nAPI key (shown once): ${key}`,
  );
}

/**
 * `keys limit`: the change is the operator's, recorded on the account's event log as a dashboard change is
 * (docs/decisions.md "Teams × limits").
 */
export async function keysLimit(
  ledger: LedgerRecords,
  state: { stores: StoreDb },
  out: Out,
  keyId: string,
  input: LimitInput,
) {
  const changes = limitsOf(input, 'limit');
  if (Object.keys(changes).length === 0) {
    throw new UsageError('name at least one limit to change (none removes one)', usageOf('keys', 'limit'));
  }
  const row = await ledger.setApiKeyLimits(keyId, changes);
  if (!row) throw await noActiveKey(ledger, keyId);
  await recordAuditEvent(state, {
    accountId: row.account_id,
    actor: OPERATOR_ACTOR,
    action: 'key.limit_changed',
    subject: { id: row.id, name: row.prefix },
    detail: { summary: limitsText(row) },
  });
  out.result(
    { key_id: row.id, account_id: row.account_id, limits: limitsJson(row) },
    `key ${row.id}: ${limitsText(row)}`,
  );
}

function spentText(spent: number, limit: number | null): string {
  return limit === null ? formatUsd(spent) : `${formatUsd(spent)} of ${formatUsd(limit)}`;
}

export async function keysList(ledger: LedgerRecords, out: Out, account?: string) {
  const acct = account === undefined ? undefined : await findAccount(ledger, account);
  const accountIds = acct ? [acct.id] : [...new Set((await ledger.listApiKeys()).map((k) => k.account_id))];
  const keys: KeyUsage[] = (await Promise.all(accountIds.map((id) => ledger.keyUsage(id)))).flat();
  const rows = keys.map((k) => ({
    key_id: k.id,
    account_id: k.account_id,
    prefix: k.prefix,
    name: k.name,
    created_at: new Date(k.created_at).toISOString(),
    revoked_at: k.revoked_at === null ? null : new Date(k.revoked_at).toISOString(),
    limits: limitsJson(k),
    spent: {
      day: k.day,
      today_usd: formatUsd(k.spent_today_micros),
      today_micros: k.spent_today_micros,
      month: k.month,
      month_usd: formatUsd(k.spent_month_micros),
      month_micros: k.spent_month_micros,
    },
  }));
  out.result(
    { keys: rows },
    rows.length === 0
      ? 'no keys'
      : table(
          [
            'KEY',
            'ACCOUNT',
            'NAME',
            'PREFIX',
            'CREATED (UTC)',
            'STATUS',
            { header: 'MAX/CALL', right: true },
            { header: 'TODAY (UTC)', right: true },
            { header: 'THIS MONTH', right: true },
            'ACTIONS',
          ],
          keys.map((k) => [
            k.id,
            k.account_id,
            k.name ?? '',
            `${k.prefix}…`,
            minute(new Date(k.created_at).toISOString()),
            k.revoked_at === null ? 'active' : `revoked ${minute(new Date(k.revoked_at).toISOString())}`,
            k.max_call_micros === null ? '-' : formatUsd(k.max_call_micros),
            spentText(k.spent_today_micros, k.daily_limit_micros),
            spentText(k.spent_month_micros, k.monthly_limit_micros),
            k.actions === null ? 'all' : k.actions.join(','),
          ]),
        ),
  );
}

export async function keysRevoke(ledger: LedgerRecords, out: Out, keyId: string) {
  const revoked = await ledger.revokeApiKey(keyId);
  if (!revoked) throw await noActiveKey(ledger, keyId);
  out.result({ key_id: keyId, revoked: true }, `key ${keyId} revoked`);
}

async function noActiveKey(ledger: LedgerRecords, keyId: string): Promise<NotFoundError> {
  const active = (await ledger.listApiKeys()).flatMap((k) => (k.revoked_at === null ? [k.id] : []));
  const near = nearest(keyId, active);
  return new NotFoundError(`no active key ${keyId}${near ? ` (did you mean ${near}?)` : ''}`);
}
