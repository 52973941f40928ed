import { type FieldIssue, GatewayError, invalidInput } from '../errors.js';
import type { AccountRow, Balance, CallRow, LedgerReads, MovementRow } from '../ledger/types.js';
import { sha256Hex } from '../lib/hash.js';
import { formatUsd, parseUsdToMicros } from '../lib/money.js';
import type { Lifecycle } from './lifecycle.js';

// The operator's refunds and adjustments, whoever asks: the CLI (src/cli/operator.ts) and the operator's HTTP
// endpoints (src/http/operator-routes.ts) both come here, so the rules, the refusals and the answer are the same.
// Money moves only in the lifecycle; this module decides what may be asked and says why not, in words that say
// nothing moved. docs/decisions.md "Refunds and adjustments by the operator".

export interface OperatorDeps {
  ledger: LedgerReads;
  money: Lifecycle;
  /**
   * Told of each refund or adjustment that moved money (not of a repeated one): the account's event log records
   * it as the operator's (src/account/audit.ts, wired by the composition root). Never rejects.
   */
  audit?: ((e: OperatorMove) => Promise<void>) | undefined;
}

/** A refund or adjustment that moved money, for the account's event log. */
export interface OperatorMove {
  accountId: string;
  kind: 'call_refund' | 'adjustment';
  movementId: string;
  /** The call a refund gave back (its id). */
  callId?: string | undefined;
  micros: number;
  reason: string;
  by: string;
}

/** A reason is recorded with the movement and shown in the account's history. */
export const REASON_MAX = 500;
export const KEY_MAX = 200;

export interface RefundAsk {
  transactionId: string;
  /** What to give back; absent: all that is left. */
  micros?: number | undefined;
  reason: string;
  /** The operator's idempotency key; absent: one derived from the call, the amount and the reason. */
  key?: string | undefined;
  /** Who asks, for the record. */
  by: string;
}

export interface AdjustAsk {
  accountId: string;
  /** Signed, ≠ 0. */
  micros: number;
  reason: string;
  /** Optional: the adjustment is made once per key (a retried request is answered with the first). */
  key?: string | undefined;
  by: string;
}

/** What a refund did (the CLI's --json object; the HTTP endpoint's body with ok: true). */
export interface RefundAnswer extends Record<string, unknown> {
  refund_id: string;
  transaction_id: string;
  account_id: string;
  refunded_usd: string;
  refunded_micros: number;
  /** The call after the refund: what it was charged, refunded in all, and what is left to refund. */
  charged_micros: number;
  total_refunded_micros: number;
  left_micros: number;
  status: CallRow['status'];
  reason: string;
  by: unknown;
  /** True when this repeated an earlier refund: nothing moved again. */
  duplicate: boolean;
}

export interface AdjustAnswer extends Record<string, unknown> {
  adjustment_id: string;
  account_id: string;
  adjusted_usd: string;
  adjusted_micros: number;
  reason: string;
  by: unknown;
  duplicate: boolean;
}

/** "2", "-0.25", 1.5: USD with at most 6 decimals, as micro-USD; a field issue otherwise. */
export function parseUsdField(value: unknown, field: string, signed: boolean): number {
  const text = typeof value === 'number' && Number.isFinite(value) ? String(value) : value;
  const m = typeof text === 'string' ? /^\s*([+-]?)(.*)$/.exec(text) : null;
  let micros: number | undefined;
  if (m && (signed || m[1] === '')) {
    try {
      micros = parseUsdToMicros(m[2] as string) * (m[1] === '-' ? -1 : 1);
    } catch {}
  }
  const what = signed ? 'a signed USD amount such as 5 or -0.25' : 'a USD amount such as 5 or 0.25';
  if (micros === undefined) throw invalidInput([{ path: field, message: `must be ${what}` }]);
  if (micros === 0) throw invalidInput([{ path: field, message: 'must not be zero' }]);
  return micros;
}

