// Whether the standard OpenTelemetry variables ask for traces. Off by default: unlike an SDK's default
// (`OTEL_TRACES_EXPORTER=otlp`), a gateway with no OTEL_* variable set exports nothing and loads no SDK.
//   OTEL_SDK_DISABLED=true                       → off
//   OTEL_TRACES_EXPORTER=otlp|console (a list)   → those exporters; `none` → off
//   else OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT    → otlp
// OTLP goes over HTTP as JSON (@opentelemetry/exporter-trace-otlp-http): a collector's :4318 takes it.

const SUPPORTED = new Set(['otlp', 'console']);

export interface TracesChoice {
  exporters: string[];
  /** Things to warn about at start-up: unsupported exporters or protocols. */
  warnings: string[];
}

export function tracesFromEnv(env: Readonly<Record<string, string | undefined>>): TracesChoice | undefined {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return undefined;
  const warnings: string[] = [];
  let exporters: string[];
  const listed = env.OTEL_TRACES_EXPORTER?.trim();
  if (listed) {
    const names = listed
      .split(',')
      .map((s) => s.trim().toLowerCase())
      .filter((s) => s !== '' && s !== 'none');
    for (const n of names) {
      if (!SUPPORTED.has(n))
        warnings.push(`OTEL_TRACES_EXPORTER "${n}" is not supported (otlp, console); ignored`);
    }
    exporters = [...new Set(names.filter((n) => SUPPORTED.has(n)))];
  } else if (env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim()) {
    exporters = ['otlp'];
  } else {
    return undefined;
  }
  if (exporters.length === 0) return undefined;
  const protocol = (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL)?.trim();
  if (exporters.includes('otlp') && protocol && protocol !== 'http/json') {
    warnings.push(
      `OTEL_EXPORTER_OTLP_PROTOCOL "${protocol}": traces are sent as http/json (an OTLP/HTTP endpoint, :4318)`,
    );
  }
  return { exporters, warnings };
}
