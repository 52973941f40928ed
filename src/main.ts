import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { Express } from 'express';
import type { Logger } from 'pino';
import { createAuthenticator } from '../auth/authenticator.js';
import type { OtherSignIn } from '../auth/oauth/context.js';
import { OAuthGrants } from '../auth/oauth/grants.js';
import { MCP_SCOPE } from '../auth/oauth/scopes.js';
import { createAuthorizationServer } from '../auth/oauth/server.js';
import { handlers as catalogHandlers } from '../tools/index.js';
import type { Handlers } from '../tools/types.js';
import { accountPages } from './account/routes.js';
import type { StateDb } from './backend.js';
import type { Billing } from './billing/index.js';
import { operatorDoor } from './cli/local-gateway.js';
import { gatewayReadiness, openGatewayState } from './cli/state.js';
import type { Config } from './config/index.js';
import { createWebStack } from './engine/setup.js';
import { createApp, type Door } from './http/app.js';
import { fileRoutes } from './http/file-routes.js';
import { receiptRoutes } from './http/receipt-routes.js';
import { runRoutes } from './http/run-routes.js';
import { createHttpServer } from './http/server.js';
import { openStateLedger } from './ledger/index.js';
import type { Ledger } from './ledger/types.js';
import { type Clock, systemClock } from './lib/clock.js';
import { limitHeapGrowth } from './lib/heap-growth.js';
import { llmRoutes } from './llm/routes.js';
import { createLogger } from './log.js';
import { createMcpDoor, MCP_PATH, type McpDoor } from './mcp/door.js';
import { instrumentClient } from './ops/instrument.js';
import { listenAdmin, metricsRoute } from './ops/metrics-route.js';
import { startMonitoring } from './ops/monitoring.js';
import type { Telemetry } from './ops/telemetry.js';
import type { FileMetaStore, Services } from './ports/index.js';
import { DatabaseHealth, watchedAuth } from './run/db-health.js';
import type { RunDeps } from './run/execute.js';
import { Inflight } from './run/inflight.js';
import { Lifecycle } from './run/lifecycle.js';
import { openRails } from './run/rails-setup.js';
import { openRateLimiter } from './run/rate-limit.js';
import { openReceiptKeyStore } from './run/receipt-keys.js';
import { loadReceiptSigner } from './run/receipts.js';
import { startSweeper } from './run/sweeper.js';
import type { X402Deps } from './run/x402/call.js';
import { openFileMetaStore } from './storage/file-meta.js';
import { openHandleStore } from './storage/handles.js';
import { openFileStorage } from './storage/index.js';
import { createCueFrameClient } from './upstreams/cueframe.js';
import { createFalClient } from './upstreams/fal.js';
import { createDispatcher } from './upstreams/http.js';
import { createMetadataFetcher } from './upstreams/metadata-fetch.js';
import { createRealEstateApiClient } from './upstreams/realestateapi.js';
import { createRentCastClient } from './upstreams/rentcast.js';
import { createDownloader } from './upstreams/safe-download.js';
import { createWebFetcher } from './upstreams/web-fetch.js';

// The composition root: the only place (with src/cli) that wires concrete implementations together. Optional
// parts are imported only when configured or first used (docs/decisions.md "Modules loaded when used").