/** The reason, trimmed; a field issue when absent, empty or too long. */
export function checkReason(reason: unknown, field = 'reason'): string {
  const r = typeof reason === 'string' ? reason.trim() : '';
  const issue = (message: string): FieldIssue[] => [{ path: field, message }];
  if (r === '')
    throw invalidInput(issue('required: say why (it is recorded and shown in the account history)'));
  if (r.length > REASON_MAX) throw invalidInput(issue(`at most ${REASON_MAX} characters`));
  return r;
}

export function checkKey(key: unknown, field = 'Idempotency-Key'): string | undefined {
  if (key === undefined) return undefined;
  if (typeof key !== 'string' || key.length === 0 || key.length > KEY_MAX || !/^[\x21-\x7e]+$/.test(key))
    throw invalidInput([{ path: field, message: `1-${KEY_MAX} printable characters without spaces` }]);
  return key;
}

/** An account by id or by its name (one customer of that name), for the HTTP endpoint. */
export async function resolveAccount(ledger: LedgerReads, ref: string): Promise<AccountRow> {
  const byId = await ledger.getAccount(ref);
  if (byId) return byId;
  const named = (await ledger.listAccounts('customer')).filter((a) => a.name === ref);
  if (named.length === 1) return named[0] as AccountRow;
  if (named.length > 1) {
    const ids = named.map((a) => a.id).join(', ');
    throw invalidInput([
      { path: 'account', message: `${named.length} accounts are named ${ref} (${ids}): use the id` },
    ]);
  }
  throw noAccount(ref);
}

const noAccount = (ref: string) =>
  new GatewayError('not_found', `No account ${ref}; nothing was adjusted.`, { details: { account: ref } });

const noCall = (id: string) =>
  new GatewayError('not_found', `No transaction ${id}; nothing was refunded.`, {
    details: { transaction_id: id },
  });
const refused = (field: string, message: string, details?: Record<string, unknown>) =>
  new GatewayError('invalid_input', message, { details: { issues: [{ path: field, message }], ...details } });

export async function refund(deps: OperatorDeps, ask: RefundAsk): Promise<RefundAnswer> {
  const id = ask.transactionId;
  const call = await deps.ledger.getCall(id);
  if (!call) {
    const movement = id.startsWith('mv_') ? await deps.ledger.getMovement(id) : undefined;
    if (movement) {
      throw refused(
        'transaction_id',
        `${id} is a ${movement.kind}, not a call: only calls are refunded (use adjust); nothing was refunded.`,
      );
    }
    throw noCall(id);
  }
  const account = await deps.ledger.getAccount(call.account_id);
  if (account?.kind !== 'customer') {
    // docs/decisions.md: an accountless payer's money settled on chain (x402) or with its card (MPP); the ledger
    // cannot send it back, and a credit on its payer account would be money nobody can spend.
    throw refused(
      'transaction_id',
      `${id} was paid without an account (${call.principal ?? call.payment_method}): that money settled outside this ledger, so refund it the way it came (on chain from the pay-to wallet); nothing was refunded.`,
    );
  }
  const key =
    ask.key === undefined
      ? `auto:${sha256Hex(`${ask.micros ?? 'rest'}\n${ask.reason}`).slice(0, 32)}`
      : `key:${ask.key}`;
  const r = await deps.money.refundCharge({
    callId: id,
    micros: ask.micros,
    ref: `${id}:${key}`,
    reason: ask.reason,
    by: ask.by,
  });
  switch (r.kind) {
    case 'refunded':
      await deps.audit?.({ ...moveOf(r.movement, ask.by), kind: 'call_refund', callId: id });
      return refundAnswer(r.movement, r.call, r.balance, false);
    case 'duplicate':
      return refundAnswer(r.movement, r.call, r.balance, true);
    case 'mismatch':
      throw new GatewayError(
        'idempotency_mismatch',
        `The idempotency key ${ask.key ?? ''} was used for another refund (${r.movementId}); nothing was refunded.`,
        { details: { refund_id: r.movementId } },
      );
    case 'unknown_call':
      throw noCall(id);
    case 'not_refundable':
      throw refused('transaction_id', `${notRefundable(r.call)}; nothing was refunded.`, {
        status: r.call.status,
      });
    case 'exceeds':
      throw refused(
        'usd',
        `Only ${formatUsd(r.leftMicros)} of the ${formatUsd(r.call.charged_micros)} ${id} was charged is left to refund, less than the ${formatUsd(ask.micros ?? 0)} asked; nothing was refunded.`,
        { left_micros: r.leftMicros, charged_micros: r.call.charged_micros },
      );
  }
}

