import { userInfo } from 'node:os';
import type { Config } from '../config/index.js';
import { GatewayError } from '../errors.js';
import { OPERATOR_PATHS } from '../http/operator-routes.js';
import type { LedgerRecords } from '../ledger/types.js';
import { formatUsd } from '../lib/money.js';
import type { Lifecycle } from '../run/lifecycle.js';
import {
  type AdjustAnswer,
  adjust,
  checkKey,
  checkReason,
  type OperatorDeps,
  parseUsdField,
  type RefundAnswer,
  refund,
} from '../run/operator-money.js';
import { accountLabel, findAccount } from './accounts.js';
import { findLocalGateway, lockHolder } from './local-gateway.js';
import { CliError, NotFoundError, type Out, UsageError } from './output.js';
import { usageOf } from './usage.js';

// `tollgate refund <transaction_id> [--usd X] --reason R` and `tollgate adjust <account> <±usd> --reason R`: the
// rules are src/run/operator-money.ts's, the money moves in the lifecycle. With a gateway running on a SQLite
// data dir both go to that gateway's operator endpoint (./local-gateway.ts): it alone sees its holds, which a
// debit must leave alone. Otherwise (no gateway, or PostgreSQL, whose holds are rows) the CLI writes the ledger.

export interface OperatorFlags {
  usd?: string | undefined;
  reason?: string | undefined;
  'idempotency-key'?: string | undefined;
}

interface Ctx {
  config: Config;
  ledger: LedgerRecords;
  money: Lifecycle;
  out: Out;
  /** The account's event log, told of what moved here (through a gateway, the gateway records it). */
  audit?: OperatorDeps['audit'];
}

export async function operatorCommand(
  ctx: Ctx,
  command: 'refund' | 'adjust',
  sub: string | undefined,
  rest: string[],
  flags: OperatorFlags,
): Promise<void> {
  const usage = usageOf(command);
  const flag = <T>(read: () => T): T => {
    try {
      return read();
    } catch (e) {
      // A field of the request is an option of the command line here.
      if (e instanceof GatewayError) throw new UsageError(usageMessage(e), usage);
      throw e;
    }
  };
  if (flags.reason === undefined) {
    throw new UsageError(
      'missing --reason: say why (it is recorded and shown in the account history)',
      usage,
    );
  }
  const reason = flag(() => checkReason(flags.reason, '--reason'));
  const key = flag(() => checkKey(flags['idempotency-key'], '--idempotency-key'));
  const by = `cli:${operatorName()}`;
  if (command === 'refund') {
    if (!sub) throw new UsageError('missing <transaction_id>', usage);
    const usd = flags.usd;
    const micros = usd === undefined ? undefined : flag(() => parseUsdField(usd, '--usd', false));
    const body = { transaction_id: sub, ...(usd !== undefined && { usd }), reason, operator: by };
    const answer = (await viaGateway(ctx.config, 'refund', body, key, false)) as RefundAnswer | undefined;
    const r = answer ?? (await local(() => refund(ctx, { transactionId: sub, micros, reason, key, by })));
    const acct = await ctx.ledger.getAccount(r.account_id);
    ctx.out.result(r, refundText(r, acct ? accountLabel(acct) : r.account_id));
    return;
  }
  if (!sub) throw new UsageError('missing <account>', usage);
  if (rest[0] === undefined) throw new UsageError('missing <±usd>', usage);
  const amount = rest[0];
  const micros = flag(() => parseUsdField(amount, '<±usd>', true));
  const acct = await findAccount(ctx.ledger, sub);
  const body = { account: acct.id, usd: amount, reason, operator: by };
  const answer = (await viaGateway(ctx.config, 'adjust', body, key, micros < 0)) as AdjustAnswer | undefined;
  const r = answer ?? (await local(() => adjust(ctx, { accountId: acct.id, micros, reason, key, by })));
  const what = r.duplicate
    ? `already adjusted by ${r.adjustment_id} (the same key): nothing moved again; `
    : '';
  ctx.out.result(
    r,
    `${what}adjusted ${accountLabel(acct)} by ${r.adjusted_usd} (${r.reason}); balance ${r.balance_usd}, available ${r.available_usd}`,
  );
}

