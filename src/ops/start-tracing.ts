import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { Logger } from 'pino';
import { tracesFromEnv } from './otel-env.js';
import type { OtelTracing } from './otel-sdk.js';

/** Traces when OTEL_* asks for them (or a test gives an exporter): the SDK is loaded only then. */
export async function startTracing(
  o: {
    exporter: SpanExporter | undefined;
    env: Readonly<Record<string, string | undefined>>;
    version: string;
  },
  log: Logger,
): Promise<OtelTracing | undefined> {
  const choice = o.exporter ? { exporters: [], warnings: [] } : tracesFromEnv(o.env);
  if (!choice) return undefined;
  for (const w of choice.warnings) log.warn(w);
  const { startOtel } = await import('./otel-sdk.js');
  const otel = await startOtel({ exporters: choice.exporters, version: o.version, exporter: o.exporter });
  log.info({ exporters: choice.exporters }, 'tracing on');
  return otel;
}
