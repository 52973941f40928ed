import type { Logger } from 'pino';
import type { z } from 'zod';
import { type AccountPrincipal, type Principal, principalRef } from '../../auth/principal.js';
import { type Action, findAction } from '../../catalog/index.js';
import type { AccountView, HandlerContext, Services } from '../../tools/context.js';
import type { ActionId, HandlerDef, HandlerFn, Handlers } from '../../tools/types.js';
import { GatewayError, invalidInput, toGatewayError } from '../errors.js';
import type { Ledger, PaymentMethod } from '../ledger/types.js';
import { type LinkedSignal, linkSignals, untilAborted } from '../lib/abort.js';
import type { Clock } from '../lib/clock.js';
import { fingerprint } from '../lib/hash.js';
import { centsToMicros, microsToCents } from '../lib/money.js';
import { toAccountView } from './account-view.js';
import type { Inflight } from './inflight.js';
import { jobOwner } from './job-owner.js';
import type { RateLimiter } from './rate-limit.js';
import { beginRefusal, paymentRequired, unauthorized } from './refusals.js';
import { zodIssues } from './zod-issues.js';

// The one path every call takes, whatever door it came through (DESIGN.md "The one path a call takes").
// Only this module decides price, charge and ledger writes.

export interface RunDeps {
  ledger: Ledger;
  handlers: Handlers;
  services: Services;
  clock: Clock;
  log: Logger;
  inflight: Inflight;
  /** Minimum hold lifetime; a hold always outlives its action's timeout. */
  holdTtlMs: number;
  /** Per-account admission rate; absent in tests that do not exercise it. */
  rateLimiter?: RateLimiter;
}

export interface ExecuteOptions {
  /** Idempotency-Key header (HTTP) or `_meta["tollgate/idempotency-key"]` (MCP). */
  idempotencyKey?: string | undefined;
  /** Aborted by the door when the client goes away or cancels. */
  signal?: AbortSignal | undefined;
  onProgress?: ((progress: number, total?: number, message?: string) => void) | undefined;
  requestId?: string | undefined;
  /** A payment that comes with this call instead of from a balance (x402: src/run/x402-call.ts). */
  payment?: CallPayment | undefined;
}

/**
 * The hook through which a payment presented with the call (x402) pays for it. execute keeps deciding what is
 * charged; the payment only says whether money can be collected and collects it.
 */
export interface CallPayment {
  /**
   * After validation, before the hold: make sure the payment can pay (x402: facilitator verify, or settle first).
   * Throws a GatewayError to refuse. Returns the provisional funding credited with the hold (reversed by the
   * ledger if the call fails), or undefined when the money is already on the account.
   */
  authorize(): Promise<{ micros: number; memo: string } | undefined>;
  /**
   * After the handler succeeded, before the capture: collect the money (x402: settle). Throws a GatewayError
   * to fail the call uncharged (the result is withheld). Returns facts for the transaction record.
   */
  collect(envelope: Envelope): Promise<Record<string, unknown>>;
}

export type Outcome =
  | {
      ok: true;
      data: unknown;
      chargedCents: number;
      chargedMicros: number;
      transactionId: string | undefined;
      /** True when an earlier call with the same idempotency key was replayed. */
      replayed: boolean;
    }
  | { ok: false; error: GatewayError; transactionId?: string };

/** The envelope stored for replays and returned by every door (spec §2.1). */
export interface Envelope {
  ok: true;
  data: unknown;
  charged_cents: number;
  transaction_id?: string;
}

export const MAX_COST_FIELD = 'max_cost_cents';
const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;
/** A hold outlives its action's timeout by this much, so the sweeper never voids a call that is still running. */
export const HOLD_MARGIN_MS = 60_000;

export function isChargeable(outcome: Outcome): outcome is Extract<Outcome, { ok: true }> {
  return outcome.ok;
}

export async function execute(
  deps: RunDeps,
  actionId: string,
  rawInput: unknown,
  principal: Principal,
  opts: ExecuteOptions = {},
): Promise<Outcome> {
  try {
    // Tracked as a whole (hold → handler → capture/void), so a graceful shutdown waits for the ledger too.
    return await deps.inflight.track(run(deps, actionId, rawInput, principal, opts));
  } catch (e) {
    const error = toGatewayError(e);
    if (error.code === 'internal') deps.log.error({ err: e, action: actionId }, 'execute failed');
    return { ok: false, error };
  }
}

