import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { Express } from 'express';
import type { Logger } from 'pino';
import type { Handlers } from '../tools/types.js';
import type { Alerts } from './alerts/index.js';
import type { StateDb } from './backend.js';
import type { Billing } from './billing/index.js';
import type { Config } from './config/index.js';
import { startBackground } from './gateway/background.js';
import { openDoors } from './gateway/doors.js';
import { openBooks } from './gateway/ledger.js';
import { openRunPath } from './gateway/run.js';
import { serving } from './gateway/server.js';
import { openServices } from './gateway/services.js';
import { openBase } from './gateway/state.js';
import type { Ledger } from './ledger/types.js';
import { type Clock, systemClock } from './lib/clock.js';
import { limitHeapGrowth } from './lib/heap-growth.js';
import { createLogger } from './log.js';
import type { McpDoor } from './mcp/door.js';
import type { Telemetry } from './ops/telemetry.js';
import type { FileMetaStore } from './ports/index.js';
import type { RunDeps } from './run/execute.js';
import type { Lifecycle } from './run/lifecycle.js';
import type { X402Deps } from './run/x402/gate.js';

// The composition root: the only place (with src/cli) that wires concrete implementations together, in named steps
// (src/gateway), each opening what the next needs and registering what it must close. Optional parts are imported
// only when configured or first used (docs/decisions.md "Modules loaded when used").

export { VERSION } from './gateway/state.js';

export interface GatewayOptions {
  clock?: Clock;
  log?: Logger;
  /** Tests replace handlers to exercise the run path with controlled upstream behaviour. */
  handlers?: Partial<Handlers>;
  /** Skip the start-up recovery of orphaned holds (tests that inspect them). */
  skipRecovery?: boolean;
  /** The file library's metadata store; default: the `files` table of this gateway's database. */
  fileMeta?: FileMetaStore;
  /** A CA (PEM) the OAuth metadata fetcher trusts besides Node's roots: tests serve https on loopback. */
  metadataFetchCa?: string;
  /** Tests: trace into this exporter (the in-memory one) whatever OTEL_* says. */
  traceExporter?: SpanExporter;
  /** The OTEL_* variables (default: process.env). */
  otelEnv?: Readonly<Record<string, string | undefined>>;
}

export interface Gateway {
  config: Config;
  app: Express;
  ledger: Ledger;
  /** The one money lifecycle (holds, captures, refunds, credits). */
  money: Lifecycle;
  /** The MCP door (its fast path's count, its cancellation registry). */
  mcp: McpDoor;
  /** Where the state lives (SQLite or PostgreSQL). */
  state: StateDb;
  run: RunDeps;
  log: Logger;
  /** x402 payments (facilitator and payment store); undefined when TOLLGATE_X402_PAY_TO is unset. */
  x402: X402Deps | undefined;
  /** Card payments (Stripe); undefined when TOLLGATE_STRIPE_SECRET_KEY / _WEBHOOK_SECRET are unset. */
  billing: Billing | undefined;
  /** Per-account alerts (src/alerts). */
  alerts: Alerts;
  /** Metrics (when TOLLGATE_METRICS_TOKEN or TOLLGATE_METRICS_PORT is set) and traces (OTEL_*). */
  telemetry: Telemetry | undefined;
  /** The admin listener's URL (TOLLGATE_METRICS_PORT), once listening. */
  adminUrl: string | undefined;
  /** Starts listening; resolves with the bound URL. */
  listen(): Promise<string>;
  /** Graceful: stop accepting, finish in-flight calls (resolving their holds), then close everything. */
  close(): Promise<void>;
}

export async function createGateway(config: Config, opts: GatewayOptions = {}): Promise<Gateway> {
  limitHeapGrowth(config.env.TOLLGATE_HEAP_GROWTH_PERCENT);
  const base = await openBase(config, {
    clock: opts.clock ?? systemClock,
    log: opts.log ?? createLogger(config.logLevel),
    otelEnv: opts.otelEnv ?? process.env,
    traceExporter: opts.traceExporter,
  });
  try {
    const books = await openBooks(base, opts);
    const opened = await openServices(base, books, opts);
    const run = await openRunPath(base, books, opened, opts);
    const doors = await openDoors(base, books, opened, run, opts);
    startBackground(base, books, opened, doors);
    const { ledger, money, x402 } = books;
    const { state, log, telemetry } = base;
    const { app, mcp, billing, alerts } = doors;
    const g = { config, app, ledger, money, mcp, state, run, log, x402, billing, alerts, telemetry };
    return Object.assign(serving(base, doors), g);
  } catch (err) {
    await base.closers.close();
    throw err;
  }
}
