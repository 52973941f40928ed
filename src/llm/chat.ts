import type { AccountPrincipal, Principal } from '../../auth/principal.js';
import { GatewayError, invalidInput, toGatewayError } from '../errors.js';
import { fingerprint } from '../lib/hash.js';
import { formatUsd } from '../lib/money.js';
import { stages } from '../lib/stage-timing.js';
import type { TraceCarrier } from '../ops/telemetry.js';
import { admit, type CallScope, openScope } from '../run/call-scope.js';
import { observeCall } from '../run/observe.js';
import { refuseAction } from '../run/spend-limits.js';
import type { MeteredAnswer, MeteredPayment, MeteredX402 } from '../run/x402/metered.js';
import { worstCaseMicros } from './cost.js';
import { type ChatRequest, normalizeChatRequest } from './request.js';
import {
  type Call,
  type Charged,
  finishJson,
  LLM_ACTION,
  settleStream,
  summarize,
  trailerOf,
  voidCall,
} from './settle.js';
import { pipeStream } from './stream.js';
import type {
  AttemptFailure,
  ChatOutcome,
  ChatStreamSink,
  MeteredDeps,
  ModelRoute,
  PricedModel,
} from './types.js';

// The metered execution path of the model router (docs/spec.md §4.9, §7, §8): the per-token sibling of
// execute(), on the same lifecycle (src/run/lifecycle.ts) and call scope (src/run/call-scope.ts).
//   1. validate the body (request rules) and resolve the model or tier to priced candidates
//   2. hold the worst case over the candidates, checking funds AND the caps (the account's per-UTC-day inference
//      cap, the key's daily and monthly limits) in one serialized write; a worst case above the key's maximum per
//      call is refused before it (lower max_tokens)
//   3. try the candidates in order while nothing has reached the caller (fallback)
//   4. capture the actual cost from the upstream's usage, never more than the hold; void when nothing was
//      produced or the call failed. Every call is itemized in the transaction record.

/**
 * x402 `upto` (src/run/x402/metered.ts, with viem and the x402 libraries), loaded on the first accountless call:
 * a gateway whose callers all have accounts never loads it.
 */
let metered: typeof import('../run/x402/metered.js') | undefined;

/** What the door hands over: the caller's signal, the response sink, and an x402 payment if one came. */
export interface ChatIo {
  signal: AbortSignal;
  sink: ChatStreamSink;
  /** The PAYMENT-SIGNATURE header value (an accountless caller paying with x402 `upto`). */
  payment?: unknown;
  /** The caller's W3C trace context (the request headers); read only when tracing. */
  trace?: TraceCarrier | undefined;
}

export type ChatRunner = typeof runChatCompletion;

export function runChatCompletion(
  deps: MeteredDeps,
  principal: Principal,
  rawBody: unknown,
  io: ChatIo,
): Promise<ChatOutcome> {
  const tel = deps.telemetry;
  if (tel === undefined) return guarded(deps, principal, rawBody, io);
  const payment =
    principal.kind !== 'anonymous' ? principal.kind : io.payment ? ('x402' as const) : ('anonymous' as const);
  const call = { action: LLM_ACTION, door: 'llm' as const, payment, trace: io.trace };
  return observeCall(
    tel,
    call,
    () => guarded(deps, principal, rawBody, io),
    (o) => o,
  );
}

async function guarded(
  deps: MeteredDeps,
  principal: Principal,
  rawBody: unknown,
  io: ChatIo,
): Promise<ChatOutcome> {
  try {
    return await deps.inflight.track(run(deps, principal, rawBody, io));
  } catch (e) {
    if (metered && e instanceof metered.MeteredRefusal) return { ok: false, streamed: false, ...e.answer };
    const error = toGatewayError(e);
    if (error.code === 'internal') deps.log.error({ err: e }, 'chat completion failed');
    return { ok: false, streamed: false, error };
  }
}

async function run(
  deps: MeteredDeps,
  principal: Principal,
  rawBody: unknown,
  io: ChatIo,
): Promise<ChatOutcome> {
  if (principal.kind === 'anonymous' && !deps.x402) {
    throw new GatewayError(
      'unauthorized',
      'The model router needs your API key: configure your OpenAI client with api_key "tg_sk_…" (sent as "Authorization: Bearer tg_sk_…").',
    );
  }
  // A key limited to some services or actions uses the router only if they include `llm`.
  refuseAction(principal, LLM_ACTION);
  const timer = stages();
  const req = normalizeChatRequest(rawBody);
  timer?.mark('validate (zod)');
  const route = await deps.router.resolve(req.model, io.signal);
  const worst = worstCase(deps, req, route);
  timer?.mark('route, worst case');
  let payer: AccountPrincipal;
  let payment: MeteredPayment | undefined;
  if (principal.kind === 'anonymous') {
    // Accountless: x402 `upto` authorizes this worst case, and the actual cost is settled after the call.
    metered ??= await import('../run/x402/metered.js');
    const start = await metered.startMetered(deps, deps.x402 as MeteredX402, {
      payment: io.payment,
      maxMicros: worst,
      timeoutMs: deps.limits.timeoutMs,
      fingerprint: fingerprint(rawBody),
    });
    if (start.kind === 'answer') return answered(start.answer);
    payer = start.principal;
    payment = start.payment;
  } else {
    payer = principal;
  }
  try {
    await admit(deps, payer);
    const scope = openScope(deps, io.signal, deps.limits.timeoutMs, 'The model did not answer in time');
    try {
      return await attempts(deps, req, route, worst, payer, payment, io, scope);
    } finally {
      scope.dispose();
    }
  } finally {
    // Whatever did not settle leaves the payment unused (a no-op once it was collected).
    await payment?.release();
  }
}

