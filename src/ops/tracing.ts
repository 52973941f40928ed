import {
  type Context,
  context,
  createContextKey,
  type Span as OtelSpan,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  type TextMapGetter,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import type { CallSpan, Door, Span, TraceCarrier, Tracing } from './telemetry.js';

// The Tracing of src/ops/telemetry.ts on @opentelemetry/api alone: one span per call, continuing the caller's
// W3C trace context, with steps (validate, hold, upstream, capture, void, vendor calls) as its children. The
// SDK (provider, exporter, context manager, propagator) is src/ops/otel-sdk.ts, loaded only when OTEL_* asks
// for it; without it the gateway never builds this object.

const CALL = createContextKey('tollgate.call');

/** A call's span and the steps opened under it, so a call that ends early closes them (as failed). */
interface CallRecord {
  open: Set<StepSpan>;
}

class StepSpan implements Span {
  private done = false;
  readonly ctx: Context;

  constructor(
    readonly span: OtelSpan,
    parent: Context,
    private readonly call: CallRecord | undefined,
  ) {
    this.ctx = trace.setSpan(parent, span);
    call?.open.add(this);
  }

  end(error?: string): void {
    if (this.done) return;
    this.done = true;
    if (error !== undefined) markFailed(this.span, error);
    this.span.end();
    this.call?.open.delete(this);
  }
}

function markFailed(span: OtelSpan, code: string): void {
  span.setStatus({ code: SpanStatusCode.ERROR, message: code });
  span.setAttribute('error.type', code);
}

/** Reads only string values (a header may repeat: the first counts); anything else in `_meta` is ignored. */
const getter: TextMapGetter<TraceCarrier> = {
  keys: (carrier) => Object.keys(carrier),
  get(carrier, key) {
    const v = carrier[key];
    if (typeof v === 'string') return v;
    if (Array.isArray(v) && typeof v[0] === 'string') return v[0];
    return undefined;
  },
};

export function createTracing(tracer: Tracer): Tracing {
  const names = new Map<string, string>();
  const nameOf = (action: string) => {
    let n = names.get(action);
    if (n === undefined) {
      n = `call ${action}`;
      names.set(action, n);
    }
    return n;
  };

  return {
    async call<T>(
      action: string,
      door: Door,
      carrier: TraceCarrier | undefined,
      fn: (span: CallSpan) => Promise<T>,
    ): Promise<T> {
      const parent = carrier ? propagation.extract(ROOT_CONTEXT, carrier, getter) : ROOT_CONTEXT;
      const span = tracer.startSpan(
        nameOf(action),
        { kind: SpanKind.SERVER, attributes: { 'tollgate.action': action, 'tollgate.door': door } },
        parent,
      );
      const rec: CallRecord = { open: new Set() };
      let failed: string | undefined;
      const handle: CallSpan = {
        set: (key, value) => span.setAttribute(`tollgate.${key}`, value),
        end: (error) => {
          failed = error;
        },
      };
      try {
        return await context.with(trace.setSpan(parent, span).setValue(CALL, rec), () => fn(handle));
      } catch (e) {
        failed ??= 'internal';
        throw e;
      } finally {
        for (const s of rec.open) s.end(failed ?? 'unfinished');
        if (failed !== undefined) markFailed(span, failed);
        span.end();
      }
    },

    step(name: string): Span {
      const active = context.active();
      return new StepSpan(
        tracer.startSpan(name, { kind: SpanKind.INTERNAL }, active),
        active,
        active.getValue(CALL) as CallRecord | undefined,
      );
    },

    within<T>(step: Span, fn: () => Promise<T>): Promise<T> {
      return step instanceof StepSpan ? context.with(step.ctx, fn) : fn();
    },
  };
}
