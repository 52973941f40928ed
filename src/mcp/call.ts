import {
  type CallToolRequest,
  type CallToolResult,
  CLIENT_CAPABILITIES_META_KEY,
  type InputRequiredResult,
  PROTOCOL_VERSION_META_KEY,
  ProtocolError,
  ProtocolErrorCode,
  type ServerContext,
  UrlElicitationRequiredError,
} from '@modelcontextprotocol/server';
import { principalFromAuthInfo } from '../../auth/mcp-verifier.js';
import { ANONYMOUS, type Principal, principalRef } from '../../auth/principal.js';
import { actions } from '../../catalog/index.js';
import { toolArguments } from '../../catalog/portable-schema.js';
import { invalidInput, mcpErrorResult, toGatewayError } from '../errors.js';
import { linkSignals } from '../lib/abort.js';
import { unknownName } from '../lib/did-you-mean.js';
import { checkJsonLimits, DEFAULT_JSON_LIMITS } from '../lib/json-limits.js';
import { availability } from '../run/availability.js';
import { type ExecuteOptions, execute, type Outcome, type RunDeps } from '../run/execute.js';
import { fixOf } from '../run/fixes.js';
import { MPP_CREDENTIAL_META } from '../run/rails.js';
import { RECEIPT_META_KEY } from '../run/receipts.js';
import type { CallRegistry } from './cancellations.js';
import { DESCRIBE_TOOL, describeAction, RUN_TOOL, runTarget } from './compact.js';
import { actionForTool, IDEMPOTENCY_META_KEY } from './tools.js';
import { askForFix, resumeTopUp, type TopUpDeps } from './top-up.js';

// tools/call: translate MCP to `execute` and back. Validation, prices, holds and charges are src/run's; this
// file only finds the action, carries the caller, the idempotency key, progress and cancellation across, and
// shapes the result. Everything thrown is caught here so the SDK never turns an exception into output.

export interface CallDeps {
  run: RunDeps;
  calls: CallRegistry;
  /** Asking the host to let the person top up when a call cannot be paid (./top-up.ts). */
  topUp?: TopUpDeps | undefined;
}

/** x402's MCP transport keys (x402 specs/transports-v2/mcp.md). */
export const X402_PAYMENT_META = 'x402/payment';
export const X402_RECEIPT_META = 'x402/payment-response';

type Params = CallToolRequest['params'];

/** One tools/call, whatever carried it: the SDK's handler (src/mcp/server.ts) or the fast path (./fast-call.ts). */
export interface ToolCall {
  params: Params;
  principal: Principal;
  /** The request's `_meta` (idempotency key, x402 payment, progress token). */
  meta: Record<string, unknown> | undefined;
  /** JSON-RPC id, for 2025-era cancellation by `notifications/cancelled` on another request. */
  id: string | number;
  /** Aborted when the client goes away (or closes the call's stream). */
  signal: AbortSignal;
  /**
   * The door's own controller behind `signal`, when it has one (the fast path): a 2025-era cancellation and the
   * call's deadline then abort it directly, and no linked signal is made per call.
   */
  controller?: AbortController | undefined;
  /** Sends `notifications/progress` when the client asked for progress (a progressToken in `_meta`). */
  notify?:
    | ((n: { method: 'notifications/progress'; params: Record<string, unknown> }) => Promise<void>)
    | undefined;
  /** The protocol era that carried the call; with it, a refusal the person can fix asks the host (./top-up.ts). */
  era?: 'modern' | 'legacy' | undefined;
  /** 2026-07-28: the client capabilities the request's envelope declares. */
  capabilities?: unknown;
  /** 2026-07-28 retries of an `input_required` answer: the client's answers and the state it echoes. */
  inputResponses?: Record<string, unknown> | undefined;
  requestState?: string | undefined;
}

/** The SDK's tools/call handler: its context → a ToolCall. */
export function callTool(
  deps: CallDeps,
  params: Params,
  ctx: ServerContext,
): Promise<CallToolResult | InputRequiredResult> {
  // The SDK types the envelope as empty; its keys are the reserved `io.modelcontextprotocol/` ones.
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  const state = ctx.mcpReq.requestState();
  return runToolCall(deps, {
    params,
    principal: principalFromAuthInfo(ctx.http?.authInfo) ?? ANONYMOUS,
    meta: ctx.mcpReq._meta,
    id: ctx.mcpReq.id,
    signal: ctx.mcpReq.signal,
    notify: (n) => ctx.mcpReq.notify(n),
    era: envelope?.[PROTOCOL_VERSION_META_KEY] === undefined ? 'legacy' : 'modern',
    capabilities: envelope?.[CLIENT_CAPABILITIES_META_KEY],
    inputResponses: ctx.mcpReq.inputResponses,
    requestState: typeof state === 'string' ? state : undefined,
  });
}