/** A metered x402 call that does not run: its challenge or refusal, or an answer whose settlement resumed. */
function answered(a: MeteredAnswer): ChatOutcome {
  if (a.delivered) return { ok: true, streamed: false, ...a.delivered };
  return { ok: false, streamed: false, ...a };
}

/** Steps 3-4: the candidates in order, until one answers or a failure cannot be helped by the next. */
async function attempts(
  deps: MeteredDeps,
  req: ChatRequest,
  route: ModelRoute,
  worst: number,
  principal: AccountPrincipal,
  payment: MeteredPayment | undefined,
  io: ChatIo,
  scope: CallScope,
): Promise<ChatOutcome> {
  const signal = scope.signal;
  const call = await admitCall(deps, principal, req, route, worst, payment);

  for (let i = 0; i < route.candidates.length; i++) {
    const c = route.candidates[i] as PricedModel;
    let failure: AttemptFailure;
    try {
      if (req.stream) {
        const r = await deps.router.stream(c.id, req.upstreamBody, {
          signal,
          firstByteTimeoutMs: deps.limits.firstByteTimeoutMs,
        });
        if (r.ok) {
          stages()?.mark('upstream to its first data event');
          io.sink.open({ 'x-tollgate-transaction-id': call.hold.callId });
          const end = await pipeStream(r, io.sink, {
            clientWantsUsage: req.clientWantsUsage,
            shutdown: deps.inflight.signal,
            timedOut: () => scope.timedOut,
            log: deps.log,
          });
          // The caller has every event before the capture commits: the charge never delays the answer.
          if (end.outcome === 'complete') await io.sink.flush();
          const charged = await settleStream(call, c, end);
          if (end.outcome === 'complete') await endStream(io.sink, charged, end.done);
          return { ok: true, streamed: true };
        }
        failure = r;
      } else {
        const r = await deps.router.complete(c.id, req.upstreamBody, {
          signal,
          timeoutMs: Math.max(1, deps.limits.timeoutMs - call.hold.elapsedMs()),
        });
        if (r.ok) return await finishJson(call, c, r.body);
        failure = r;
      }
    } catch (e) {
      // The attempt was aborted from our side: the caller left, the gateway is stopping, or time ran out.
      const error = toGatewayError(scope.abortError(e));
      await voidCall(call, error.code, c.id);
      return { ok: false, streamed: false, error };
    }
    call.attempts.push({ model: c.id, code: failure.error.code });
    // The vendor's own text was logged where the failure was classified (src/llm/upstream.ts).
    deps.log.warn({ txn: call.hold.callId, model: c.id, code: failure.error.code }, 'model attempt failed');
    if (!failure.fallback || i === route.candidates.length - 1) {
      await voidCall(call, failure.error.code, c.id);
      return { ok: false, streamed: false, error: summarize(failure.error, call) };
    }
  }
  throw new GatewayError('internal', 'No model was tried; nothing was charged.');
}

/**
 * A completed stream ends with its receipt (SSE comments, which clients ignore unless they look for them) and
 * `[DONE]`; an x402 payment that could not be collected ends it with an error event instead.
 */
async function endStream(sink: ChatStreamSink, charged: Charged, done: string | undefined): Promise<void> {
  if (sink.signal.aborted) return;
  if (charged.notSettled) return sink.fail(charged.notSettled.error);
  const trailer = trailerOf(charged);
  if (trailer || done) await sink.write(`${trailer}${done ?? ''}`);
  sink.end();
}

/** The worst case over every candidate (what is held, and for x402 authorized); refused above the daily cap. */
function worstCase(deps: MeteredDeps, req: ChatRequest, route: ModelRoute): number {
  const hold = Math.max(...route.candidates.map((c) => worstCaseMicros(c.price, req.prompt, req.maxTokens)));
  const cap = deps.limits.dailyCapMicros;
  if (hold > cap) {
    // Never admissible, today or tomorrow: a 429 with Retry-After would send the caller into a useless wait.
    throw invalidInput([
      {
        path: 'max_tokens',
        message:
          `this call's worst case, ${formatUsd(hold)} (prompt size and max_tokens at the model's prices), is ` +
          `above the daily inference cap of ${formatUsd(cap)}; lower max_tokens or shorten the conversation`,
      },
    ]);
  }
  return hold;
}

/** Step 2: the worst case held together with the daily cap in one serialized write (funded by x402 if paid). */
async function admitCall(
  deps: MeteredDeps,
  principal: AccountPrincipal,
  req: ChatRequest,
  route: ModelRoute,
  hold: number,
  payment: MeteredPayment | undefined,
): Promise<Call> {
  // x402: the facilitator verifies the authorization of exactly this worst case, which funds the hold.
  const funding = payment ? await payment.authorize() : undefined;
  const held = await deps.money.hold({
    principal,
    action: LLM_ACTION,
    priceMicros: hold,
    timeoutMs: deps.limits.timeoutMs,
    doorCap: { limitMicros: deps.limits.dailyCapMicros, name: 'Daily inference cap' },
    holdNote: "prompt size and max_tokens at the model's prices; lower max_tokens to hold less",
    meta: { requested: route.requested, stream: req.stream, max_tokens: req.maxTokens },
    funding,
  });
  // The router takes no idempotency key, so nothing can be replayed.
  if (held.kind !== 'held')
    throw new GatewayError('internal', 'The gateway hit an internal error; nothing was charged.');
  return { deps, req, route, hold: held.hold, principal, payment, attempts: [] };
}
