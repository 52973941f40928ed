import { type AccountPrincipal, type Principal, principalRef } from '../../auth/principal.js';
import { GatewayError, invalidInput, toGatewayError } from '../errors.js';
import type { BeginResult } from '../ledger/types.js';
import { formatUsd } from '../lib/money.js';
import { HOLD_MARGIN_MS } from './execute.js';
import { worstCaseMicros } from './metered-cost.js';
import { type ChatRequest, normalizeChatRequest } from './metered-request.js';
import { type Call, finishJson, settleStream, summarize, voidCall } from './metered-settle.js';
import { pipeStream } from './metered-stream.js';
import type {
  AttemptFailure,
  ChatOutcome,
  ChatStreamSink,
  MeteredDeps,
  ModelRoute,
  PricedModel,
} from './metered-types.js';

export type { ChatOutcome, MeteredDeps, MeteredLimits } from './metered-types.js';

// The metered execution path of the model router (spec §4.9, §7, §8): the per-token sibling of execute().
//   1. validate the body (request rules) and resolve the model or tier to priced candidates
//   2. hold the worst case over the candidates, checking funds AND the per-UTC-day cap in one serialized write
//   3. try the candidates in order while nothing has reached the caller (fallback)
//   4. capture the actual cost from the upstream's usage, never more than the hold; void when nothing was
//      produced or the call failed. Every call is itemized in the transaction record.

export const LLM_ACTION = 'llm/chat.completions';

export async function runChatCompletion(
  deps: MeteredDeps,
  principal: Principal,
  rawBody: unknown,
  io: { signal: AbortSignal; sink: ChatStreamSink },
): Promise<ChatOutcome> {
  try {
    return await deps.inflight.track(run(deps, principal, rawBody, io));
  } catch (e) {
    const error = toGatewayError(e);
    if (error.code === 'internal') deps.log.error({ err: e }, 'chat completion failed');
    return { ok: false, streamed: false, error };
  }
}

async function run(
  deps: MeteredDeps,
  principal: Principal,
  rawBody: unknown,
  io: { signal: AbortSignal; sink: ChatStreamSink },
): Promise<ChatOutcome> {
  if (principal.kind === 'anonymous') {
    throw new GatewayError(
      'unauthorized',
      'The model router needs your API key: configure your OpenAI client with api_key "tg_sk_…" (sent as "Authorization: Bearer tg_sk_…").',
    );
  }
  deps.rateLimiter?.take(principal.accountId);
  const req = normalizeChatRequest(rawBody);
  if (!deps.inflight.accepting) {
    throw new GatewayError(
      'shutting_down',
      'The gateway is shutting down; retry shortly. Nothing was charged.',
      {
        retryAfterSeconds: 5,
      },
    );
  }
  const abort = callSignal([io.signal, deps.inflight.signal], deps.limits.timeoutMs);
  try {
    return await attempts(deps, req, principal, io, abort);
  } finally {
    abort.dispose();
  }
}

/** Steps 3-4: the candidates in order, until one answers or a failure cannot be helped by the next. */
async function attempts(
  deps: MeteredDeps,
  req: ChatRequest,
  principal: AccountPrincipal,
  io: { signal: AbortSignal; sink: ChatStreamSink },
  abort: CallSignal,
): Promise<ChatOutcome> {
  const signal = abort.signal;
  const route = await deps.router.resolve(req.model, signal);
  const call = await admit(deps, principal, req, route);

  for (let i = 0; i < route.candidates.length; i++) {
    const c = route.candidates[i] as PricedModel;
    const last = i === route.candidates.length - 1;
    let failure: AttemptFailure;
    try {
      if (req.stream) {
        const r = await deps.router.stream(c.id, req.upstreamBody, {
          signal,
          firstByteTimeoutMs: deps.limits.firstByteTimeoutMs,
        });
        if (r.ok) {
          io.sink.open({ 'x-tollgate-transaction-id': call.callId });
          const end = await pipeStream(r, io.sink, {
            clientWantsUsage: req.clientWantsUsage,
            shutdown: deps.inflight.signal,
            timedOut: abort.timedOut,
            log: deps.log,
          });
          await settleStream(call, c, end);
          return { ok: true, streamed: true };
        }
        failure = r;
      } else {
        const r = await deps.router.complete(c.id, req.upstreamBody, {
          signal,
          timeoutMs: Math.max(1, deps.limits.timeoutMs - (deps.clock.now() - call.started)),
        });
        if (r.ok) return await finishJson(call, c, r.body);
        failure = r;
      }
    } catch (e) {
      // The attempt was aborted from our side: the caller left, the gateway is stopping, or time ran out.
      const error = abortError(e, io.signal, deps.inflight.signal, abort.timedOut());
      await voidCall(call, error.code, c.id);
      return { ok: false, streamed: false, error };
    }
    call.attempts.push({ model: c.id, code: failure.error.code });
    // The vendor's own text was logged where the failure was classified (src/llm/upstream.ts).
    deps.log.warn({ txn: call.callId, model: c.id, code: failure.error.code }, 'model attempt failed');
    if (!failure.fallback || last) {
      await voidCall(call, failure.error.code, c.id);
      return { ok: false, streamed: false, error: summarize(failure.error, call) };
    }
  }
  throw new GatewayError('internal', 'No model was tried; nothing was charged.');
}

