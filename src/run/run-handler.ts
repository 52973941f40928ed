import type { z } from 'zod';
import type { Principal } from '../../auth/principal.js';
import type { Action } from '../../catalog/index.js';
import type { AccountView, HandlerContext } from '../../tools/context.js';
import type { ActionId, HandlerDef } from '../../tools/types.js';
import { GatewayError } from '../errors.js';
import { untilAborted } from '../lib/abort.js';
import { toAccountView } from './account-view.js';
import { openScope } from './call-scope.js';
import type { ExecuteOptions, RunDeps } from './execute.js';
import { jobOwner } from './job-owner.js';

// Step 6 of the one path (./execute.ts): the handler run with its context, under the call's deadline and
// cancellation, its output checked against the action's schema; and what a job's result means for the call that
// started it.

/** The handle a start action's output names (`jobHandle`), linked to its call at capture. */
export function jobHandleOf(action: Action, data: unknown): string | undefined {
  if (!action.jobHandle) return undefined;
  const v = (data as Record<string, unknown>)[action.jobHandle];
  return typeof v === 'string' && v.length > 0 ? v : undefined;
}

/** A poll that reports its job failed refunds the call that started the job (once). */
export async function refundIfJobFailed(
  deps: RunDeps,
  action: Action,
  input: Record<string, unknown>,
  data: unknown,
  principal: Principal,
): Promise<void> {
  const rule = action.refundsStart;
  if (!rule?.failed(data as Record<string, unknown>)) return;
  const handle = input[rule.handleField];
  if (typeof handle !== 'string') return;
  // Free polls may be anonymous (an x402 payer's bearer handle): the job's owner is then the handle's.
  const owner = await jobOwner(deps.services, principal, handle).catch((err: unknown) => {
    deps.log.error({ err, handle, action: action.id }, 'the owner of a failed job could not be found');
    return undefined;
  });
  if (owner !== undefined) await deps.money.refundJob(owner, handle, 'job_failed');
}

export async function runHandler(
  deps: RunDeps,
  action: Action,
  def: HandlerDef<ActionId>,
  input: Record<string, unknown>,
  principal: Principal,
  callId: string | undefined,
  opts: ExecuteOptions,
): Promise<unknown> {
  const scope = openScope(
    deps,
    opts.controller ?? opts.signal,
    action.timeoutMs,
    `The action did not finish within ${Math.round(action.timeoutMs / 1000)}s`,
  );
  const signal = scope.signal;
  const accountId = principal.kind === 'anonymous' ? undefined : principal.accountId;
  const ctx: HandlerContext = {
    signal,
    now: () => deps.clock.now(),
    owner: accountId ?? 'anonymous',
    transactionId: callId ?? '',
    log: deps.log,
    progress: (p, total, message) => opts.onProgress?.(p, total, message),
    account: accountId ? toAccountView(deps.ledger, accountId) : NO_ACCOUNT,
    services: deps.services,
  };

  const work = def.run(input as never, ctx);
  let result: unknown;
  try {
    result = await untilAborted(work, signal);
  } catch (e) {
    throw scope.abortError(e);
  } finally {
    scope.dispose();
  }
  const out = (action.output as z.ZodType).safeParse(result);
  if (!out.success) {
    deps.log.error(
      { action: action.id, issues: out.error.issues.slice(0, 5) },
      'handler output failed its schema',
    );
    throw new GatewayError(
      'bad_response',
      'The upstream answered in an unexpected shape; nothing was charged.',
    );
  }
  return out.data;
}

const NO_ACCOUNT: AccountView = {
  balance: () => Promise.reject(new GatewayError('unauthorized', 'This action needs an account.')),
  transactions: () => Promise.reject(new GatewayError('unauthorized', 'This action needs an account.')),
};