async function run(
  deps: RunDeps,
  actionId: string,
  rawInput: unknown,
  principal: Principal,
  opts: ExecuteOptions,
): Promise<Outcome> {
  // 1. look up the action
  const action = findAction(actionId);
  if (!action) {
    throw new GatewayError('not_found', `Unknown action "${actionId}". GET /api/run lists the catalog.`);
  }

  // 2. strip guard fields, validate
  if (rawInput === null || typeof rawInput !== 'object' || Array.isArray(rawInput)) {
    throw invalidInput([{ path: '', message: 'the request body must be a JSON object' }]);
  }
  const { [MAX_COST_FIELD]: maxCost, ...body } = rawInput as Record<string, unknown>;
  if (
    maxCost !== undefined &&
    (typeof maxCost !== 'number' || !Number.isSafeInteger(maxCost) || maxCost < 0)
  ) {
    throw invalidInput([{ path: MAX_COST_FIELD, message: 'must be a non-negative integer number of cents' }]);
  }
  const parsed = action.input.safeParse(body);
  if (!parsed.success) throw invalidInput(zodIssues(parsed.error));
  const input = parsed.data as Record<string, unknown>;

  // 3. quote, and the caller's ceiling
  if (maxCost !== undefined && action.priceCents > (maxCost as number)) {
    throw new GatewayError(
      'max_cost_exceeded',
      `This action costs ${action.priceCents} cents, above your max_cost_cents of ${maxCost}; nothing was charged.`,
      { details: { price_cents: action.priceCents, max_cost_cents: maxCost } },
    );
  }

  const handler = deps.handlers[action.id as ActionId] as HandlerFn<ActionId> | HandlerDef<ActionId>;
  const def: HandlerDef<ActionId> = typeof handler === 'function' ? { run: handler } : handler;

  // Who may call: refused before anything is reserved.
  if (action.access === 'paid' && principal.kind === 'anonymous') throw paymentRequired(action);
  if (action.access === 'account' && principal.kind === 'anonymous') throw unauthorized(action);

  const refusal = def.precheck?.(input as never, deps.services);
  if (refusal) throw refusal;
  if (principal.kind !== 'anonymous') deps.rateLimiter?.take(principal.accountId);
  if (!deps.inflight.accepting) {
    throw new GatewayError(
      'shutting_down',
      'The gateway is shutting down; retry shortly. Nothing was charged.',
      {
        retryAfterSeconds: 5,
      },
    );
  }

  if (action.access !== 'paid') {
    // Free actions: no hold, no transaction record, no idempotency (they change nothing billable).
    const data = await runHandler(deps, action, def, input, principal, undefined, opts);
    await refundIfJobFailed(deps, action, input, data, principal);
    return { ok: true, data, chargedCents: 0, chargedMicros: 0, transactionId: undefined, replayed: false };
  }
  return runPaid(deps, action, def, rawInput, input, principal as AccountPrincipal, opts);
}

async function runPaid(
  deps: RunDeps,
  action: Action,
  def: HandlerDef<ActionId>,
  rawInput: object,
  input: Record<string, unknown>,
  principal: AccountPrincipal,
  opts: ExecuteOptions,
): Promise<Outcome> {
  const key = opts.idempotencyKey;
  if (key !== undefined && !IDEMPOTENCY_KEY.test(key)) {
    throw invalidInput([{ path: 'Idempotency-Key', message: 'must be 1-255 printable ASCII characters' }]);
  }
  const priceMicros = centsToMicros(action.priceCents);
  if (principal.kind === 'x402' && !opts.payment) throw new Error('an x402 principal needs its payment');
  const funding = await opts.payment?.authorize();

  // 4 + 5. idempotency claim, funds check and hold: one serialized write
  const begun = await deps.ledger.begin({
    accountId: principal.accountId,
    action: action.id,
    priceMicros,
    holdMicros: priceMicros,
    paymentMethod: paymentMethodOf(principal),
    principal: principalRef(principal),
    idempotency:
      key === undefined
        ? undefined
        : { key, fingerprint: fingerprint({ action: action.id, body: rawInput }) },
    holdTtlMs: Math.max(deps.holdTtlMs, action.timeoutMs + HOLD_MARGIN_MS),
    funding,
    // The daily limit the account chose for this OAuth client at consent, checked with the hold.
    dailyCap:
      principal.kind === 'oauth' && principal.dailyLimitMicros !== undefined
        ? { limitMicros: principal.dailyLimitMicros, scope: principalRef(principal) }
        : undefined,
  });
  if (begun.kind === 'replay') {
    const env = begun.response as Envelope;
    return {
      ok: true,
      data: env.data,
      chargedCents: env.charged_cents,
      chargedMicros: centsToMicros(env.charged_cents),
      transactionId: env.transaction_id,
      replayed: true,
    };
  }
  if (begun.kind !== 'started') throw beginRefusal(begun, action, principal);

  // 6. run the handler
  const callId = begun.callId;
  const started = performance.now();
  const provider = def.provider?.(input as never, deps.services) ?? null;
  let data: unknown;
  try {
    data = await runHandler(deps, action, def, input, principal, callId, opts);
  } catch (e) {
    // 7. failure → void. Nothing is charged for a failed call, whatever failed.
    const error = toGatewayError(e);
    if (error.code === 'internal')
      deps.log.error({ err: e, action: action.id, txn: callId }, 'handler failed');
    await deps.ledger
      .void(callId, { errorCode: error.code, provider, durationMs: Math.round(performance.now() - started) })
      .catch((ve) =>
        deps.log.error({ err: ve, txn: callId }, 'void failed; the sweeper will release the hold'),
      );
    return { ok: false, error, transactionId: callId };
  }

  // 7. success → capture (≤ hold), storing the envelope for idempotent replays
  const envelope: Envelope = { ok: true, data, charged_cents: action.priceCents, transaction_id: callId };
  let meta: Record<string, unknown> | undefined;
  if (opts.payment) {
    try {
      meta = await opts.payment.collect(envelope);
    } catch (e) {
      // Not collected (or not known to be): nothing is charged and the result is withheld.
      const error = toGatewayError(e);
      const durationMs = Math.round(performance.now() - started);
      await deps.ledger
        .void(callId, { errorCode: error.code, provider, durationMs })
        .catch((ve) => deps.log.error({ err: ve, txn: callId }, 'void failed; the sweeper will release it'));
      return { ok: false, error, transactionId: callId };
    }
  }
  try {
    await deps.ledger.capture(callId, {
      amountMicros: priceMicros,
      provider,
      durationMs: Math.round(performance.now() - started),
      response: envelope,
      meta,
      jobHandle: jobHandleOf(action, data),
    });
  } catch (e) {
    // The hold was resolved elsewhere (expired and swept): the work is done but was not charged. Under-billing
    // is the safe direction; say so loudly and report the true charge, zero.
    deps.log.error({ err: e, txn: callId, action: action.id }, 'capture failed; call delivered uncharged');
    return { ok: true, data, chargedCents: 0, chargedMicros: 0, transactionId: callId, replayed: false };
  }
  await refundIfJobFailed(deps, action, input, data, principal);
  return {
    ok: true,
    data,
    chargedCents: microsToCents(priceMicros),
    chargedMicros: priceMicros,
    transactionId: callId,
    replayed: false,
  };
}

