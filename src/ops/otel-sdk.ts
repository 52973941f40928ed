import { context, propagation } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  ConsoleSpanExporter,
  SimpleSpanProcessor,
  type SpanExporter,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import type { Tracing } from './telemetry.js';
import { createTracing } from './tracing.js';

// The OpenTelemetry SDK behind src/ops/tracing.ts. Loaded by the composition root only when the standard
// OTEL_* variables ask for traces (src/ops/otel-env.ts), so a gateway without them never loads it. The
// exporter reads its own OTEL_EXPORTER_OTLP_* variables (endpoint, headers, timeout, compression); the
// provider reads OTEL_TRACES_SAMPLER(_ARG) and the span limits; OTEL_SERVICE_NAME and
// OTEL_RESOURCE_ATTRIBUTES name the service.

export interface OtelOptions {
  /** `otlp` and/or `console` (OTEL_TRACES_EXPORTER). */
  exporters: readonly string[];
  version: string;
  /** Tests: export here instead (the in-memory exporter), span by span unless `batch`. */
  exporter?: SpanExporter;
  /** Batch the given exporter's spans as the OTLP exporter's are (benchmarks). */
  batch?: boolean;
}

export interface OtelTracing {
  tracing: Tracing;
  /** Flushes the spans still buffered and releases the global context manager and propagator. */
  shutdown(): Promise<void>;
}

export async function startOtel(opts: OtelOptions): Promise<OtelTracing> {
  const processors: SpanProcessor[] = [];
  if (opts.exporter) {
    processors.push(
      opts.batch ? new BatchSpanProcessor(opts.exporter) : new SimpleSpanProcessor(opts.exporter),
    );
  } else {
    for (const name of opts.exporters) {
      if (name === 'otlp') {
        const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
        processors.push(new BatchSpanProcessor(new OTLPTraceExporter()));
      } else if (name === 'console') {
        processors.push(new SimpleSpanProcessor(new ConsoleSpanExporter()));
      }
    }
  }
  const resource = resourceFromAttributes({
    'service.name': 'tollgate',
    'service.version': opts.version,
  }).merge(detectResources({ detectors: [envDetector] }));
  const provider = new BasicTracerProvider({ resource, spanProcessors: processors });
  // Spans started inside a call (ledger steps, vendor calls) find it through AsyncLocalStorage; a caller's
  // traceparent (HTTP header or MCP `_meta`) is read by the W3C propagator.
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  propagation.setGlobalPropagator(
    new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] }),
  );
  return {
    tracing: createTracing(provider.getTracer('tollgate', opts.version)),
    async shutdown() {
      await provider.shutdown();
      context.disable();
      propagation.disable();
    },
  };
}
