import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { Logger } from 'pino';
import { setStageTimer } from '../lib/stage-timing.js';
import type { GaugeSources, PrometheusMetrics } from './prometheus.js';
import { startTracing } from './start-tracing.js';
import { NOOP_METRICS, type Telemetry } from './telemetry.js';
import { createStageRecorder } from './timing.js';

// The composition root's monitoring (docs/operator.md "Monitoring"): nothing is counted or traced unless
// configured, and each part's library loads only then — prom-client with TOLLGATE_METRICS_*, the
// OpenTelemetry SDK with OTEL_*, the stage timer with TOLLGATE_TIMING=1 (which stands in for the tracer).

export interface MonitoringOptions {
  /** /metrics wanted (TOLLGATE_METRICS_TOKEN or TOLLGATE_METRICS_PORT). */
  metrics: boolean;
  /** TOLLGATE_TIMING=1. */
  timing: boolean;
  version: string;
  gauges: GaugeSources;
  /** The OTEL_* variables. */
  otelEnv: Readonly<Record<string, string | undefined>>;
  /** Tests: trace into this exporter whatever OTEL_* says. */
  traceExporter?: SpanExporter | undefined;
}

export interface Monitoring {
  /** Undefined when nothing is configured: every instrumentation point is then one test. */
  telemetry: Telemetry | undefined;
  prom: PrometheusMetrics | undefined;
  /** Flushes traces; with TOLLGATE_TIMING, prints the stage table on stderr. */
  close(): Promise<void>;
}

export async function startMonitoring(o: MonitoringOptions, log: Logger): Promise<Monitoring> {
  const prom = o.metrics
    ? (await import('./prometheus.js')).createPrometheusMetrics(o.version, o.gauges)
    : undefined;
  const stages = o.timing ? createStageRecorder() : undefined;
  const otel = stages
    ? undefined
    : await startTracing({ exporter: o.traceExporter, env: o.otelEnv, version: o.version }, log);
  if (stages) {
    setStageTimer(stages.timer);
    log.warn('TOLLGATE_TIMING=1: timing the stages of each call (a measuring tool, not for production)');
  }
  const tracing = stages?.tracing ?? otel?.tracing;
  return {
    telemetry: prom || tracing ? { metrics: prom?.metrics ?? NOOP_METRICS, tracing } : undefined,
    prom,
    async close() {
      await otel?.shutdown();
      if (stages) {
        setStageTimer(undefined);
        process.stderr.write(`TOLLGATE_TIMING ${JSON.stringify(stages.report())}\n${stages.table()}\n`);
      }
    },
  };
}