/** Step 2: the worst case over every candidate, held together with the daily cap in one serialized write. */
async function admit(
  deps: MeteredDeps,
  principal: AccountPrincipal,
  req: ChatRequest,
  route: ModelRoute,
): Promise<Call> {
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
  const started = deps.clock.now();
  const begun = await deps.ledger.begin({
    accountId: principal.accountId,
    action: LLM_ACTION,
    priceMicros: hold,
    holdMicros: hold,
    paymentMethod: principal.kind,
    principal: principalRef(principal),
    holdTtlMs: Math.max(deps.holdTtlMs, deps.limits.timeoutMs + HOLD_MARGIN_MS),
    dailyCap: { limitMicros: cap },
    meta: { requested: route.requested, stream: req.stream, max_tokens: req.maxTokens },
  });
  if (begun.kind !== 'started') throw refusal(begun, hold, principal, started);
  return { deps, req, route, callId: begun.callId, holdMicros: hold, started, attempts: [] };
}

function refusal(
  r: Exclude<BeginResult, { kind: 'started' }>,
  hold: number,
  p: AccountPrincipal,
  now: number,
) {
  switch (r.kind) {
    case 'insufficient':
      return new GatewayError(
        'insufficient_credit',
        `Insufficient credit: this call holds up to ${formatUsd(hold)} while it runs (prompt size and max_tokens ` +
          `at the model's prices) and ${formatUsd(r.availableMicros)} is available. Lower max_tokens, or ask the ` +
          `operator to add credit (\`tollgate credit ${p.accountId} <usd>\`). Nothing was charged.`,
        { details: { required_micros: r.requiredMicros, available_micros: r.availableMicros } },
      );
    case 'daily_cap': {
      const retryAfterSeconds = Math.max(1, Math.ceil((r.resetsAt - now) / 1000));
      return new GatewayError(
        'daily_cap_exceeded',
        `Daily inference cap of ${formatUsd(r.limitMicros)} reached (${formatUsd(r.spentMicros)} spent or held ` +
          `today); it resets at 00:00 UTC, in ${retryAfterSeconds}s. Nothing was charged.`,
        { retryAfterSeconds, details: { limit_micros: r.limitMicros, spent_micros: r.spentMicros } },
      );
    }
    case 'replay':
    case 'in_flight':
    case 'mismatch':
      // The router takes no idempotency key, so the ledger cannot answer these.
      return new GatewayError('internal', 'The gateway hit an internal error; nothing was charged.', {
        cause: r,
      });
  }
}

function abortError(e: unknown, client: AbortSignal, shutdown: AbortSignal, timedOut: boolean): GatewayError {
  if (e instanceof GatewayError) return e;
  if (client.aborted) return new GatewayError('cancelled', 'The call was cancelled; nothing was charged.');
  if (shutdown.aborted) {
    return new GatewayError('shutting_down', 'The gateway shut down during the call; nothing was charged.', {
      retryAfterSeconds: 5,
    });
  }
  if (timedOut) {
    return new GatewayError('upstream_timeout', 'The model did not answer in time; nothing was charged.');
  }
  return toGatewayError(e);
}

interface CallSignal {
  signal: AbortSignal;
  timedOut(): boolean;
  dispose(): void;
}

/**
 * One controller per call, aborted by the caller, by shutdown or by the call's deadline. Cheaper on the hot
 * path than AbortSignal.any + AbortSignal.timeout, and unlinked when the call ends (the shutdown signal lives
 * as long as the process, so its listeners must not pile up).
 */
function callSignal(sources: AbortSignal[], timeoutMs: number): CallSignal {
  const ctl = new AbortController();
  let timedOut = false;
  const onAbort = (e: Event) => ctl.abort((e.target as AbortSignal).reason);
  for (const s of sources) {
    if (s.aborted) ctl.abort(s.reason);
    else s.addEventListener('abort', onAbort, { once: true });
  }
  const timer = setTimeout(() => {
    timedOut = true;
    ctl.abort(new DOMException('The call timed out', 'TimeoutError'));
  }, timeoutMs);
  return {
    signal: ctl.signal,
    timedOut: () => timedOut,
    dispose() {
      clearTimeout(timer);
      for (const s of sources) s.removeEventListener('abort', onAbort);
    },
  };
}
