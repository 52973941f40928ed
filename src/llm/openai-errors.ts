import type { ServerResponse } from 'node:http';
import { type ErrorCode, type GatewayError, publicMessage } from '../errors.js';

// The model router's rendering of the closed error union: OpenAI-style bodies `{ error: { message, type,
// code, param } }`, so OpenAI clients show them properly. The HTTP status is the union's own; only the body's
// shape differs from the catalog doors. `code` is our union code; `type` is the nearest OpenAI error type.

type OpenAiErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'not_found_error'
  | 'conflict_error'
  | 'insufficient_quota'
  | 'rate_limit_error'
  | 'timeout_error'
  | 'server_error';

const OPENAI_TYPES = {
  invalid_json: 'invalid_request_error',
  invalid_input: 'invalid_request_error',
  max_cost_exceeded: 'invalid_request_error',
  unauthorized: 'authentication_error',
  payment_required: 'insufficient_quota',
  insufficient_credit: 'insufficient_quota',
  forbidden: 'permission_error',
  action_not_allowed: 'permission_error',
  call_limit_exceeded: 'permission_error',
  not_found: 'not_found_error',
  resource_not_found: 'not_found_error',
  method_not_allowed: 'invalid_request_error',
  idempotency_in_flight: 'conflict_error',
  payload_too_large: 'invalid_request_error',
  unsupported_media_type: 'invalid_request_error',
  idempotency_mismatch: 'invalid_request_error',
  upstream_rejected: 'invalid_request_error',
  rate_limited: 'rate_limit_error',
  daily_cap_exceeded: 'rate_limit_error',
  monthly_cap_exceeded: 'rate_limit_error',
  cancelled: 'server_error',
  internal: 'server_error',
  upstream_error: 'server_error',
  bad_response: 'server_error',
  not_configured: 'server_error',
  upstream_unavailable: 'server_error',
  upstream_busy: 'server_error',
  shutting_down: 'server_error',
  database_unavailable: 'server_error',
  payment_settlement_unknown: 'server_error',
  upstream_timeout: 'timeout_error',
} as const satisfies Record<ErrorCode, OpenAiErrorType>;

export interface OpenAiErrorBody {
  error: { message: string; type: OpenAiErrorType; code: ErrorCode; param: string | null };
}

export function openAiErrorBody(e: GatewayError): OpenAiErrorBody {
  const issues = e.details?.issues;
  const first = Array.isArray(issues) ? (issues[0] as { path?: unknown } | undefined) : undefined;
  const param = typeof first?.path === 'string' && first.path !== '' ? first.path : null;
  return { error: { message: publicMessage(e), type: OPENAI_TYPES[e.code], code: e.code, param } };
}

/**
 * Sends an error. OpenAI clients retry 429 and 5xx on their own, honouring Retry-After below 60 s and backing
 * off briefly otherwise; when that cannot help (not retryable, or a wait of a minute or more, as for the
 * daily cap) `x-should-retry: false` says so.
 */
export function sendOpenAiError(res: ServerResponse, e: GatewayError): void {
  if (e.retryAfterSeconds !== undefined) res.setHeader('Retry-After', String(e.retryAfterSeconds));
  if (!e.retryable || (e.retryAfterSeconds ?? 0) >= 60) res.setHeader('x-should-retry', 'false');
  writeJson(res, e.status, openAiErrorBody(e));
}

/** The SSE form, for a failure after the stream began (the status is already 200). */
export function sseErrorEvent(e: GatewayError): string {
  return `data: ${JSON.stringify(openAiErrorBody(e))}\n\n`;
}

/** A JSON body on node's own response (the chat route is served without express). */
export function writeJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}