/** Every tool name a call may use: the catalog's and the compact set's. */
const TOOL_NAMES = [...actions.map((a) => a.toolName), DESCRIBE_TOOL, RUN_TOOL];

export async function runToolCall(
  deps: CallDeps,
  call: ToolCall,
): Promise<CallToolResult | InputRequiredResult> {
  const { params, principal, meta } = call;
  // The compact set's two door-level tools (src/mcp/compact.ts); any tool name also works in either set.
  if (params.name === DESCRIBE_TOOL) {
    return describeAction(params.arguments ?? {}, availability(deps.run.services));
  }
  let action = actionForTool(params.name);
  // A tool's arguments follow its portable schema (nullable optional fields, JSON text for free-form values):
  // read them back as the zod body the HTTP shim takes (catalog/portable-schema.ts).
  let input: unknown = action ? toolArguments(action, params.arguments ?? {}) : (params.arguments ?? {});
  if (params.name === RUN_TOOL) {
    const target = runTarget(params.arguments ?? {});
    if ('refused' in target) return target.refused;
    ({ action, input } = target);
  }
  // An unknown tool is a protocol error (JSON-RPC -32602), as the MCP spec asks; our wording, not the SDK's.
  if (!action) {
    throw new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      `${unknownName('tool', params.name, TOOL_NAMES, 'tools/list lists the tools')} Nothing was charged.`,
    );
  }
  try {
    const violation = checkJsonLimits(input, DEFAULT_JSON_LIMITS);
    if (violation) {
      const what = violation.kind === 'depth' ? 'nested deeper than' : 'made of more elements than';
      return mcpErrorResult(
        invalidInput([{ path: '', message: `the arguments are ${what} ${violation.limit}` }]),
      );
    }
    const key = meta?.[IDEMPOTENCY_META_KEY];
    if (key !== undefined && typeof key !== 'string') {
      return mcpErrorResult(
        invalidInput([{ path: `_meta.${IDEMPOTENCY_META_KEY}`, message: 'must be a string' }]),
      );
    }
    // A 2026-07-28 retry after the person was asked to top up waits (bounded) for the money first.
    const { topUp } = deps;
    const resumed =
      topUp && call.requestState !== undefined && principal.kind !== 'anonymous'
        ? await resumeTopUp(topUp, deps.run.ledger, principal, callerKey(principal), call)
        : undefined;
    // The same entry as the HTTP door: an account pays from its balance; an anonymous caller of a paid tool pays
    // through a rail (the x402 payment or MPP credential in _meta), or gets the challenges.
    const outcome = await withCancellation(deps, call, (abort) =>
      execute(deps.run, action.id, input, principal, {
        idempotencyKey: key,
        ...abort,
        onProgress: progressSender(call),
        transport: 'mcp',
        trace: meta,
        payment: meta?.[X402_PAYMENT_META],
        credential: meta?.[MPP_CREDENTIAL_META],
      }),
    );
    // Only on the refusal path: one the person can fix asks the host to open the page that fixes it.
    if (topUp && !outcome.ok && principal.kind !== 'anonymous') {
      const fix = fixOf(outcome.error);
      if (fix) {
        return await askForFix(topUp, callerKey(principal), action, outcome.error, fix, call, resumed);
      }
    }
    return paidResult(outcome);
  } catch (e) {
    // The 2025-era way of asking (-32042) is a JSON-RPC error, not a tool result.
    if (e instanceof UrlElicitationRequiredError) throw e;
    const error = toGatewayError(e);
    if (error.code === 'internal') deps.run.log.error({ err: e, tool: params.name }, 'mcp tools/call failed');
    return mcpErrorResult(error);
  }
}

