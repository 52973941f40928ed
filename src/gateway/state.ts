import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { Logger } from 'pino';
import type { StateDb } from '../backend.js';
import { openGatewayState } from '../cli/state.js';
import type { Config } from '../config/index.js';
import type { Clock } from '../lib/clock.js';
import { startMonitoring } from '../ops/monitoring.js';
import type { GaugeSources, PrometheusMetrics } from '../ops/prometheus.js';
import type { Telemetry } from '../ops/telemetry.js';
import { Inflight } from '../run/inflight.js';

// Step 1 of the composition root (src/main.ts): the state and monitoring, and the context every later step reads.

export const VERSION = '0.1.0';

/** What each step is given: the configuration, the state, monitoring, and where to register what it opened. */
export interface Base {
  config: Config;
  clock: Clock;
  log: Logger;
  /** SQLite: one process owns the data dir. PostgreSQL: any number of replicas, each with its own lease. */
  state: StateDb;
  /** Undefined when nothing is configured (docs/operator.md "Monitoring"). */
  telemetry: Telemetry | undefined;
  prom: PrometheusMetrics | undefined;
  /** Calls in flight (execute and the model router), for a graceful shutdown. */
  inflight: Inflight;
  /** The holds this process took and has not resolved: a gauge, bound once the ledger is open. */
  gauges: Pick<GaugeSources, 'pendingHolds'>;
  /**
   * Where a failed renewal of the replica lease goes (PostgreSQL). Logged until step 2 binds it to the outage
   * watch, which says an outage once (src/run/db-health.ts).
   */
  leaseRenewError: { report: (err: unknown) => void };
  closers: Closers;
}

/** What the gateway closes, last opened first; a close that fails is logged and the rest still close. */
export class Closers {
  private readonly list: Array<() => unknown> = [];

  constructor(private readonly log: Logger) {}

  add(...closes: Array<(() => unknown) | undefined>): void {
    for (const c of closes) if (c) this.list.push(c);
  }

  async close(): Promise<void> {
    for (let c = this.list.pop(); c; c = this.list.pop()) {
      try {
        await c();
      } catch (err) {
        this.log.error({ err }, 'closing the gateway: a part failed to close');
      }
    }
  }
}

export async function openBase(
  config: Config,
  o: {
    clock: Clock;
    log: Logger;
    otelEnv: Readonly<Record<string, string | undefined>>;
    traceExporter?: SpanExporter | undefined;
  },
): Promise<Base> {
  const { clock, log } = o;
  const closers = new Closers(log);
  const leaseRenewError: Base['leaseRenewError'] = {
    report: (err) =>
      log.error({ err }, 'replica lease renewal failed; retrying (said once until it succeeds)'),
  };
  const opened = await openGatewayState(config, clock, log, (err) => leaseRenewError.report(err));
  closers.add(opened.close);
  const inflight = new Inflight();
  const gauges: Base['gauges'] = { pendingHolds: () => ({ count: 0, oldestMs: 0 }) };
  try {
    const monitoring = await startMonitoring(
      {
        metrics:
          config.env.TOLLGATE_METRICS_TOKEN !== undefined || config.env.TOLLGATE_METRICS_PORT !== undefined,
        timing: config.env.TOLLGATE_TIMING === '1',
        version: VERSION,
        gauges: { inflight: () => inflight.size, pendingHolds: () => gauges.pendingHolds() },
        otelEnv: o.otelEnv,
        traceExporter: o.traceExporter,
      },
      log,
    );
    closers.add(monitoring.close);
    const { telemetry, prom } = monitoring;
    return {
      config,
      clock,
      log,
      state: opened.state,
      telemetry,
      prom,
      inflight,
      gauges,
      leaseRenewError,
      closers,
    };
  } catch (err) {
    await closers.close();
    throw err;
  }
}
