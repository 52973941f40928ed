import { GatewayError } from '../errors.js';
import type { Hold } from '../run/lifecycle.js';
import {
  IMAGE_TOKEN_ALLOWANCE,
  readUsage,
  tokensCostMicros,
  typicalTokens,
  type Usage,
  usageCostMicros,
} from './cost.js';
import type { ChatRequest } from './request.js';
import type { StreamEnd } from './stream.js';
import type { ChatOutcome, MeteredDeps, ModelRoute, PricedModel } from './types.js';

// Step 4 of the metered path: settling a call. The capture is the actual cost, never more than the hold; a
// call that produced nothing, or failed, is voided. Every settlement itemizes the call in its transaction
// record (model served, tokens, cost in micro-USD, where the figure came from).

export interface Call {
  deps: MeteredDeps;
  req: ChatRequest;
  route: ModelRoute;
  hold: Hold;
  /** Failed attempts, for the record. */
  attempts: Array<{ model: string; code: string }>;
}

export async function finishJson(
  call: Call,
  c: PricedModel,
  body: Record<string, unknown>,
): Promise<ChatOutcome> {
  if (typeof body.model !== 'string') body.model = c.id;
  const usage = readUsage(body.usage);
  const out = outputOf(body);
  let charged = 0;
  if (usage ? usage.completionTokens > 0 : out.bytes > 0) {
    charged = await capture(call, c, body.model as string, usage, {
      completionTokens: typicalTokens(out.bytes),
      disconnected: false,
    });
  } else {
    await voidCall(call, 'no_output', c.id);
  }
  return {
    ok: true,
    streamed: false,
    body,
    headers: {
      'x-tollgate-transaction-id': call.hold.callId,
      'x-tollgate-charged-micros': String(charged),
    },
  };
}

/**
 * A stream that completed, or whose caller left, is charged for what it produced (exact usage when the final
 * chunk arrived, else the estimate); one that failed on the upstream's side, or produced nothing, is voided.
 */
export async function settleStream(call: Call, c: PricedModel, end: StreamEnd): Promise<void> {
  const m = end.meter;
  if (end.outcome === 'failed') return voidCall(call, end.error.code, c.id);
  if (!m.produced) return voidCall(call, end.outcome === 'complete' ? 'no_output' : 'cancelled', c.id);
  await capture(call, c, m.served ?? c.id, m.usage, {
    completionTokens: Math.max(m.outputChunks, typicalTokens(m.outputBytes)),
    disconnected: end.outcome === 'disconnected',
  });
}

/** Bytes of what a non-streamed completion produced (content, reasoning, tool calls). */
function outputOf(body: Record<string, unknown>): { bytes: number } {
  let bytes = 0;
  if (!Array.isArray(body.choices)) return { bytes };
  for (const ch of body.choices as Array<{ message?: Record<string, unknown> } | null>) {
    const m = ch?.message;
    if (!m || typeof m !== 'object') continue;
    if (typeof m.content === 'string') bytes += Buffer.byteLength(m.content);
    if (typeof m.reasoning === 'string') bytes += Buffer.byteLength(m.reasoning);
    if (Array.isArray(m.tool_calls) && m.tool_calls.length > 0)
      bytes += Buffer.byteLength(JSON.stringify(m.tool_calls));
  }
  return { bytes };
}

/**
 * Step 4: posts the actual cost, at most the hold. With usage: the upstream's reported cost, else tokens ×
 * price. Without usage (an aggregator that sends none, or a caller that left before the final chunk): tokens
 * estimated at the typical bytes per token, from the prompt and from the output actually forwarded.
 */
async function capture(
  call: Call,
  c: PricedModel,
  served: string,
  usage: Usage | undefined,
  est: { completionTokens: number; disconnected: boolean },
): Promise<number> {
  const { req } = call;
  const images = req.prompt.images;
  let cost: { micros: number; source: string };
  let tokens: { prompt: number; completion: number };
  if (usage) {
    cost = usageCostMicros(c.price, c.overridden ? { ...usage, costMicros: undefined } : usage, images);
    tokens = { prompt: usage.promptTokens, completion: usage.completionTokens };
  } else {
    tokens = {
      prompt: typicalTokens(req.prompt.bytes) + images * IMAGE_TOKEN_ALLOWANCE,
      completion: est.completionTokens,
    };
    cost = {
      micros: tokensCostMicros(c.price, tokens.prompt, tokens.completion, images),
      source: 'estimated',
    };
  }
  const meta = {
    ...baseMeta(call, served),
    prompt_tokens: tokens.prompt,
    completion_tokens: tokens.completion,
    cost_micros: cost.micros,
    usage_source: cost.source,
    ...(est.disconnected ? { client_disconnected: true } : {}),
  };
  call.deps.telemetry?.metrics.llmUsage(
    call.route.tier ?? 'none',
    tokens.prompt,
    tokens.completion,
    cost.micros,
  );
  // Never more than the hold: the lifecycle caps it (and says so in the log).
  return call.hold.capture(cost.micros, { provider: served, meta });
}

export function voidCall(call: Call, errorCode: string, model: string): Promise<void> {
  return call.hold.void(errorCode, { provider: model, meta: baseMeta(call, undefined) });
}

function baseMeta(call: Call, served: string | undefined): Record<string, unknown> {
  return {
    requested: call.route.requested,
    ...(call.route.tier ? { tier: call.route.tier } : {}),
    ...(served ? { model: served } : {}),
    stream: call.req.stream,
    max_tokens: call.req.maxTokens,
    hold_micros: call.hold.holdMicros,
    ...(call.attempts.length > 0 ? { failed_attempts: call.attempts } : {}),
  };
}

/** The last failure, saying how many models were tried (no vendor text: that stays in the log). */
export function summarize(error: GatewayError, call: Call): GatewayError {
  if (call.attempts.length < 2) return error;
  return new GatewayError(
    error.code,
    `All ${call.attempts.length} models of ${call.route.requested} failed (${call.attempts
      .map((a) => `${a.model}: ${a.code}`)
      .join(', ')}); nothing was charged.`,
    error.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: error.retryAfterSeconds },
  );
}
