import { GatewayError } from '../errors.js';
import { linkWithin } from '../lib/abort.js';
import { isUndiciTimeout, UpstreamPool } from '../lib/upstream-pool.js';

// Shared plumbing for vendor clients: pooled undici dispatchers, per-call timeouts joined with the caller's
// AbortSignal, and one classification of upstream failures by fault (docs/architecture.md, Conventions):
//   caller      their 4xx about our input       → 422 upstream_rejected
//   ours        their 401/402/403, out of credit → 503 upstream_unavailable, logged loudly
//   transient   timeout, 5xx, 429                → 502/503/504, retryable, Retry-After when known
//   bad_response the body didn't match            → 502 bad_response
// Nothing classified here is ever charged. Vendor text is logged by the caller, never put in the message.

export function createPool(opts: { connections?: number; keepAliveTimeoutMs?: number } = {}): UpstreamPool {
  return new UpstreamPool({
    // Sized for the calls in flight (TOLLGATE_UPSTREAM_CONNECTIONS): a call queued here times out unasked.
    connections: opts.connections ?? 1024,
    keepAliveTimeout: opts.keepAliveTimeoutMs ?? 10_000,
    connectTimeout: 10_000,
  });
}

export interface UpstreamRequest {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Absolute URL. */
  url: string;
  headers?: Record<string, string>;
  query?: Record<string, string | number | boolean | readonly string[] | undefined>;
  /** JSON body (serialized here) or a raw string/Buffer. */
  json?: unknown;
  body?: string | Buffer;
  signal: AbortSignal;
  timeoutMs: number;
}

export interface UpstreamResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

export function withQuery(url: string, query: UpstreamRequest['query']): string {
  if (!query) return url;
  const u = new URL(url);
  for (const [k, v] of Object.entries(query)) {
    if (v === undefined) continue;
    if (Array.isArray(v)) for (const item of v) u.searchParams.append(k, String(item));
    else u.searchParams.set(k, String(v));
  }
  return u.toString();
}

/** Sends one request and reads the whole body as text. Network failures and timeouts become GatewayErrors. */
export async function sendRequest(
  pool: UpstreamPool,
  vendor: string,
  req: UpstreamRequest,
): Promise<UpstreamResponse> {
  const linked = linkWithin(req.signal, req.timeoutMs);
  const headers: Record<string, string> = { accept: 'application/json', ...req.headers };
  let body: string | Buffer | undefined = req.body;
  if (req.json !== undefined) {
    body = JSON.stringify(req.json);
    headers['content-type'] = 'application/json';
  }
  try {
    const res = await pool.request(withQuery(req.url, req.query), {
      method: req.method,
      headers,
      body,
      signal: linked.signal,
    });
    const text = await res.body.text();
    return { status: res.statusCode, headers: res.headers, text };
  } catch (e) {
    if (req.signal.aborted) throw req.signal.reason ?? e;
    if (linked.timedOut || isUndiciTimeout(e)) {
      throw new GatewayError('upstream_timeout', `${vendor} did not answer in time; nothing was charged.`, {
        cause: e,
      });
    }
    throw new GatewayError('upstream_error', `${vendor} could not be reached; nothing was charged.`, {
      cause: e,
    });
  } finally {
    linked.dispose();
  }
}

export function parseJson(vendor: string, res: UpstreamResponse): unknown {
  try {
    return JSON.parse(res.text);
  } catch (e) {
    throw new GatewayError(
      'bad_response',
      `${vendor} answered with something that is not JSON; nothing was charged.`,
      {
        cause: e,
      },
    );
  }
}

/** A response header's value (the first, when it came more than once). */
export function headerValue(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

export function retryAfterSeconds(headers: UpstreamResponse['headers']): number | undefined {
  const s = headerValue(headers['retry-after']);
  if (!s) return undefined;
  const n = Number(s);
  if (Number.isFinite(n) && n >= 0) return Math.ceil(n);
  const when = Date.parse(s);
  return Number.isNaN(when) ? undefined : Math.max(0, Math.ceil((when - Date.now()) / 1000));
}

/** The GatewayError for a non-2xx upstream answer, classified by fault. */
export function classifyStatus(vendor: string, res: UpstreamResponse): GatewayError {
  const s = res.status;
  const cause = { vendor, status: s, body: res.text.slice(0, 2000) };
  if (s === 401 || s === 402 || s === 403) {
    return new GatewayError(
      'upstream_unavailable',
      `${vendor} refused the gateway's credentials or account; the operator has been alerted. Nothing was charged.`,
      { cause, retryAfterSeconds: 60 },
    );
  }
  if (s === 408 || s === 504) {
    return new GatewayError('upstream_timeout', `${vendor} timed out; nothing was charged.`, { cause });
  }
  if (s === 429) {
    return new GatewayError(
      'upstream_busy',
      `${vendor} is rate-limiting the gateway; retry later. Nothing was charged.`,
      {
        cause,
        retryAfterSeconds: retryAfterSeconds(res.headers) ?? 5,
      },
    );
  }
  if (s >= 500) {
    return new GatewayError('upstream_error', `${vendor} failed (HTTP ${s}); nothing was charged.`, {
      cause,
      retryAfterSeconds: retryAfterSeconds(res.headers),
    });
  }
  return new GatewayError(
    'upstream_rejected',
    `${vendor} rejected the request (HTTP ${s}); check the parameters. Nothing was charged.`,
    { cause, details: { upstream_status: s } },
  );
}
