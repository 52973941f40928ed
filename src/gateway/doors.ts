import type { Express } from 'express';
import { createAuthenticator } from '../../auth/authenticator.js';
import type { OtherSignIn } from '../../auth/oauth/context.js';
import { OAuthGrants } from '../../auth/oauth/grants.js';
import { MCP_SCOPE } from '../../auth/oauth/scopes.js';
import { createAuthorizationServer } from '../../auth/oauth/server.js';
import { accountPages } from '../account/routes.js';
import { type Alerts, keyCaps, openAlerts } from '../alerts/index.js';
import type { Billing } from '../billing/index.js';
import { gatewayReadiness } from '../cli/state.js';
import { createApp, type Door } from '../http/app.js';
import { fileRoutes } from '../http/file-routes.js';
import { receiptRoutes } from '../http/receipt-routes.js';
import { runRoutes } from '../http/run-routes.js';
import type { HotRoute } from '../http/server.js';
import { llmRoutes } from '../llm/routes.js';
import { createMcpDoor, MCP_PATH, type McpDoor } from '../mcp/door.js';
import { watchedAuth } from '../run/db-health.js';
import type { RunDeps } from '../run/execute.js';
import type { ReceiptSigner } from '../run/receipts.js';
import { mcpTopUp } from '../run/top-up.js';
import { createMetadataFetcher } from '../upstreams/metadata-fetch.js';
import type { Books } from './ledger.js';
import { type OperatorDoor, operatorDoor } from './operator.js';
import type { Opened } from './services.js';
import { type Base, VERSION } from './state.js';

// Step 5: the doors and the pages, mounted on one express app: the authorization server (OAuth for MCP hosts),
// card payments, the account pages, the model router, MCP and the HTTP shim. Their hot paths are served by
// node:http before express (src/http/server.ts).

export interface Doors {
  app: Express;
  mcp: McpDoor;
  billing: Billing | undefined;
  alerts: Alerts;
  /** The doors' hot paths, tried in order before express. */
  hot: HotRoute[];
  /** The operator's refunds and adjustments (./operator.ts): told where the server listens. */
  operator: OperatorDoor;
}

export async function openDoors(
  b: Base,
  m: Books,
  s: Opened,
  run: RunDeps & { receipts: ReceiptSigner },
  o: { metadataFetchCa?: string | undefined },
): Promise<Doors> {
  const { config, clock, log, state } = b;
  const { ledger, money, health, x402 } = m;
  const auth = watchedAuth(createAuthenticator(ledger), health);
  let accountSignIn: OtherSignIn | undefined;
  // OAuth for MCP hosts: its access tokens are for /mcp (their audience); the shim and the router take API keys.
  const clientMetadata = createMetadataFetcher({ allow: config.fetchAllow, ca: o.metadataFetchCa });
  b.closers.add(() => clientMetadata.close());
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
    onDatabaseError: (e) => health.report(e),
    // An account created by upstream sign-in starts empty: its welcome credit line comes with a card on file
    // (docs/spec.md §5; docs/decisions.md "Card payments and the credit line").
  });
  b.closers.add(() => oauth.close());
  const stripe = config.billing.stripe;
  const billing =
    stripe &&
    (await (
      await import('../billing/index.js')
    ).createBilling({
      config: config.billing,
      stripe,
      state,
      ledger,
      money,
      clock,
      log: log.child({ door: 'billing' }),
      publicUrl: () => config.publicUrl,
    }));
  b.closers.add(billing && (() => billing.close()));
  const mcpAuth = watchedAuth(createAuthenticator(ledger, [oauth.verifier]), health);

  // The pages people use: /, sign-up and sign-in, the /account dashboard (their upstream sign-in finishes
  // through the authorization server's one callback, hence the late binding).
  const grants = new OAuthGrants(oauth.store);
  // Per-account alerts (src/alerts): thresholds looked at off the call path, deliveries sent in the background.
  // API keys' daily and monthly caps are watched beside the apps' (docs/decisions.md "Limits per API key").
  const alerts = await openAlerts(config, {
    ...{ state, ledger, money, clock, log, health },
    apps: (id) => grants.of(id),
    caps: keyCaps({
      keys: (id) => ledger.listApiKeys(id),
      spent: (id, scope, window) => ledger.capSpend(id, scope, window),
    }),
  });
  b.closers.add(() => alerts.close());
  const account = await accountPages({
    state,
    ledger,
    billing,
    alerts,
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
    prices: { services: run.services, mode: config.env.TOLLGATE_LIST_UNAVAILABLE },
    oauthStore: oauth.store,
  });
  accountSignIn = account.otherSignIn;

  // The model router's door is always mounted: 503 not_configured without an upstream key.
  const { llm } = s;
  const llmCfg = config.llm;
  const llmDoor = llmRoutes({
    auth,
    log,
    maxBodyBytes: llmCfg.maxBodyBytes,
    llm: llm && {
      router: llm.router,
      run: llm.run,
      // The catalog's run path lends its lifecycle, scope, rate limiter and receipts (a router call is a call).
      metered: {
        ...run,
        router: llm.router,
        x402: x402 && { x402, ledger, publicUrl: () => run.services.publicUrl },
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
    serverName: config.env.TOLLGATE_MCP_SERVER_NAME,
    unavailable: config.env.TOLLGATE_LIST_UNAVAILABLE,
    topUp: mcpTopUp(state, clock, config.env.TOLLGATE_MCP_TOPUP_WAIT_SECONDS),
  });
  b.closers.add(() => mcp.close());
  const shim = runRoutes({
    run,
    auth,
    log,
    maxBodyBytes: config.maxBodyBytes,
    publicUrl: config.publicUrl,
    unavailable: config.env.TOLLGATE_LIST_UNAVAILABLE,
  });
  const { gatewayLinks } = s.files;
  const operator = operatorDoor({ config, state, ledger, money, log: log.child({ door: 'operator' }) });
  const doors: Door[] = [
    // First: the authorization server's endpoints and the operator's read their own request bodies.
    oauth.mount,
    operator.mount,
    (app) => app.use(shim.router),
    mcp.mount,
    // Local storage serves its signed links itself; S3's presigned links go straight to the bucket.
    ...(gatewayLinks ? [(app: Express) => app.use(fileRoutes(gatewayLinks))] : []),
    (app) => app.use(receiptRoutes(run.receipts)),
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
      inflight: run.inflight.size,
    }),
    ready: gatewayReadiness(state, s.files, () => !run.inflight.accepting, health, log),
    onError: (err) => health.report(err),
    errorPage: account.errorPage,
  });
  return { app, mcp, billing, alerts, hot: [shim.hot, mcp.hot, llmDoor.hot], operator };
}