export const VERSION = '0.1.0';

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
  const clock = opts.clock ?? systemClock;
  const log = opts.log ?? createLogger(config.logLevel);
  // SQLite: one process owns the data dir. PostgreSQL: any number of replicas, each with its own lease.
  const opened = await openGatewayState(config, clock, log);
  const { state } = opened;
  // Monitoring (docs/operator.md "Monitoring"): nothing is counted or traced unless configured.
  const METRICS_TOKEN = config.env.TOLLGATE_METRICS_TOKEN;
  const METRICS_PORT = config.env.TOLLGATE_METRICS_PORT;
  const monitoring = await startMonitoring(
    {
      metrics: METRICS_TOKEN !== undefined || METRICS_PORT !== undefined,
      timing: config.env.TOLLGATE_TIMING === '1',
      version: VERSION,
      gauges: { inflight: () => inflight.size, pendingHolds: () => money.pendingHolds() },
      otelEnv: opts.otelEnv ?? process.env,
      traceExporter: opts.traceExporter,
    },
    log,
  );
  const { telemetry, prom } = monitoring;
  const measured = <T extends object>(vendor: string, client: T | undefined): T | undefined =>
    client && telemetry ? instrumentClient(vendor, client, telemetry) : client;

  const ledger = openStateLedger(state, {
    clock,
    idempotencyTtlMs: config.idempotencyTtlMs,
    groupCommit: true,
    keyCacheTtlMs: config.keyCacheTtlMs,
    onCheckpointError: (message) => log.error({ message }, 'ledger checkpoint failed'),
    commits: prom?.commits,
  });
  // An outage of the database refuses calls with 503 until the ledger answers again (src/run/db-health.ts).
  const health = new DatabaseHealth(() => ledger.ping(), log);
  const payments = config.billing.stripe;
  const money = new Lifecycle({
    health,
    ledger,
    clock,
    log,
    holdTtlMs: config.holdTtlMs,
    // With card payments on, a refusal for lack of credit points to the dashboard (top-up, card).
    accountUrl: payments ? () => `${config.publicUrl}/account` : undefined,
    telemetry,
  });

  // Holds a dead process left (an older SQLite version's rows; PostgreSQL: this replica's previous run and replicas
  // whose lease expired, never a live replica's) are released now rather than after their TTL.
  if (!opts.skipRecovery) {
    const orphans = await money.voidOrphans('orphaned_by_restart');
    if (orphans > 0) log.warn({ orphans }, 'voided holds left pending by a previous process');
  }
  const x402 =
    config.x402 &&
    (await import('./run/x402/index.js')).createX402Payments(config.x402, state, clock, telemetry);
  if (x402 && !opts.skipRecovery) {
    // x402 payments mid-call in a dead process (this replica's previous run, or a replica whose lease expired):
    // unused ones are released; a settlement in progress is unknown.
    const r = await x402.payments.recover(true);
    if (r.released + r.unknown > 0) log.warn(r, 'x402: recovered payments left by a previous process');
  }

  const { upstreamConnections: connections, fetchAllow: allow } = config;
  const web = createWebFetcher({ allow, maxBytes: config.env.TOLLGATE_FETCH_MAX_BYTES, connections });
  // scraperA/B/C: vendor clients where configured, the built-in web engine elsewhere (src/engine/setup.ts).
  const webStack = createWebStack(config, { fetcher: web, clock, log, state });
  // propstats / propdata, mediastage / videoasm: a client only for a keyed vendor (else their actions answer
  // not_configured). One pooled dispatcher serves them all: undici keeps a connection pool per origin.
  const vendorDispatcher = createDispatcher({ connections });
  const { RENTCAST, REALESTATEAPI } = config.vendors;
  const propertyClient = { dispatcher: vendorDispatcher, timeoutMs: config.upstreamTimeoutMs };
  const rentcast = RENTCAST.apiKey
    ? createRentCastClient({ ...propertyClient, baseUrl: RENTCAST.baseUrl, apiKey: RENTCAST.apiKey })
    : undefined;
  const realestateapi = REALESTATEAPI.apiKey
    ? createRealEstateApiClient({
        ...propertyClient,
        baseUrl: REALESTATEAPI.baseUrl,
        apiKey: REALESTATEAPI.apiKey,
      })
    : undefined;
  // files: metadata in the gateway's database, bytes on local disk or in S3 (TOLLGATE_STORAGE_URL);
  // mediastage / videoasm: fal and CueFrame when keyed.
  const fileStorage = await openFileStorage({
    location: config.storage,
    state,
    dataDir: config.dataDir,
    meta: opts.fileMeta ?? openFileMetaStore(state),
    clock,
    log: log.child({ component: 'files' }),
    publicUrl: () => services.publicUrl,
    signingSecret: config.env.TOLLGATE_SIGNING_SECRET,
  });
  const { library: files, gatewayLinks } = fileStorage;
  const download = createDownloader({ allow: config.fetchAllow });
  const { FAL, CUEFRAME } = config.vendors;
  const mediaClient = { dispatcher: vendorDispatcher, timeoutMs: config.upstreamTimeoutMs, log };
  const fal = FAL.apiKey
    ? createFalClient({ ...mediaClient, baseUrl: FAL.baseUrl, apiKey: FAL.apiKey })
    : undefined;
  const cueframe = CUEFRAME.apiKey
    ? createCueFrameClient({ ...mediaClient, baseUrl: CUEFRAME.baseUrl, apiKey: CUEFRAME.apiKey })
    : undefined;
  const services: Services = {
    publicUrl: config.publicUrl,
    vendors: {
      rentcast: measured('rentcast', rentcast),
      realestateapi: measured('realestateapi', realestateapi),
      fal: measured('fal', fal),
      cueframe: measured('cueframe', cueframe),
      firecrawl: measured('firecrawl', webStack.vendors.firecrawl),
      fastcrw: measured('fastcrw', webStack.vendors.fastcrw),
      scrapingant: measured('scrapingant', webStack.vendors.scrapingant),
    },
    engine: webStack.engine,
    web,
    handles: openHandleStore(state, clock),
    files,
    download,
  };

  // Crawls left running by a previous process resume from their stored frontier; background jobs (whose work
  // was in memory) are marked failed. Either way none stays `scraping`/`processing` for ever.
  const webRecovery = await webStack.engine.recover();
  if (webRecovery.crawlsResumed + webRecovery.crawlsFailed + webRecovery.jobsFailed > 0) {
    log.warn(webRecovery, 'web engine: recovered work left by a previous process');
  }
  log.info({ scrapers: webStack.routes }, 'web engine routes');

  const inflight = new Inflight();
  // Receipts of paid responses: the operator's key, or one generated once into the database (every replica).
  const receipts = await loadReceiptSigner(
    config.env.TOLLGATE_RECEIPT_SIGNING_KEY,
    openReceiptKeyStore(state, clock),
    () => services.publicUrl,
  );
  const run: RunDeps = {
    money,
    ledger,
    handlers: { ...catalogHandlers, ...opts.handlers } as Handlers,
    services,
    clock,
    log,
    inflight,
    rateLimiter: openRateLimiter(state, config.rateLimitPerSecond, config.rateLimitBurst, () => clock.now()),
    receipts,
    telemetry,
    health,
    rails: await openRails(config, { state, clock, log, x402, publicUrl: () => services.publicUrl }),
  };
  const auth = watchedAuth(createAuthenticator(ledger), health);
  let accountSignIn: OtherSignIn | undefined;
  // OAuth for MCP hosts: its access tokens are for /mcp (their audience); the shim and the router take API keys.
  const clientMetadata = createMetadataFetcher({ allow: config.fetchAllow, ca: opts.metadataFetchCa });
  const oauth = await createAuthorizationServer({
    state,
    ledger,
    log: log.child({ door: 'oauth' }),
    publicUrl: () => config.publicUrl,
    resource: () => `${config.publicUrl}${MCP_PATH}`,
    allowedOrigins: config.allowedOrigins,
    config: config.oauth,
    fetchClientMetadata: clientMetadata.get,
    otherSignIn: (req, res, result) => (accountSignIn as OtherSignIn)(req, res, result),
    // An account created by upstream sign-in starts empty: its welcome credit line comes with a card on file
    // (docs/spec.md §5; docs/decisions.md "Card payments and the credit line").
  });
  const billingModule = payments && (await import('./billing/index.js'));
  const billing =
    payments &&
    billingModule &&
    (await billingModule.createBilling({
      config: config.billing,
      stripe: payments,
      state,
      ledger,
      money,
      clock,
      log: log.child({ door: 'billing' }),
      publicUrl: () => config.publicUrl,
    }));
  billing?.scheduler.start();
  const mcpAuth = watchedAuth(createAuthenticator(ledger, [oauth.verifier]), health);

  // The pages people use: /, sign-up and sign-in, the /account dashboard (their upstream sign-in finishes
  // through the authorization server's one callback, hence the late binding).
  const grants = new OAuthGrants(oauth.store);
  const account = await accountPages({
    state,
    ledger,
    billing,
    apps: {
      list: (id) => grants.of(id),
      setLimit: (id, client, micros) => oauth.store.setDailyLimit(id, client, micros),
      revoke: (id, client) => grants.revoke(id, client),
    },
    upstream: oauth.upstreamSignIn,
    signup: config.billing.signup,
    signupsPerHour: config.billing.signupsPerHour,
    signInAttemptsPerMinute: config.oauth.signInAttemptsPerMinute,
    welcomeLineMicros: config.billing.welcomeLineMicros,
    x402: x402 !== undefined,
    publicUrl: () => config.publicUrl,
    clock,
    log: log.child({ door: 'account' }),
    version: VERSION,
    prices: { services, mode: config.env.TOLLGATE_LIST_UNAVAILABLE },
  });
  accountSignIn = account.otherSignIn;

  // The model router: its door is always mounted (503 not_configured without a key); with a key (then loaded) it
  // also backs the internal LlmService that actions use (the gateway's own cost, never billed per token).
  const llmCfg = config.llm;
  const llm =
    llmCfg.apiKey === undefined
      ? undefined
      : (await import('./llm/index.js')).createModelRouter(
          { ...llmCfg, apiKey: llmCfg.apiKey },
          {
            clock,
            log: log.child({ door: 'llm' }),
            wrapUpstream: telemetry && ((u) => instrumentClient('llm', u, telemetry)),
          },
        );
  if (llm) {
    services.llm = llm.service;
    llm.start();
  }
  const llmDoor = llmRoutes({
    auth,
    log,
    maxBodyBytes: llmCfg.maxBodyBytes,
    llm: llm && {
      router: llm.router,
      run: llm.run,
      metered: {
        money,
        clock,
        log,
        inflight,
        rateLimiter: run.rateLimiter,
        telemetry,
        health,
        router: llm.router,
        receipts,
        x402: x402 && { x402, ledger, publicUrl: () => services.publicUrl },
        limits: {
          dailyCapMicros: llm.dailyCapMicros,
          timeoutMs: llmCfg.timeoutMs,
          firstByteTimeoutMs: llmCfg.firstByteTimeoutMs,
        },
      },
    },
  });

  const mcp = createMcpDoor({
    run,
    auth: mcpAuth,
    authorizationServers: () => [oauth.issuer()],
    requiredScopes: [MCP_SCOPE],
    log,
    version: VERSION,
    publicUrl: () => config.publicUrl,
    allowedHosts: config.allowedHosts,
    allowedOrigins: config.allowedOrigins,
    maxBodyBytes: config.maxBodyBytes,
    x402,
    serverName: config.env.TOLLGATE_MCP_SERVER_NAME,
    unavailable: config.env.TOLLGATE_LIST_UNAVAILABLE,
  });
  const shim = runRoutes({
    run,
    auth,
    log,
    maxBodyBytes: config.maxBodyBytes,
    publicUrl: config.publicUrl,
    x402,
    unavailable: config.env.TOLLGATE_LIST_UNAVAILABLE,
  });
  // The operator's refunds and adjustments over HTTP (docs/operator.md "Refunds and adjustments").
  const operator = operatorDoor({ config, state, ledger, money, log: log.child({ door: 'operator' }) });
  const doors: Door[] = [
    // First: the authorization server's endpoints read their own request bodies.
    oauth.mount,
    operator.mount,
    (app) => app.use(shim.router),
    mcp.mount,
    // Local storage serves its signed links itself; S3's presigned links go straight to the bucket.
    ...(gatewayLinks ? [(app: Express) => app.use(fileRoutes(gatewayLinks))] : []),
    (app) => app.use(receiptRoutes(receipts)),
    (app) => app.use(llmDoor.router),
    ...(billing ? [(app: Express) => void app.use(billing.routes)] : []),
    (app) => app.use(account.router),
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
    ready: gatewayReadiness(state, fileStorage, () => !inflight.accepting, health, log),
    onError: (err) => health.report(err),
  });

  const sweeper = startSweeper({ money, x402, clock, log, health, intervalMs: config.sweepIntervalMs });

  let server: Server | undefined;
  let admin: { server: Server; url: string } | undefined;
  let closed = false;
  const metricsHot = prom && METRICS_TOKEN !== undefined ? [metricsRoute(prom, METRICS_TOKEN)] : [];

  return {
    config,
    app,
    ledger,
    money,
    mcp,
    state,
    run,
    log,
    x402,
    billing,
    telemetry,
    get adminUrl() {
      return admin?.url;
    },
    async listen() {
      if (prom && METRICS_PORT !== undefined) {
        admin = await listenAdmin(
          metricsRoute(prom, METRICS_TOKEN),
          config.env.TOLLGATE_METRICS_HOST,
          METRICS_PORT,
        );
        log.info({ url: `${admin.url}/metrics` }, 'metrics listener');
      }
      return new Promise((resolve, reject) => {
        server = createHttpServer(app, [shim.hot, mcp.hot, llmDoor.hot, ...metricsHot]);
        server.keepAliveTimeout = 65_000;
        // A 100 MB file PUT on a slow link outlives Node's 300 s default; headers still must arrive in 60 s.
        server.requestTimeout = 30 * 60_000;
        server.headersTimeout = 60_000;
        server.once('error', reject);
        server.listen(config.port, config.host, () => {
          const addr = server?.address() as AddressInfo;
          const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
          operator.listening(`http://${host}:${addr.port}`);
          resolve(`http://${host}:${addr.port}`);
        });
      });
    },
    async close() {
      if (closed) return;
      closed = true;
      operator.close();
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
      if (admin) await new Promise((r) => admin?.server.close(r));
      await mcp.close();
      oauth.close();
      await clientMetadata.close();
      await billing?.close();
      sweeper.stop();
      health.close();
      await ledger.close();
      // Outbound clients and storage, independent of each other.
      await Promise.all([
        ...[webStack, web, vendorDispatcher, download, fileStorage].map((c) => c.close()),
        llm?.close(),
        run.rails?.close(),
        x402?.facilitator.close(),
      ]);
      await monitoring.close();
      await opened.close();
      log.flush();
    },
  };
}