/**
 * x402's MCP transport: a challenge (or a refused or unsettled payment) is an `isError` result carrying the
 * PaymentRequired as structured content and as its JSON text, never the tool's content; a paid result carries
 * the settlement receipt in `_meta`. Another rail's challenges or receipt (MPP) ride in `_meta` beside them.
 */
export function paidResult(outcome: Outcome): CallToolResult {
  const parts = outcome.parts;
  if (!parts) return toResult(outcome);
  let res: CallToolResult;
  if (parts.paymentRequired) {
    const challenge = parts.paymentRequired as unknown as Record<string, unknown>;
    res = {
      isError: true,
      structuredContent: challenge,
      content: [{ type: 'text', text: JSON.stringify(challenge) }],
    };
  } else res = toResult(outcome);
  if (parts.paymentResponse) res._meta = { ...res._meta, [X402_RECEIPT_META]: parts.paymentResponse };
  if (parts.meta) res._meta = { ...res._meta, ...parts.meta };
  return res;
}

/**
 * Marks a result whose one text content is exactly `JSON.stringify(structuredContent)`: the fast path then
 * writes that text twice (as the structured content, and escaped as the text) instead of serialising the data
 * again (./fast-call.ts). A symbol key: JSON and the SDK never see it.
 */
export const TEXT_IS_STRUCTURED: unique symbol = Symbol('tollgate.textIsStructured');

/** Success: the action's data plus `charged_cents` and `transaction_id`, as structured content and as text. */
export function toResult(outcome: Outcome): CallToolResult {
  if (!outcome.ok) return mcpErrorResult(outcome.error);
  const structured: Record<string, unknown> = {
    ...(outcome.data as Record<string, unknown>),
    charged_cents: outcome.chargedCents,
  };
  if (outcome.transactionId !== undefined) structured.transaction_id = outcome.transactionId;
  if (outcome.warnings) structured.warnings = outcome.warnings;
  const res: CallToolResult & { [TEXT_IS_STRUCTURED]?: true } = {
    content: [{ type: 'text', text: JSON.stringify(structured) }],
    structuredContent: structured,
    [TEXT_IS_STRUCTURED]: true,
  };
  // The signed receipt of a paid call (src/run/receipts.ts).
  if (outcome.receipt) res._meta = { [RECEIPT_META_KEY]: outcome.receipt };
  return res;
}

/**
 * The call's signal aborts on either way a client cancels: the SDK's own signal (2026 era: the response stream
 * closed; any era: the connection dropped) and, for 2025-era clients, a `notifications/cancelled` that arrived
 * on another stateless request (CallRegistry).
 */
async function withCancellation<T>(
  deps: CallDeps,
  call: ToolCall,
  run: (abort: { signal: AbortSignal } | { controller: AbortController }) => Promise<T>,
): Promise<T> {
  const { principal, controller } = call;
  if (principal.kind === 'anonymous') return run(controller ? { controller } : { signal: call.signal });
  if (controller) {
    // The door's controller is the call's one: a cancellation aborts it, as the client's leaving does.
    const entry = deps.calls.begin(callerKey(principal), call.id, controller);
    try {
      return await run({ controller });
    } finally {
      entry.end();
    }
  }
  const entry = deps.calls.begin(callerKey(principal), call.id);
  const linked = linkSignals([call.signal, entry.signal]);
  try {
    return await run({ signal: linked.signal });
  } finally {
    linked.dispose();
    entry.end();
  }
}

/** Who may cancel a call: the same account through the same credential. */
export function callerKey(p: Exclude<Principal, { kind: 'anonymous' }>): string {
  return `${p.accountId}\u0000${principalRef(p)}`;
}

/**
 * Forwards handler progress as `notifications/progress` when the client asked for it (sent a progressToken).
 * Progress must increase per token, so a report that does not is dropped.
 */
function progressSender(call: ToolCall): ExecuteOptions['onProgress'] {
  const token = call.meta?.progressToken;
  const notify = call.notify;
  if (token === undefined || !notify) return undefined;
  let last = Number.NEGATIVE_INFINITY;
  return (progress, total, message) => {
    if (!(progress > last) || call.signal.aborted) return;
    last = progress;
    const params: Record<string, unknown> = { progressToken: token, progress };
    if (total !== undefined) params.total = total;
    if (message !== undefined) params.message = message;
    // A lost progress notification must not fail the call.
    notify({ method: 'notifications/progress', params }).catch(() => {});
  };
}
