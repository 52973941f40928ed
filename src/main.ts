import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';
import type { Logger } from 'pino';
import { createAuthenticator } from '../auth/authenticator.js';
import type { Services } from '../tools/context.js';
import { handlers as catalogHandlers } from '../tools/index.js';
import type { Handlers } from '../tools/types.js';
import type { Config } from './config.js';
import { createApp, type Door } from './http/app.js';
import { runRoutes } from './http/run-routes.js';
import { SqliteHandleStore } from './jobs/sqlite-handles.js';
import { openLedger } from './ledger/index.js';
import type { Ledger } from './ledger/types.js';
import { type Clock, systemClock } from './lib/clock.js';
import { acquireInstanceLock } from './lib/instance-lock.js';
import type { SqliteDb } from './lib/sqlite.js';
import { createLogger } from './log.js';
import type { RunDeps } from './run/execute.js';
import { Inflight } from './run/inflight.js';
import { createWebFetcher } from './upstreams/web-fetch.js';

// The composition root: the only place (with src/cli) that wires concrete implementations together.

export const VERSION = '0.1.0';

export interface GatewayOptions {
  clock?: Clock;
  log?: Logger;
  /** Tests replace handlers to exercise the run path with controlled upstream behaviour. */
  handlers?: Partial<Handlers>;
  /** Skip the start-up recovery of orphaned holds (tests that inspect them). */
  skipRecovery?: boolean;
}

export interface Gateway {
  config: Config;
  app: Express;
  ledger: Ledger;
  db: SqliteDb;
  run: RunDeps;
  log: Logger;
  /** Starts listening; resolves with the bound URL. */
  listen(): Promise<string>;
  /** Graceful: stop accepting, finish in-flight calls (resolving their holds), then close everything. */
  close(): Promise<void>;
}

export async function createGateway(config: Config, opts: GatewayOptions = {}): Promise<Gateway> {
  const clock = opts.clock ?? systemClock;
  const log = opts.log ?? createLogger(config.logLevel);
  const releaseLock = acquireInstanceLock(config.dataDir);
  const { ledger, db } = openLedger(config.dataDir, { clock, idempotencyTtlMs: config.idempotencyTtlMs });

  // One process owns this data dir (the lock above), so any hold still pending was left by a process that
  // died between hold and capture: release it now rather than after its TTL.
  if (!opts.skipRecovery) {
    const orphans = await ledger.voidAllPending('orphaned_by_restart');
    if (orphans > 0) log.warn({ orphans }, 'voided holds left pending by a previous process');
  }

  const web = createWebFetcher({ allow: config.fetchAllow });
  const services: Services = {
    publicUrl: config.publicUrl,
    vendors: {},
    web,
    handles: new SqliteHandleStore(db, clock),
  };

  const inflight = new Inflight();
  const run: RunDeps = {
    ledger,
    handlers: { ...catalogHandlers, ...opts.handlers } as Handlers,
    services,
    clock,
    log,
    inflight,
    holdTtlMs: config.holdTtlMs,
  };
  const auth = createAuthenticator(ledger);

  const doors: Door[] = [
    (app) =>
      app.use(runRoutes({ run, auth, maxBodyBytes: config.maxBodyBytes, publicUrl: config.publicUrl })),
  ];
  const started = Date.now();
  const app = createApp({
    log,
    doors,
    maxBodyBytes: config.maxBodyBytes,
    health: () => ({
      version: VERSION,
      uptime_s: Math.round((Date.now() - started) / 1000),
      inflight: inflight.size,
    }),
  });

  const sweeper = setInterval(() => {
    ledger
      .sweep(clock.now())
      .then((r) => {
        if (r.expiredHolds > 0) log.warn(r, 'sweeper voided expired holds');
      })
      .catch((err) => log.error({ err }, 'sweep failed'));
  }, config.sweepIntervalMs);
  sweeper.unref();

  let server: Server | undefined;
  let closed = false;

  return {
    config,
    app,
    ledger,
    db,
    run,
    log,
    listen() {
      return new Promise((resolve, reject) => {
        server = createServer(app);
        server.keepAliveTimeout = 65_000;
        server.once('error', reject);
        server.listen(config.port, config.host, () => {
          const addr = server?.address() as AddressInfo;
          const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
          resolve(`http://${host}:${addr.port}`);
        });
      });
    },
    async close() {
      if (closed) return;
      closed = true;
      const stopped = server
        ? new Promise<void>((r) => {
            server?.close(() => r());
            server?.closeIdleConnections();
          })
        : Promise.resolve();
      await inflight.drain(config.shutdownGraceMs);
      // Let the doors write the responses of the calls that just finished before cutting connections.
      await new Promise((r) => setImmediate(r));
      server?.closeAllConnections();
      await stopped;
      clearInterval(sweeper);
      await ledger.close();
      await web.close();
      db.close();
      releaseLock();
    },
  };
}
