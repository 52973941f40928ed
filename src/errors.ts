// The closed union of everything that can go wrong in a call. Each code has exactly one HTTP status and one
// retryability; the HTTP and MCP doors both map from this table, so a new code cannot be forgotten by one door.
// Messages are ours: vendor text is logged, never returned (it is untrusted input to an agent).

export const ERROR_CODES = {
  invalid_json: { status: 400, retryable: false },
  invalid_input: { status: 400, retryable: false },
  max_cost_exceeded: { status: 400, retryable: false },
  unauthorized: { status: 401, retryable: false },
  payment_required: { status: 402, retryable: false },
  insufficient_credit: { status: 402, retryable: false },
  forbidden: { status: 403, retryable: false },
  /** The API key's allowed actions do not include this one. */
  action_not_allowed: { status: 403, retryable: false },
  /** The call alone is above its key's (or app's) maximum per call, daily or monthly limit: it can never run. */
  call_limit_exceeded: { status: 403, retryable: false },
  not_found: { status: 404, retryable: false },
  resource_not_found: { status: 404, retryable: false },
  method_not_allowed: { status: 405, retryable: false },
  idempotency_in_flight: { status: 409, retryable: true },
  payload_too_large: { status: 413, retryable: false },
  unsupported_media_type: { status: 415, retryable: false },
  idempotency_mismatch: { status: 422, retryable: false },
  upstream_rejected: { status: 422, retryable: false },
  rate_limited: { status: 429, retryable: true },
  daily_cap_exceeded: { status: 429, retryable: true },
  monthly_cap_exceeded: { status: 429, retryable: true },
  cancelled: { status: 499, retryable: true },
  internal: { status: 500, retryable: true },
  upstream_error: { status: 502, retryable: true },
  bad_response: { status: 502, retryable: true },
  not_configured: { status: 503, retryable: false },
  upstream_unavailable: { status: 503, retryable: true },
  upstream_busy: { status: 503, retryable: true },
  shutting_down: { status: 503, retryable: true },
  /** The gateway's database does not answer (or cannot take writes): nothing was charged, retry shortly. */
  database_unavailable: { status: 503, retryable: true },
  /** An x402 settlement whose outcome is not known yet: retry with the same payment, never a new one. */
  payment_settlement_unknown: { status: 503, retryable: true },
  upstream_timeout: { status: 504, retryable: true },
} as const satisfies Record<string, { status: number; retryable: boolean }>;

export type ErrorCode = keyof typeof ERROR_CODES;

export interface FieldIssue {
  /** Dotted path into the request body, e.g. `facets.2` or `polygon.0.latitude`; empty for the body itself. */
  path: string;
  message: string;
}

export interface ErrorOptions {
  details?: Record<string, unknown>;
  /** Seconds the caller should wait before retrying; sent as `Retry-After`. */
  retryAfterSeconds?: number;
  /** Internal cause (vendor text, stack); logged, never shown. */
  cause?: unknown;
}

export class GatewayError extends Error {
  readonly code: ErrorCode;
  readonly details: Record<string, unknown> | undefined;
  readonly retryAfterSeconds: number | undefined;

  constructor(code: ErrorCode, message: string, opts: ErrorOptions = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'GatewayError';
    this.code = code;
    this.details = opts.details;
    this.retryAfterSeconds = opts.retryAfterSeconds;
  }

  get status(): number {
    return ERROR_CODES[this.code].status;
  }

  get retryable(): boolean {
    return ERROR_CODES[this.code].retryable;
  }
}

export function isGatewayError(e: unknown): e is GatewayError {
  return e instanceof GatewayError;
}

/**
 * Anything thrown that is not ours becomes an opaque internal error (the original goes to the log only) — except a
 * database that does not answer, which is a retryable 503 (isDatabaseUnavailable).
 */
export function toGatewayError(e: unknown): GatewayError {
  if (e instanceof GatewayError) return e;
  if (isDatabaseUnavailable(e)) return databaseUnavailable(e);
  return new GatewayError('internal', 'The gateway hit an internal error; nothing was charged.', {
    cause: e,
  });
}

/** Seconds a caller is asked to wait while the database does not answer. */
export const DATABASE_RETRY_AFTER_SECONDS = 2;

export function databaseUnavailable(cause?: unknown): GatewayError {
  return new GatewayError(
    'database_unavailable',
    "The gateway's database is not answering; nothing was charged. Retry shortly.",
    { retryAfterSeconds: DATABASE_RETRY_AFTER_SECONDS, cause },
  );
}

// ---- which failures mean "the database is not answering" ---------------------------------------------------
// Failures of the database rather than bugs: a server going, gone, starting, full or read-only, a socket that
// cannot reach it, a SQLite file that cannot be written. Classified by code, never by message, except for the few
// errors node-postgres raises without one. (Here, not in src/lib: this module imports nothing.)

