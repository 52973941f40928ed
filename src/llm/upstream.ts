import type { Logger } from 'pino';
import { type ErrorCode, type ErrorOptions, GatewayError } from '../errors.js';
import { linkSignals } from '../lib/abort.js';
import { isUndiciTimeout, type ResponseData, UpstreamPool } from '../lib/upstream-pool.js';
import { sseEvents } from './sse.js';
import { isErrorChunk, parseChunk } from './stream.js';
import type { AttemptFailure, CompletionAttempt, SseEvent, StreamAttempt } from './types.js';

// The model router's upstream: any OpenAI-compatible aggregator (OpenRouter by default), over a pooled undici
// dispatcher. Failures before anything reached the caller are classified by fault and by whether the next
// model of a tier may do better; vendor text goes to `cause` (logged), never into our messages.

/** A stream that goes silent this long after it began is treated as broken. */
const STALL_TIMEOUT_MS = 120_000;
const LIST_TIMEOUT_MS = 15_000;

export interface LlmUpstreamOptions {
  baseUrl: string;
  apiKey: string;
  log: Logger;
  connections?: number;
}

export class LlmUpstream {
  private readonly pool: UpstreamPool;
  private readonly headers: Record<string, string>;

  constructor(private readonly opts: LlmUpstreamOptions) {
    this.pool = new UpstreamPool({
      connections: opts.connections ?? 128,
      keepAliveTimeout: 30_000,
      connectTimeout: 10_000,
    });
    this.headers = {
      authorization: `Bearer ${opts.apiKey}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    };
  }

  /** The upstream's model listing (OpenRouter: prices as USD-per-token strings), every output modality. */
  async listModels(signal: AbortSignal): Promise<unknown> {
    const url = `${this.opts.baseUrl}/models?output_modalities=all`;
    const linked = linkSignals([signal], LIST_TIMEOUT_MS);
    try {
      const res = await this.pool.request(url, {
        method: 'GET',
        headers: { authorization: this.headers.authorization as string, accept: 'application/json' },
        signal: linked.signal,
      });
      const text = await res.body.text();
      if (res.statusCode !== 200) throw new Error(`HTTP ${res.statusCode}: ${text.slice(0, 500)}`);
      return JSON.parse(text) as unknown;
    } catch (e) {
      throw new GatewayError(
        'upstream_unavailable',
        'The model price list could not be loaded; retry shortly.',
        {
          cause: e,
          retryAfterSeconds: 5,
        },
      );
    } finally {
      linked.dispose();
    }
  }

  async complete(
    model: string,
    body: Record<string, unknown>,
    opts: { signal: AbortSignal; timeoutMs: number },
  ): Promise<CompletionAttempt | AttemptFailure> {
    try {
      const res = await this.pool.request(`${this.opts.baseUrl}/chat/completions`, {
        method: 'POST',
        headers: this.headers,
        body: JSON.stringify({ ...body, model }),
        signal: opts.signal,
        headersTimeout: opts.timeoutMs,
        bodyTimeout: opts.timeoutMs,
      });
      const text = await res.body.text();
      if (res.statusCode < 200 || res.statusCode >= 300) return this.rejected(res, model, text);
      const json = parseChunk(text);
      if (json === undefined) return this.failed(badResponse(), model, text);
      if (isErrorChunk(json)) return this.failed(classifyErrorObject(json.error), model, text);
      if (!Array.isArray(json.choices)) return this.failed(badResponse(), model, text);
      return { ok: true, body: json };
    } catch (e) {
      if (opts.signal.aborted) throw opts.signal.reason ?? e;
      return this.failed(networkFailure(e, opts.timeoutMs), model, e);
    }
  }

  /** Opens a stream and reads up to its first data event; comments before it are not forwarded. */
  async stream(
    model: string,
    body: Record<string, unknown>,
    opts: { signal: AbortSignal; firstByteTimeoutMs: number },
  ): Promise<StreamAttempt | AttemptFailure> {
    // The attempt's own signal: aborted by the call's signal, by the first-byte deadline, or by the metered
    // path once the stream is under way (abort()).
    if (opts.signal.aborted) throw opts.signal.reason;
    const linked = linkSignals([opts.signal], opts.firstByteTimeoutMs);
    let begun = false;
    try {
      const res = await this.pool.request(`${this.opts.baseUrl}/chat/completions`, {
        method: 'POST',
        headers: this.headers,
        body: JSON.stringify({ ...body, model }),
        signal: linked.signal,
        headersTimeout: opts.firstByteTimeoutMs + 1_000,
        bodyTimeout: STALL_TIMEOUT_MS,
      });
      if (res.statusCode < 200 || res.statusCode >= 300)
        return this.rejected(res, model, await res.body.text());
      const events = sseEvents(res.body);
      let ev: SseEvent;
      do {
        const r = await events.next();
        if (r.done) {
          linked.abort();
          return this.failed(badResponse(), model, 'stream ended before any data');
        }
        ev = r.value;
      } while (ev.data === undefined);
      const json = ev.data === '[DONE]' ? undefined : parseChunk(ev.data);
      if (json === undefined || isErrorChunk(json)) {
        linked.abort();
        return this.failed(json ? classifyErrorObject(json.error) : badResponse(), model, ev.data);
      }
      // Under way: the first-byte deadline no longer applies; the call's signal still aborts it.
      begun = true;
      linked.clearDeadline();
      return { ok: true, first: ev, firstJson: json, events, abort: () => linked.abort() };
    } catch (e) {
      if (opts.signal.aborted) throw opts.signal.reason ?? e;
      const f = linked.timedOut
        ? timeoutFailure(`no first token within ${Math.round(opts.firstByteTimeoutMs / 100) / 10}s`)
        : networkFailure(e, opts.firstByteTimeoutMs);
      return this.failed(f, model, e);
    } finally {
      if (!begun) linked.dispose();
    }
  }

  /** A non-2xx answer, classified by its status; the vendor's text is only logged. */
  private rejected(res: ResponseData, model: string, text: string): AttemptFailure {
    return this.failed(classifyStatus(res.statusCode, retryAfter(res.headers['retry-after'])), model, text);
  }

  private failed(f: AttemptFailure, model: string, cause: unknown): AttemptFailure {
    const loud = f.error.code === 'upstream_unavailable' && !f.fallback;
    this.opts.log[loud ? 'error' : 'warn']({ model, code: f.error.code, cause }, 'model upstream failure');
    return f;
  }

  async close(): Promise<void> {
    await this.pool.close();
  }
}

function retryAfter(v: string | string[] | undefined): number | undefined {
  const n = Number(Array.isArray(v) ? v[0] : v);
  return v !== undefined && Number.isFinite(n) && n >= 0 ? Math.ceil(n) : undefined;
}

const fail = (code: ErrorCode, message: string, fallback: boolean, opts?: ErrorOptions): AttemptFailure => ({
  ok: false,
  error: new GatewayError(code, message, opts),
  fallback,
});

/** The upstream's HTTP status (or the `code` of an error it sent inside a 200) → our error, and fallback. */
export function classifyStatus(status: number, retryAfterSeconds?: number): AttemptFailure {
  if (status === 400 || status === 413 || status === 422) {
    return fail(
      'upstream_rejected',
      `The model provider rejected the request (HTTP ${status}): check the messages, the parameters and ` +
        "the model's context length. Nothing was charged.",
      false,
      { details: { upstream_status: status } },
    );
  }
  if (status === 401 || status === 402) {
    // Our key or our upstream credit: every model would fail alike, so no fallback; the operator must act.
    return fail(
      'upstream_unavailable',
      "The model provider refused the gateway's account; the operator has been alerted. Nothing was charged.",
      false,
      { retryAfterSeconds: 60 },
    );
  }
  if (status === 403) {
    return fail(
      'upstream_rejected',
      'The model provider refused this request (moderation or policy). Nothing was charged.',
      false,
      { details: { upstream_status: status } },
    );
  }
  if (status === 404) {
    return fail('upstream_unavailable', 'The model is not available right now. Nothing was charged.', true, {
      retryAfterSeconds: 30,
    });
  }
  if (status === 408 || status === 504) return timeoutFailure(`HTTP ${status}`);
  if (status === 429) {
    // Their rate limit on the gateway, not the caller's: 503, so it is never mistaken for our daily cap (429).
    return fail(
      'upstream_busy',
      'The model provider is rate-limiting the gateway; retry shortly. Nothing was charged.',
      true,
      { retryAfterSeconds: retryAfterSeconds ?? 5 },
    );
  }
  if (status >= 500) {
    return fail('upstream_error', `The model provider failed (HTTP ${status}); nothing was charged.`, true, {
      retryAfterSeconds,
    });
  }
  return fail(
    'upstream_rejected',
    `The model provider rejected the request (HTTP ${status}). Nothing was charged.`,
    false,
    { details: { upstream_status: status } },
  );
}

function classifyErrorObject(err: unknown): AttemptFailure {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'number' && code >= 400 && code < 600) return classifyStatus(code);
  return fail('upstream_error', 'The model failed; nothing was charged.', true);
}

function badResponse(): AttemptFailure {
  return fail(
    'bad_response',
    'The model provider answered in an unexpected shape; nothing was charged.',
    true,
  );
}

function timeoutFailure(what: string): AttemptFailure {
  return fail('upstream_timeout', `The model did not answer in time (${what}); nothing was charged.`, true);
}

function networkFailure(e: unknown, timeoutMs: number): AttemptFailure {
  if (isUndiciTimeout(e)) return timeoutFailure(`${Math.round(timeoutMs / 1000)}s`);
  return fail('upstream_error', 'The model provider could not be reached; nothing was charged.', true);
}