function refundText(r: RefundAnswer, account: string): string {
  const left = `${formatUsd(r.left_micros)} of its ${formatUsd(r.charged_micros)} left to refund`;
  if (r.duplicate) {
    return `already refunded by ${r.refund_id}: ${r.refunded_usd} of ${r.transaction_id} back to ${account} for the same request; nothing moved again (${left})`;
  }
  return `refunded ${r.refunded_usd} of ${r.transaction_id} to ${account} (${r.refund_id}); ${left}; balance ${r.balance_usd}`;
}

/** The rules of src/run/operator-money.ts applied here; a refusal said as the CLI says it (cliError). */
async function local<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (e) {
    if (!(e instanceof GatewayError)) throw e;
    throw cliError(e.code, e.message, e.details);
  }
}

/**
 * A refusal with its code and details (exit 1); what is not there is exit 2, said as the CLI's other commands say
 * it (`no transaction txn_… in <database>`).
 */
function cliError(code: string, message: string, details?: Record<string, unknown>): CliError {
  if (code !== 'not_found') return new CliError(code, message, 1, details);
  const short = message.replace(/; nothing was \w+\.$/, '');
  return new NotFoundError(short.charAt(0).toLowerCase() + short.slice(1));
}

function usageMessage(e: GatewayError): string {
  const issues = (e.details?.issues ?? []) as Array<{ path: string; message: string }>;
  return issues.map((i) => `${i.path}: ${i.message}`).join('; ') || e.message;
}

/**
 * Sends the request to the gateway running on this SQLite data dir; undefined when there is none (or the database
 * is PostgreSQL): the CLI then writes the ledger itself. A debit is refused when a gateway holds the data dir but
 * cannot be reached, since its holds are in its memory.
 */
async function viaGateway(
  config: Config,
  command: 'refund' | 'adjust',
  body: Record<string, unknown>,
  key: string | undefined,
  debit: boolean,
): Promise<Record<string, unknown> | undefined> {
  if (config.database) return undefined;
  const pid = lockHolder(config.dataDir);
  // The gateway that holds the data dir's lock, as it announced itself (a stale file of a dead one is not it).
  const gw = pid === undefined ? undefined : findLocalGateway(config.dataDir, (p) => p === pid);
  if (!gw) {
    if (debit && pid !== undefined) {
      throw new CliError(
        'gateway_unreachable',
        `a gateway (pid ${pid}) runs on ${config.dataDir} but has not said where it listens (still starting?): its holds are in its memory, so no debit is made from here; nothing was adjusted. Retry once it listens.`,
      );
    }
    return undefined;
  }
  let res: Response;
  try {
    res = await fetch(`${gw.url}${OPERATOR_PATHS[command]}`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${gw.token}`,
        'content-type': 'application/json',
        ...(key !== undefined && { 'idempotency-key': key }),
      },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
  } catch (e) {
    throw new CliError(
      'gateway_unreachable',
      `the gateway running on ${config.dataDir} (pid ${gw.pid}, ${gw.url}) did not answer: ${(e as Error).message}; nothing was ${command === 'refund' ? 'refunded' : 'adjusted'} (it may have been, if it answered too late: tx shows it)`,
    );
  }
  const json = (await res.json().catch(() => ({}))) as {
    ok?: boolean;
    error?: { code?: string; message?: string; details?: Record<string, unknown> };
  } & Record<string, unknown>;
  if (res.ok && json.ok === true) {
    const { ok: _ok, ...answer } = json;
    return answer;
  }
  const err = json.error ?? {};
  throw cliError(
    err.code ?? 'gateway_error',
    err.message ?? `the gateway answered ${res.status}`,
    err.details,
  );
}

function operatorName(): string {
  try {
    return userInfo().username;
  } catch {
    return process.env.USER ?? process.env.LOGNAME ?? 'unknown';
  }
}