/** PostgreSQL SQLSTATEs: admin/crash shutdown, cannot connect now, disk full, out of memory, too many
 * connections, I/O error, read-only (a standby); class 08 (connection exceptions) is matched by prefix. */
const PG_STATES = new Set(['57P01', '57P02', '57P03', '53100', '53200', '53300', '58030', '25006']);
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);
/** node-postgres's own errors without a code: the connection died or could not be had in time. */
const PG_MESSAGES = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'is not queryable',
  'Cannot use a pool after calling end on the pool',
];
/** better-sqlite3 result codes of a disk that is full, read-only or failing, or a writer holding the lock. */
const SQLITE_PREFIXES = ['SQLITE_FULL', 'SQLITE_READONLY', 'SQLITE_IOERR', 'SQLITE_BUSY', 'SQLITE_CANTOPEN'];
/** The code of the error the SQLite ledger raises once it stopped itself (its journal could not be synced). */
export const LEDGER_STOPPED = 'TOLLGATE_LEDGER_STOPPED';

export function isDatabaseUnavailable(e: unknown): boolean {
  let err = e;
  for (let depth = 0; err && typeof err === 'object' && depth < 4; depth++) {
    const code = (err as { code?: unknown }).code;
    if (typeof code === 'string') {
      if (PG_STATES.has(code) || /^08[0-9A-Z]{3}$/.test(code) || SOCKET_CODES.has(code)) return true;
      if (code === LEDGER_STOPPED || SQLITE_PREFIXES.some((p) => code.startsWith(p))) return true;
    }
    // Node 20's happy-eyeballs connect fails with an AggregateError of the per-address errors.
    const inner = (err as { errors?: unknown }).errors;
    if (Array.isArray(inner) && inner.some((x) => isDatabaseUnavailable(x))) return true;
    const message = (err as { message?: unknown }).message;
    if (code === undefined && typeof message === 'string' && PG_MESSAGES.some((m) => message.includes(m)))
      return true;
    err = (err as { cause?: unknown }).cause;
  }
  return false;
}

// ---- constructors for the common cases, so messages stay consistent across doors -------------------------

/** The message of a field that is absent; the summary reads "url is required". */
export const REQUIRED = 'required';

export function invalidInput(issues: FieldIssue[]): GatewayError {
  const summary = issues
    .slice(0, 5)
    .map((i) =>
      i.path && i.message === REQUIRED
        ? `${i.path} is required`
        : i.path
          ? `${i.path}: ${i.message}`
          : i.message,
    )
    .join('; ');
  return new GatewayError('invalid_input', `Invalid input: ${summary}`, { details: { issues } });
}

export function notConfigured(what: string, envVars: string[]): GatewayError {
  return new GatewayError(
    'not_configured',
    `${what} is not configured on this gateway; the operator must set ${envVars.join(' and ')}. Nothing was charged.`,
    { details: { env: envVars } },
  );
}

// ---- the wire bodies ----------------------------------------------------------------------------------

/** A message that already says no money moved. */
const SAYS_NOT_CHARGED = /\b(nothing was charged|not charged|never charged|nothing is charged)\b/i;

/**
 * The message a caller reads: ours, and every refusal says in words that nothing was charged (`charged_cents: 0`
 * says it to programs; agents and people read the message). The one exception is a settlement whose outcome is not
 * known yet: the payment may have moved, and its message says what to do.
 */
export function publicMessage(e: GatewayError): string {
  if (e.code === 'payment_settlement_unknown' || SAYS_NOT_CHARGED.test(e.message)) return e.message;
  return `${e.message}${/[.!?]$/.test(e.message) ? '' : '.'} Nothing was charged.`;
}

export interface ErrorBody {
  ok: false;
  error: { code: ErrorCode; message: string; retryable: boolean; details?: Record<string, unknown> };
  charged_cents: 0;
}

export function errorBody(e: GatewayError): ErrorBody {
  const error: ErrorBody['error'] = { code: e.code, message: publicMessage(e), retryable: e.retryable };
  if (e.details !== undefined) error.details = e.details;
  return { ok: false, error, charged_cents: 0 };
}

/** MCP tool-result form of an error: `isError` with our message (and field paths) as text. */
export function mcpErrorResult(e: GatewayError): {
  isError: true;
  content: Array<{ type: 'text'; text: string }>;
  structuredContent: { error: ErrorBody['error']; charged_cents: 0 };
} {
  const body = errorBody(e);
  let text = `Error (${e.code}): ${body.error.message}`;
  const issues = e.details?.issues;
  if (Array.isArray(issues) && issues.length > 5) {
    text += `\n${(issues as FieldIssue[]).map((i) => `- ${i.path || '(body)'}: ${i.message}`).join('\n')}`;
  }
  if (e.retryable) text += e.retryAfterSeconds ? ` Retry after ${e.retryAfterSeconds}s.` : ' You may retry.';
  return {
    isError: true,
    content: [{ type: 'text', text }],
    structuredContent: { error: body.error, charged_cents: 0 },
  };
}
