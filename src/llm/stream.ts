import type { Logger } from 'pino';
import { GatewayError } from '../errors.js';
import { readUsage, type Usage } from './cost.js';
import type { ChatStreamSink, SseEvent, StreamAttempt } from './types.js';

// Passes an upstream SSE stream through to the caller event by event, as each arrives (never buffered), and
// watches it for what billing needs: the served model, the final usage, errors, and how much was produced.
// Each data event is parsed once (a few µs) because usage, errors and produced output all live inside it.

/** What a stream produced, for the charge. */
export class StreamMeter {
  served: string | undefined;
  usage: Usage | undefined;
  finishReason: string | undefined;
  /** UTF-8 bytes of content, reasoning and tool-call deltas forwarded. */
  outputBytes = 0;
  /** Data events that carried some output (a lower bound on completion tokens: one token or more each). */
  outputChunks = 0;

  observe(json: Record<string, unknown>): void {
    if (this.served === undefined && typeof json.model === 'string') this.served = json.model;
    if (json.usage !== undefined && json.usage !== null) this.usage = readUsage(json.usage) ?? this.usage;
    if (!Array.isArray(json.choices)) return;
    for (const c of json.choices as Array<Record<string, unknown> | null>) {
      if (c === null || typeof c !== 'object') continue;
      if (typeof c.finish_reason === 'string') this.finishReason = c.finish_reason;
      const d = c.delta as Record<string, unknown> | undefined;
      if (d === null || typeof d !== 'object') continue;
      let bytes = 0;
      if (typeof d.content === 'string') bytes += Buffer.byteLength(d.content);
      if (typeof d.reasoning === 'string') bytes += Buffer.byteLength(d.reasoning);
      if (Array.isArray(d.tool_calls)) bytes += Buffer.byteLength(JSON.stringify(d.tool_calls));
      if (bytes > 0) {
        this.outputBytes += bytes;
        this.outputChunks++;
      }
    }
  }

  get produced(): boolean {
    return this.usage ? this.usage.completionTokens > 0 : this.outputChunks > 0;
  }
}

export type StreamEnd =
  /**
   * The model finished. The stream is left open for the caller, who settles the call, writes its receipt (an SSE
   * comment) and then `done` (the upstream's `[DONE]` event, when it sent one) and ends it.
   */
  | { outcome: 'complete'; meter: StreamMeter; done: string | undefined }
  | { outcome: 'disconnected'; meter: StreamMeter }
  | { outcome: 'failed'; meter: StreamMeter; error: GatewayError };

export interface PipeOptions {
  clientWantsUsage: boolean;
  /** Shutdown and the call's deadline, to tell why a read failed (the caller's signal is the sink's). */
  shutdown: AbortSignal;
  timedOut: () => boolean;
  log: Logger;
}

export function parseChunk(data: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(data);
    return v !== null && typeof v === 'object' && !Array.isArray(v)
      ? (v as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/** OpenRouter's mid-stream failure: a top-level `error`, or a choice finishing with "error". */
export function isErrorChunk(json: Record<string, unknown>): boolean {
  if (json.error !== undefined && json.error !== null) return true;
  return (
    Array.isArray(json.choices) &&
    (json.choices as Array<{ finish_reason?: unknown } | null>).some((c) => c?.finish_reason === 'error')
  );
}

/** The final chunk that carries only usage (empty `choices`): sent only to callers that asked for it. */
function isUsageOnly(json: Record<string, unknown>): boolean {
  return Array.isArray(json.choices) && json.choices.length === 0 && json.usage !== undefined;
}

export async function pipeStream(
  attempt: StreamAttempt,
  sink: ChatStreamSink,
  opts: PipeOptions,
): Promise<StreamEnd> {
  const meter = new StreamMeter();
  meter.observe(attempt.firstJson);
  const client = sink.signal;
  const fail = (error: GatewayError): StreamEnd => {
    attempt.abort();
    if (!client.aborted) sink.fail(error);
    return { outcome: 'failed', meter, error };
  };

  try {
    await sink.write(attempt.first.text);
    while (!client.aborted) {
      const r = await attempt.events.next();
      if (r.done) break;
      const ev: SseEvent = r.value;
      if (ev.data === undefined) {
        await sink.write(ev.text); // keep-alive comments: harmless to clients, and they keep proxies awake
        continue;
      }
      if (ev.data === '[DONE]') {
        drain(attempt.events);
        return { outcome: 'complete', meter, done: ev.text };
      }
      const json = parseChunk(ev.data);
      if (json !== undefined && isErrorChunk(json)) {
        opts.log.warn({ upstream_error: json.error ?? null }, 'model failed mid-stream');
        return fail(
          new GatewayError('upstream_error', 'The model failed while streaming; nothing was charged.'),
        );
      }
      if (json !== undefined) {
        meter.observe(json);
        if (!opts.clientWantsUsage && isUsageOnly(json)) continue;
      }
      await sink.write(ev.text);
    }
  } catch (e) {
    if (!client.aborted) {
      if (opts.shutdown.aborted) {
        return fail(
          new GatewayError('shutting_down', 'The gateway shut down during the stream; nothing was charged.', {
            retryAfterSeconds: 5,
          }),
        );
      }
      if (opts.timedOut()) {
        return fail(
          new GatewayError('upstream_timeout', 'The model did not finish in time; nothing was charged.'),
        );
      }
      opts.log.warn({ err: e }, 'model stream broke');
      // The model had said it finished (only `[DONE]` was missing): the answer is whole.
      if (!finished(meter)) {
        return fail(new GatewayError('upstream_error', 'The model stream broke off; nothing was charged.'));
      }
    }
  }

  if (client.aborted) {
    attempt.abort();
    return { outcome: 'disconnected', meter };
  }
  // The upstream closed without `[DONE]`: complete only if the model said it had finished.
  if (finished(meter)) return { outcome: 'complete', meter, done: undefined };
  return fail(new GatewayError('upstream_error', 'The model stream ended early; nothing was charged.'));
}

function finished(meter: StreamMeter): boolean {
  return meter.finishReason !== undefined && meter.finishReason !== 'error';
}

/** Reads what follows `[DONE]` (normally just the end of the response) so the connection can be reused. */
function drain(events: AsyncIterator<SseEvent>): void {
  const step = (): void => {
    events.next().then(
      (r) => {
        if (!r.done) step();
      },
      () => undefined,
    );
  };
  step();
}
