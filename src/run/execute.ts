import type { Logger } from 'pino';
import type { AccountPrincipal, Principal } from '../../auth/principal.js';
import { type Action, actions, findAction } from '../../catalog/index.js';
import type { Services } from '../../tools/context.js';
import type { ActionId, HandlerDef, HandlerFn, Handlers } from '../../tools/types.js';
import { GatewayError, invalidInput, toGatewayError } from '../errors.js';
import type { LedgerRecords } from '../ledger/types.js';
import type { Clock } from '../lib/clock.js';
import { unknownName } from '../lib/did-you-mean.js';
import { fingerprint } from '../lib/hash.js';
import { centsPhrase, centsToMicros, microsToCents } from '../lib/money.js';
import { type PaymentLabel, type TraceCarrier, UNKNOWN_ACTION } from '../ops/telemetry.js';
import { admit, type ScopeDeps } from './call-scope.js';
import { extraFieldWarnings } from './extra-fields.js';
import type { Hold, Lifecycle } from './lifecycle.js';
import { observeCall } from './observe.js';
import {
  NO_RAILS,
  type PaymentParts,
  present,
  type RailPayment,
  type Rails,
  type Transport,
} from './rails.js';
import { type ReceiptFacts, type ReceiptSigner, signReceipt, signReceiptAsync } from './receipts.js';
import { unauthorized } from './refusals.js';
import { jobHandleOf, refundIfJobFailed, runHandler } from './run-handler.js';
import { refuseAction } from './spend-limits.js';
import { zodIssues } from './zod-issues.js';

let ids: string[] | undefined;
/** The catalog's action ids, for an unknown one's did-you-mean (only on that refusal, never on a call). */
function actionIds(): string[] {
  ids ??= actions.map((a) => a.id);
  return ids;
}

// The one path every catalog call takes, whatever door it came through (docs/architecture.md "The one path a
// call takes"): look up, validate, quote, admit, hold, run, then capture or void. The money itself moves only
// in the lifecycle (./lifecycle.ts).

export interface RunDeps extends ScopeDeps {
  /** Every hold, capture, void and refund goes through it. */
  money: Lifecycle;
  /** Records that move no money: account views, and x402 payers' accounts. */
  ledger: LedgerRecords;
  handlers: Handlers;
  services: Services;
  clock: Clock;
  log: Logger;
  /** Signs the receipt of every paid response (./receipts.ts); without it responses carry none. */
  receipts?: ReceiptSigner | undefined;
  /** How an anonymous caller of a paid action may pay (./rails.ts: x402, MPP); none: API keys only. */
  rails?: Rails | undefined;
}

export interface ExecuteOptions {
  /** Idempotency-Key header (HTTP) or `_meta["tollgate/idempotency-key"]` (MCP). */
  idempotencyKey?: string | undefined;
  /** Aborted by the door when the client goes away or cancels. */
  signal?: AbortSignal | undefined;
  /**
   * Instead of `signal`: the door's own controller (aborted when the client goes away), which becomes the call's
   * one controller — the deadline and shutdown abort it too (src/run/call-scope.ts), nothing else is allocated.
   */
  controller?: AbortController | undefined;
  onProgress?: ((progress: number, total?: number, message?: string) => void) | undefined;
  requestId?: string | undefined;
  /**
   * The door the call came through: metrics and traces observe the call (the gateway's own calls, with none, are
   * not), and a payment's challenge names the resource (the action's URL, or `mcp://tool/{name}`).
   */
  transport?: Transport | undefined;
  /** The caller's W3C trace context: the HTTP headers, or MCP `_meta` (SEP-414). Read only when tracing. */
  trace?: TraceCarrier | undefined;
  /** x402: the PAYMENT-SIGNATURE header value, or MCP `_meta["x402/payment"]` (read only for an anonymous caller). */
  payment?: unknown;
  /** MPP: `Authorization: Payment …`, or MCP `_meta["org.paymentauth/credential"]` (likewise). */
  credential?: unknown;
}