/** The handle a start action's output names (`jobHandle`), linked to its call at capture. */
function jobHandleOf(action: Action, data: unknown): string | undefined {
  if (!action.jobHandle) return undefined;
  const v = (data as Record<string, unknown>)[action.jobHandle];
  return typeof v === 'string' && v.length > 0 ? v : undefined;
}

/**
 * A poll that reports its job failed refunds the call that started the job (once; the ledger makes it
 * idempotent). The poll itself succeeded, so a refund error is logged, never turned into a failed poll.
 */
async function refundIfJobFailed(
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
  try {
    // Free polls may be anonymous (an x402 payer's bearer handle): the job's owner is then the handle's.
    const owner = await jobOwner(deps.services, principal, handle);
    if (owner === undefined) return;
    const r = await deps.ledger.refundJob(owner, handle, 'job_failed');
    if (r.refundedMicros > 0)
      deps.log.info({ txn: r.callId, micros: r.refundedMicros, handle }, 'refunded a failed job');
  } catch (err) {
    deps.log.error({ err, handle, action: action.id }, 'refund of a failed job did not go through');
  }
}

async function runHandler(
  deps: RunDeps,
  action: Action,
  def: HandlerDef<ActionId>,
  input: Record<string, unknown>,
  principal: Principal,
  callId: string | undefined,
  opts: ExecuteOptions,
): Promise<unknown> {
  const linked = linkSignals([deps.inflight.signal, opts.signal], action.timeoutMs);
  const signal = linked.signal;
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
    throw classifyAbort(e, linked, opts.signal, action);
  } finally {
    linked.dispose();
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

function classifyAbort(
  e: unknown,
  linked: LinkedSignal,
  callerSignal: AbortSignal | undefined,
  action: Action,
): unknown {
  if (e instanceof GatewayError || !linked.signal.aborted) return e;
  if (callerSignal?.aborted)
    return new GatewayError('cancelled', 'The call was cancelled; nothing was charged.');
  if (linked.timedOut) {
    return new GatewayError(
      'upstream_timeout',
      `The action did not finish within ${Math.round(action.timeoutMs / 1000)}s; nothing was charged.`,
    );
  }
  return new GatewayError('shutting_down', 'The gateway shut down during the call; nothing was charged.', {
    retryAfterSeconds: 5,
  });
}

function paymentMethodOf(p: AccountPrincipal): PaymentMethod {
  return p.kind;
}

const NO_ACCOUNT: AccountView = {
  balance: () => Promise.reject(new GatewayError('unauthorized', 'This action needs an account.')),
  transactions: () => Promise.reject(new GatewayError('unauthorized', 'This action needs an account.')),
};
