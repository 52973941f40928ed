import type { SettleResponse } from '@x402/core/types';
import type { AccountPrincipal } from '../../auth/principal.js';
import { GatewayError } from '../errors.js';
import type { Hold } from '../run/lifecycle.js';
import { RECEIPT_HEADER, settlementOf, signReceipt } from '../run/receipts.js';
import { ROUTER_ACTION } from '../run/spend-limits.js';
import { encodeReceipt } from '../run/x402/codec.js';
import type { MeteredAnswer, MeteredPayment } from '../run/x402/metered.js';
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

/** The action of the model router's transaction records and receipts (what a key's allowed actions name). */
export const LLM_ACTION = ROUTER_ACTION;
/** The SSE comment that carries a stream's receipt (comments are ignored by SSE parsers and OpenAI clients). */
export const RECEIPT_SSE_COMMENT = 'tollgate-receipt';

// Step 4 of the metered path: settling a call. The capture is the actual cost, never more than the hold; a
// call that produced nothing, or failed, is voided. Every settlement itemizes the call in its transaction
// record (model served, tokens, cost in micro-USD, where the figure came from).

export interface Call {
  deps: MeteredDeps;
  req: ChatRequest;
  route: ModelRoute;
  hold: Hold;
  principal: AccountPrincipal;
  /** An x402 `upto` payment paying for the call: the cost is settled through it before the capture. */
  payment?: MeteredPayment | undefined;
  /** Failed attempts, for the record. */
  attempts: Array<{ model: string; code: string }>;
}

/** How a charge ended: what was posted, its receipt, and for x402 the settlement (or why there was none). */
export interface Charged {
  micros: number;
  receipt?: string | undefined;
  paymentResponse?: SettleResponse | undefined;
  /** x402: the cost could not be collected, so nothing was charged and the answer is withheld if it can be. */
  notSettled?: MeteredAnswer | undefined;
}

export async function finishJson(
  call: Call,
  c: PricedModel,
  body: Record<string, unknown>,
): Promise<ChatOutcome> {
  if (typeof body.model !== 'string') body.model = c.id;
  const usage = readUsage(body.usage);
  const out = outputOf(body);
  const headers: Record<string, string> = { 'x-tollgate-transaction-id': call.hold.callId };
  let charged: Charged = { micros: 0 };
  if (usage ? usage.completionTokens > 0 : out.bytes > 0) {
    charged = await capture(
      call,
      c,
      body.model as string,
      usage,
      { completionTokens: typicalTokens(out.bytes), disconnected: false },
      { body, headers },
    );
  } else {
    await voidCall(call, 'no_output', c.id);
  }
  // Not paid: the answer is withheld (it is kept with the payment when the outcome is only unknown).
  if (charged.notSettled) return { ok: false, streamed: false, ...charged.notSettled };
  headers['x-tollgate-charged-micros'] = String(charged.micros);
  if (charged.receipt) headers[RECEIPT_HEADER] = charged.receipt;
  if (charged.paymentResponse) headers['PAYMENT-RESPONSE'] = encodeReceipt(charged.paymentResponse);
  return { ok: true, streamed: false, body, headers };
}

/**
 * A stream that completed, or whose caller left, is charged for what it produced (exact usage when the final
 * chunk arrived, else the estimate); one that failed on the upstream's side, or produced nothing, is voided.
 */
export async function settleStream(call: Call, c: PricedModel, end: StreamEnd): Promise<Charged> {
  const m = end.meter;
  const none = { micros: 0 };
  if (end.outcome === 'failed') return voidCall(call, end.error.code, c.id).then(() => none);
  if (!m.produced) {
    await voidCall(call, end.outcome === 'complete' ? 'no_output' : 'cancelled', c.id);
    return none;
  }
  return capture(call, c, m.served ?? c.id, m.usage, {
    completionTokens: Math.max(m.outputChunks, typicalTokens(m.outputBytes)),
    disconnected: end.outcome === 'disconnected',
  });
}

/** The SSE comment lines that end a charged stream: its receipt, and for x402 its settlement. */
export function trailerOf(charged: Charged): string {
  let t = '';
  if (charged.receipt) t += `: ${RECEIPT_SSE_COMMENT} ${charged.receipt}\n\n`;
  if (charged.paymentResponse) t += `: x402-payment-response ${encodeReceipt(charged.paymentResponse)}\n\n`;
  return t;
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
  answer?: { body: Record<string, unknown>; headers: Record<string, string> },
): Promise<Charged> {
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
  // Never more than the hold (the lifecycle would cap it too): for x402 that is never more than authorized.
  const amount = Math.min(cost.micros, call.hold.holdMicros);
  let paymentResponse: SettleResponse | undefined;
  let x402: Record<string, unknown> = {};
  if (call.payment && amount > 0) {
    // The money is collected on chain first, exactly `amount`; only what was collected is captured.
    const collected = await call.payment.collect(amount, answer);
    if (collected.kind === 'not_settled') {
      await call.hold.void('payment_not_settled', { provider: served, meta });
      return { micros: 0, notSettled: collected.answer };
    }
    paymentResponse = collected.receipt;
    x402 = collected.meta;
  }
  call.deps.telemetry?.metrics.llmUsage(
    call.route.tier ?? 'none',
    tokens.prompt,
    tokens.completion,
    cost.micros,
  );
  const captured = await call.hold.capture(amount, { provider: served, meta: { ...meta, ...x402 } });
  // Not recorded (the database did not answer): uncharged, and no receipt the ledger could not vouch for.
  if (captured === undefined) return { micros: 0, paymentResponse };
  const receipt = signReceipt(call.deps, {
    transactionId: call.hold.callId,
    action: LLM_ACTION,
    chargedMicros: captured,
    principal: call.principal,
    x402: settlementOf(x402),
  });
  return { micros: captured, receipt, paymentResponse };
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