function notRefundable(c: CallRow): string {
  if (c.status === 'pending') return `${c.id} is still running: nothing is charged yet`;
  if (c.status === 'failed') return `${c.id} failed (${c.error_code ?? 'error'}): it was not charged`;
  if (c.charged_micros === 0) return `${c.id} was charged nothing`;
  return `${c.id} is refunded in full already (${formatUsd(c.refunded_micros)})`;
}

function refundAnswer(m: MovementRow, c: CallRow, b: Balance, duplicate: boolean): RefundAnswer {
  return {
    refund_id: m.id,
    transaction_id: c.id,
    account_id: c.account_id,
    refunded_usd: formatUsd(m.amount_micros),
    refunded_micros: m.amount_micros,
    charged_micros: c.charged_micros,
    total_refunded_micros: c.refunded_micros,
    left_micros: c.charged_micros - c.refunded_micros,
    status: c.status,
    reason: m.memo ?? '',
    by: m.meta?.by ?? null,
    created_at: new Date(m.created_at).toISOString(),
    duplicate,
    ...balanceFields(b),
  };
}

export async function adjust(deps: OperatorDeps, ask: AdjustAsk): Promise<AdjustAnswer> {
  const account = await deps.ledger.getAccount(ask.accountId);
  if (!account) throw noAccount(ask.accountId);
  if (account.kind !== 'customer')
    throw refused(
      'account',
      `${account.id} is not a customer account (${account.kind}); only their balances are adjusted.`,
    );
  const r = await deps.money.adjust({
    accountId: account.id,
    micros: ask.micros,
    reason: ask.reason,
    by: ask.by,
    ref: ask.key === undefined ? undefined : `${account.id}:key:${ask.key}`,
  });
  if (r.kind === 'adjusted') await deps.audit?.({ ...moveOf(r.movement, ask.by), kind: 'adjustment' });
  switch (r.kind) {
    case 'adjusted':
    case 'duplicate':
      return {
        adjustment_id: r.movement.id,
        account_id: account.id,
        adjusted_usd: formatUsd(r.movement.amount_micros),
        adjusted_micros: r.movement.amount_micros,
        reason: r.movement.memo ?? '',
        by: r.movement.meta?.by ?? null,
        created_at: new Date(r.movement.created_at).toISOString(),
        duplicate: r.kind === 'duplicate',
        ...balanceFields(r.balance),
      };
    case 'mismatch':
      throw new GatewayError(
        'idempotency_mismatch',
        `The idempotency key ${ask.key ?? ''} was used for another adjustment (${r.movementId}); nothing was adjusted.`,
        { details: { adjustment_id: r.movementId } },
      );
    case 'insufficient': {
      const b = r.balance;
      const free = Math.max(0, b.available_micros);
      throw new GatewayError(
        'insufficient_credit',
        `${account.id} has ${formatUsd(free)} free of its pending holds (balance ${formatUsd(b.balance_micros)}, held ${formatUsd(b.held_micros)}, usable credit line included): a debit of ${formatUsd(-ask.micros)} would take money its calls in flight need. At most ${formatUsd(free)} can be taken now; nothing was adjusted.`,
        { details: balanceFields(b) },
      );
    }
  }
}

export function balanceFields(b: Balance) {
  return {
    balance_usd: formatUsd(b.balance_micros),
    available_usd: formatUsd(b.available_micros),
    balance_micros: b.balance_micros,
    held_micros: b.held_micros,
    available_micros: b.available_micros,
  };
}

function moveOf(m: MovementRow, by: string) {
  return { accountId: m.account_id, movementId: m.id, micros: m.amount_micros, reason: m.memo ?? '', by };
}