/**
 * The hook through which a payment presented with the call (a rail's: ./rails.ts) pays for it. execute keeps
 * deciding what is charged; the payment only says whether money can be collected and collects it.
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
      /** The signed receipt of a paid call (./receipts.ts): the doors send it as a header or in `_meta`. */
      receipt?: string | undefined;
      /** Extra fields a non-strict action passed through unchecked, named so a typo does not go unseen. */
      warnings?: string[];
      /** What the payment's rail adds to the response (its receipt; ./rails.ts). */
      parts?: PaymentParts | undefined;
    }
  | Failed;

/** A call that did not go through; a 402 carries the rails' challenges in `parts`. */
export interface Failed {
  ok: false;
  error: GatewayError;
  transactionId?: string;
  parts?: PaymentParts | undefined;
}

/** The envelope stored for replays and returned by every door (docs/spec.md §2.1). */
export interface Envelope {
  ok: true;
  data: unknown;
  charged_cents: number;
  transaction_id?: string;
  /** Extra fields passed through unchecked (non-strict actions), as the caller should know. */
  warnings?: string[];
}

export const MAX_COST_FIELD = 'max_cost_cents';
const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

/** The one entry of every call, whatever its door and however it is paid. */
export function execute(
  deps: RunDeps,
  actionId: string,
  rawInput: unknown,
  principal: Principal,
  opts: ExecuteOptions = {},
): Promise<Outcome> {
  const tel = deps.telemetry;
  const door = opts.transport;
  if (tel === undefined || door === undefined) return enter(deps, actionId, rawInput, principal, opts);
  // Metrics and traces see the whole call, a payment's refusal included.
  const action = findAction(actionId) ? actionId : UNKNOWN_ACTION;
  const call = { action, door, payment: paymentLabel(principal, opts), trace: opts.trace };
  return observeCall(tel, call, () => enter(deps, actionId, rawInput, principal, opts), identity);
}

const identity = (o: Outcome) => o;

function paymentLabel(principal: Principal, opts: ExecuteOptions): PaymentLabel {
  if (principal.kind !== 'anonymous') return principal.kind;
  return present(opts.payment) || present(opts.credential) ? 'x402' : 'anonymous';
}

async function enter(
  deps: RunDeps,
  actionId: string,
  rawInput: unknown,
  principal: Principal,
  opts: ExecuteOptions,
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
  const validating = deps.telemetry?.tracing?.step('validate');
  // 1. look up the action
  const action = findAction(actionId);
  if (!action) {
    throw new GatewayError(
      'not_found',
      unknownName('action', actionId, actionIds(), 'GET /api/run lists the catalog'),
    );
  }
  // An API key limited to some services or actions calls only those (free ones included).
  refuseAction(principal, action.id);

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
  if (!parsed.success) throw invalidInput(zodIssues(parsed.error, body));
  const input = parsed.data as Record<string, unknown>;
  const warnings = action.strict ? undefined : extraFieldWarnings(action, body);

  // 3. quote, and the caller's ceiling
  if (maxCost !== undefined && action.priceCents > (maxCost as number)) {
    throw new GatewayError(
      'max_cost_exceeded',
      `This action costs ${centsPhrase(action.priceCents)}, above your max_cost_cents of ${maxCost}; nothing was charged.`,
      { details: { price_cents: action.priceCents, max_cost_cents: maxCost } },
    );
  }

  validating?.end();

  const handler = deps.handlers[action.id as ActionId] as HandlerFn<ActionId> | HandlerDef<ActionId>;
  const def: HandlerDef<ActionId> = typeof handler === 'function' ? { run: handler } : handler;

  // Who may call: refused before anything is reserved. An anonymous caller of a paid action pays through a rail.
  if (principal.kind === 'anonymous' && action.access === 'account') throw unauthorized(action);
  if (principal.kind === 'anonymous' && action.access === 'paid') {
    return payAnonymously(deps, action, def, rawInput, input, opts, warnings);
  }
  return runAs(deps, action, def, rawInput, input, principal, opts, warnings, undefined);
}

/** The call paid by a payment the caller presented (./rails.ts), or the one 402 when none can pay. */
async function payAnonymously(
  deps: RunDeps,
  action: Action,
  def: HandlerDef<ActionId>,
  rawInput: object,
  input: Record<string, unknown>,
  opts: ExecuteOptions,
  warnings: string[] | undefined,
): Promise<Outcome> {
  const rails = deps.rails ?? NO_RAILS;
  const call = {
    action,
    body: rawInput,
    transport: opts.transport ?? 'http',
    payment: opts.payment,
    credential: opts.credential,
  };
  const rail = rails.of(call);
  if (!rail) return rails.refusal(action, call.transport);
  const paying = await rail.open(deps, call);
  if (!('finish' in paying)) return paying;
  let outcome: Outcome;
  try {
    // The payment's own idempotency (its nonce, voucher or token) keys the call: an Idempotency-Key is not used.
    const o = { ...opts, idempotencyKey: undefined };
    outcome = await runAs(deps, action, def, rawInput, input, paying.principal, o, warnings, paying);
  } catch (e) {
    outcome = { ok: false, error: toGatewayError(e) };
  }
  return paying.finish(outcome);
}

async function runAs(
  deps: RunDeps,
  action: Action,
  def: HandlerDef<ActionId>,
  rawInput: object,
  input: Record<string, unknown>,
  principal: Principal,
  opts: ExecuteOptions,
  warnings: string[] | undefined,
  payment: RailPayment | undefined,
): Promise<Outcome> {
  const refusal = def.precheck?.(input as never, deps.services);
  if (refusal) throw refusal;
  await admit(deps, principal);

  if (action.access !== 'paid') {
    // Free actions: no hold, no transaction record, no idempotency (they change nothing billable).
    const data = await runHandler(deps, action, def, input, principal, undefined, opts);
    await refundIfJobFailed(deps, action, input, data, principal);
    return withWarnings(
      { ok: true, data, chargedCents: 0, chargedMicros: 0, transactionId: undefined, replayed: false },
      warnings,
    );
  }
  const payer = principal as AccountPrincipal;
  return runPaid(deps, action, def, rawInput, input, payer, opts, warnings, payment);
}

async function runPaid(
  deps: RunDeps,
  action: Action,
  def: HandlerDef<ActionId>,
  rawInput: object,
  input: Record<string, unknown>,
  principal: AccountPrincipal,
  opts: ExecuteOptions,
  warnings: string[] | undefined,
  payment: CallPayment | undefined,
): Promise<Outcome> {
  const key = opts.idempotencyKey;
  if (key !== undefined && !IDEMPOTENCY_KEY.test(key)) {
    throw invalidInput([{ path: 'Idempotency-Key', message: 'must be 1-255 printable ASCII characters' }]);
  }
  const priceMicros = centsToMicros(action.priceCents);
  if (principal.kind === 'x402' && !payment) throw new Error('an x402 principal needs its payment');
  const funding = await payment?.authorize();

  // 4 + 5. the key's maximum per call, then idempotency claim, funds check, caps (the key's or OAuth app's) and
  // hold: one serialized write
  const held = await deps.money.hold({
    principal,
    action: action.id,
    priceMicros,
    timeoutMs: action.timeoutMs,
    idempotency:
      key === undefined
        ? undefined
        : { key, fingerprint: fingerprint({ action: action.id, body: rawInput }) },
    funding,
  });
  if (held.kind === 'replay')
    return replayed(deps, held.response as Envelope, { action: action.id, principal });
  const hold = held.hold;

  // 6. run the handler
  const provider = def.provider?.(input as never, deps.services) ?? null;
  let data: unknown;
  const tracing = deps.telemetry?.tracing;
  const upstream = tracing?.step('upstream');
  try {
    data = await (upstream
      ? tracing?.within(upstream, () => runHandler(deps, action, def, input, principal, hold.callId, opts))
      : runHandler(deps, action, def, input, principal, hold.callId, opts));
    upstream?.end();
  } catch (e) {
    upstream?.end(toGatewayError(e).code);
    return failed(deps, hold, provider, e, action);
  }

  // 7. success → collect a presented payment, then capture (≤ hold), storing the envelope for replays
  const envelope: Envelope = {
    ok: true,
    data,
    charged_cents: action.priceCents,
    transaction_id: hold.callId,
  };
  if (warnings) envelope.warnings = warnings;
  let meta: Record<string, unknown> | undefined;
  if (payment) {
    try {
      meta = await payment.collect(envelope);
    } catch (e) {
      // Not collected (or not known to be): nothing is charged and the result is withheld.
      return failed(deps, hold, provider, e, action);
    }
  }
  // The receipt is signed while the capture commits (its claims are the price, known already), and signed again
  // only if the ledger charged something else (nothing, when the capture could not be written). Under load it is
  // signed on libuv's pool, off the event loop that every call shares; a lone call signs it right here, after its
  // capture (which syncs on the event loop when alone: src/ledger/sqlite/group-commit.ts `alone`), because with
  // nothing else to run, the hand-off to the pool and the loop's wake-up would only add to what it waits for.
  const alone = deps.inflight.size <= 1;
  const receiptOf = (chargedMicros: number) => {
    const facts = {
      transactionId: hold.callId,
      action: action.id,
      chargedMicros,
      principal,
      collected: meta,
    };
    return alone ? Promise.resolve(signReceipt(deps, facts)) : signReceiptAsync(deps, facts);
  };
  let signing = alone ? undefined : receiptOf(priceMicros);
  const capturing = hold.capture(priceMicros, {
    provider,
    response: envelope,
    meta,
    jobHandle: jobHandleOf(action, data),
  });
  const charged = await capturing;
  if (charged === undefined) {
    // Not recorded (the database did not answer, or the hold was resolved elsewhere): the result goes out
    // uncharged, and without a transaction id or receipt, which the ledger could not vouch for.
    await refundIfJobFailed(deps, action, input, data, principal);
    return withWarnings(
      { ok: true, data, chargedCents: 0, chargedMicros: 0, transactionId: undefined, replayed: false },
      warnings,
    );
  }
  if (signing === undefined || charged !== priceMicros) signing = receiptOf(charged);
  const receipt = await signing;
  await refundIfJobFailed(deps, action, input, data, principal);
  return withWarnings(
    {
      ok: true,
      data,
      chargedCents: microsToCents(charged),
      chargedMicros: charged,
      transactionId: hold.callId,
      replayed: false,
      receipt,
    },
    warnings,
  );
}

/**
 * A paid call's stored envelope delivered again (an idempotent replay, a payment presented again, a settlement
 * confirmed late), with a receipt for the same transaction: `replayed` unless it is the first delivery.
 */
export function replayed(
  deps: Pick<RunDeps, 'receipts' | 'clock' | 'log'>,
  env: Envelope,
  facts: Omit<ReceiptFacts, 'transactionId' | 'chargedMicros'>,
  again = true,
): Extract<Outcome, { ok: true }> {
  const chargedMicros = centsToMicros(env.charged_cents);
  const transactionId = env.transaction_id;
  const receipt = transactionId
    ? signReceipt(deps, { ...facts, transactionId, chargedMicros, replayed: again })
    : undefined;
  const o = {
    ok: true as const,
    data: env.data,
    chargedCents: env.charged_cents,
    chargedMicros,
    transactionId,
  };
  return withWarnings({ ...o, replayed: again, receipt }, env.warnings);
}

function withWarnings<T extends Extract<Outcome, { ok: true }>>(o: T, warnings: string[] | undefined): T {
  if (warnings) o.warnings = warnings;
  return o;
}

/** 7. failure → void. Nothing is charged for a failed call, whatever failed. */
async function failed(
  deps: RunDeps,
  hold: Hold,
  provider: string | null,
  e: unknown,
  action: Action,
): Promise<Outcome> {
  const error = toGatewayError(e);
  if (error.code === 'internal')
    deps.log.error({ err: e, action: action.id, txn: hold.callId }, 'call failed');
  await hold.void(error.code, { provider });
  return { ok: false, error, transactionId: hold.callId };
}
