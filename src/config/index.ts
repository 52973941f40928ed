import { resolve } from 'node:path';
import { z } from 'zod';
import { type AlertsConfig, alertsConfig, alertsEnvShape } from './alerts.js';
import { type BillingConfig, billingConfig } from './billing.js';
import { evmAddress, int, list, url, usd } from './fields.js';
import { type LlmConfig, llmCeiling, llmConfig, llmOverrides } from './llm.js';
import { type OAuthConfig, oauthConfig } from './oauth.js';
import {
  type MppConfig,
  mppConfig,
  railsEnvShape,
  type X402SessionConfig,
  x402SessionConfig,
} from './rails.js';
import { type StorageConfig, storageConfig } from './storage.js';
import { type X402Config, x402Config } from './x402.js';

// One schema over every TOLLGATE_* variable, parsed once at start-up. A bad value stops the process with
// every problem listed (not just the first). `.env.example` lists the same variables; a contract test keeps
// the two in step.

/** Vendor groups (docs/vendors.md): `TOLLGATE_<VENDOR>_API_KEY` / `_BASE_URL`. */
export const VENDORS = {
  FIRECRAWL: { label: 'scraperA (Firecrawl)', defaultBaseUrl: 'https://api.firecrawl.dev' },
  FASTCRW: { label: 'scraperB (fastCRW)', defaultBaseUrl: 'https://api.fastcrw.com' },
  SCRAPINGANT: { label: 'scraperC (ScrapingAnt)', defaultBaseUrl: 'https://api.scrapingant.com' },
  RENTCAST: { label: 'propstats (RentCast)', defaultBaseUrl: 'https://api.rentcast.io/v1' },
  REALESTATEAPI: { label: 'propdata (RealEstateAPI)', defaultBaseUrl: 'https://api.realestateapi.com' },
  FAL: { label: 'mediastage (fal.ai storage)', defaultBaseUrl: 'https://rest.fal.ai' },
  CUEFRAME: { label: 'videoasm (CueFrame)', defaultBaseUrl: 'https://api.cueframe.ai/v1' },
  LLM: { label: 'model router upstream', defaultBaseUrl: 'https://openrouter.ai/api/v1' },
} as const;
export type VendorName = keyof typeof VENDORS;

const vendorShape = Object.fromEntries(
  Object.keys(VENDORS).flatMap((v) => [
    [`TOLLGATE_${v}_API_KEY`, z.string().min(1).optional()],
    [`TOLLGATE_${v}_BASE_URL`, url.optional()],
  ]),
) as Record<string, z.ZodOptional<z.ZodString> | z.ZodOptional<typeof url>>;

export const envSchema = z.object({
  TOLLGATE_PORT: int(0, 65535).default(8402),
  TOLLGATE_HOST: z.string().min(1).default('127.0.0.1'),
  TOLLGATE_DATA_DIR: z.string().min(1).default('./data'),
  TOLLGATE_PUBLIC_URL: url.optional(),
  /** The MCP server's registry name (server card, `tollgate server-json`). Default: the public URL's host reversed. */
  TOLLGATE_MCP_SERVER_NAME: z
    .string()
    .min(3)
    .max(200)
    .regex(
      /^[a-zA-Z0-9.-]+\/[a-zA-Z0-9._-]+$/,
      'a reverse-DNS namespace, one slash and a name: com.example/tollgate',
    )
    .optional(),
  /** Bearer token for GET /metrics on the public port; unset: /metrics is not served there. */
  TOLLGATE_METRICS_TOKEN: z.string().min(32, 'at least 32 characters').optional(),
  /** A separate admin listener serving only /metrics (token required too when TOLLGATE_METRICS_TOKEN is set). */
  TOLLGATE_METRICS_PORT: int(0, 65535).optional(),
  TOLLGATE_METRICS_HOST: z.string().min(1).default('127.0.0.1'),
  /**
   * Bearer token of the operator's HTTP endpoints (POST /api/operator/refund and /adjust); unset: only the CLI
   * beside a SQLite gateway reaches them (with the per-start token in the data dir), elsewhere they answer 503.
   */
  TOLLGATE_ADMIN_TOKEN: z.string().min(32, 'at least 32 characters').optional(),
  TOLLGATE_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /**
   * 1: time the stages of each call (sent one at a time) and print the table at shutdown, on stderr
   * (docs/benchmarks.md "Where the time of a paid call goes"). A measuring tool: it replaces OTEL tracing.
   */
  TOLLGATE_TIMING: z.enum(['0', '1']).default('0'),
  /** How far V8 lets the heap grow past its live set before collecting, percent (0: V8's own rule, up to 4×). */
  TOLLGATE_HEAP_GROWTH_PERCENT: int(0, 1000).default(50),
  /** Maximum JSON request body, bytes. */
  TOLLGATE_MAX_BODY_BYTES: int(1024, 64 * 1024 * 1024).default(1024 * 1024),
  /** How long a hold may stay pending before the sweeper voids it, seconds. Longer than any action timeout. */
  TOLLGATE_HOLD_TTL_SECONDS: int(1, 86_400).default(900),
  TOLLGATE_SWEEP_INTERVAL_SECONDS: int(1, 3600).default(30),
  /** Idempotency keys are kept at least this long (Stripe keeps 24 h). */
  TOLLGATE_IDEMPOTENCY_TTL_HOURS: int(24, 24 * 90).default(24),
  TOLLGATE_KEY_CACHE_SECONDS: int(0, 300).default(5),
  /** Upper bound for one upstream call, seconds (actions may set a shorter one). */
  TOLLGATE_UPSTREAM_TIMEOUT_SECONDS: int(1, 600).default(60),
  /**
   * Connections each upstream pool may open to one host (the web engine's fetcher, vendor clients, the model
   * router's upstream): sized for the calls in flight, so a slow upstream sets their pace, not a queue in here.
   */
  TOLLGATE_UPSTREAM_CONNECTIONS: int(1, 65_536).default(1024),
  /** Graceful shutdown: how long in-flight calls may take to finish before their holds are voided. */
  TOLLGATE_SHUTDOWN_GRACE_SECONDS: int(0, 600).default(30),
  /** Calls per second each account may make on average (0 disables the limit), and the burst allowed. */
  TOLLGATE_RATE_LIMIT_PER_SECOND: int(0, 100_000).default(50),
  TOLLGATE_RATE_LIMIT_BURST: int(1, 1_000_000).default(100),
  /** Hosts (and host:port) accepted in the Host header of /mcp, besides the public URL's and loopback. */
  TOLLGATE_ALLOWED_HOSTS: list.default([]),
  /** Origins accepted for browser clients of /mcp (e.g. MCP Inspector's web UI). */
  TOLLGATE_ALLOWED_ORIGINS: list.default([]),
  /** Hosts/CIDRs the SSRF guard lets through (tests, intranets). Empty: loopback and private ranges refused. */
  TOLLGATE_FETCH_ALLOW: list.default([]),
  /** Actions this gateway cannot run (vendor not configured): hide them from listings, or list them marked. */
  TOLLGATE_LIST_UNAVAILABLE: z.enum(['hide', 'mark']).default('hide'),
  // ---- the built-in web engine (scraperA/B/C without a vendor; docs/decisions.md "Web engine") ----
  /** Per scraper group: auto (vendor when its key is set, else built-in), vendor (never built-in), builtin. */
  TOLLGATE_SCRAPERA_ENGINE: z.enum(['auto', 'vendor', 'builtin']).default('auto'),
  TOLLGATE_SCRAPERB_ENGINE: z.enum(['auto', 'vendor', 'builtin']).default('auto'),
  TOLLGATE_SCRAPERC_ENGINE: z.enum(['auto', 'vendor', 'builtin']).default('auto'),
  /** Headless Chromium for JavaScript rendering and screenshots (Debian's `chromium` package). */
  TOLLGATE_CHROMIUM_PATH: z.string().min(1).default('/usr/bin/chromium'),
  /** Pages rendered in the browser at once. */
  TOLLGATE_BROWSER_CONCURRENCY: int(1, 64).default(2),
  /** Largest page the engine downloads, bytes (larger → 422, not charged). */
  TOLLGATE_FETCH_MAX_BYTES: int(1024, 1024 * 1024 * 1024).default(10 * 1024 * 1024),
  /** Crawl politeness: fetches at once per host, and the least time between two requests to one host, ms. */
  TOLLGATE_CRAWL_CONCURRENCY: int(1, 32).default(2),
  TOLLGATE_CRAWL_DELAY_MS: int(0, 60_000).default(250),
  /** Most pages of one crawl (scraperA's limit and Firecrawl crawls are capped to it). */
  TOLLGATE_CRAWL_MAX_PAGES: int(1, 100_000).default(1000),
  /** Crawls running at once; more wait their turn (still `scraping`). */
  TOLLGATE_CRAWL_MAX_JOBS: int(1, 256).default(4),
  /** scraperB/extract answers inline when done within this many seconds, else { id, status: processing }. */
  TOLLGATE_EXTRACT_INLINE_SECONDS: int(0, 110).default(25),
  /** Credit given to the operator account created by the first `serve`, USD. */
  TOLLGATE_OPERATOR_CREDIT_USD: usd.default('0'),
  // Money in (src/config/billing.ts): Stripe cards and top-ups, the welcome credit line, sign-up.
  TOLLGATE_STRIPE_SECRET_KEY: z
    .string()
    .regex(/^(sk|rk)_(test|live)_\w+$/, 'a Stripe secret key (sk_live_… or sk_test_…)')
    .optional(),
  TOLLGATE_STRIPE_WEBHOOK_SECRET: z
    .string()
    .regex(/^whsec_\w+$/, 'a webhook signing secret (whsec_…)')
    .optional(),
  TOLLGATE_STRIPE_BASE_URL: url.optional(),
  /** The credit line an account gets once a card is on file (docs/spec.md §5, §8: 2 USD); 0 turns lines off. */
  TOLLGATE_WELCOME_CREDIT_USD: usd.default('2'),
  TOLLGATE_TOPUP_MIN_USD: usd.default('5'),
  TOLLGATE_TOPUP_MAX_USD: usd.default('500'),
  TOLLGATE_SETTLE_THRESHOLD_USD: usd.default('1'),
  TOLLGATE_SETTLE_EVERY_HOURS: int(1, 24 * 31).default(24),
  TOLLGATE_SETTLE_CHECK_SECONDS: int(1, 3600).default(60),
  /**
   * How long an MCP call retried after its host opened the top-up page waits for the money (src/mcp/top-up.ts);
   * below the SDK clients' 60 s request timeout.
   */
  TOLLGATE_MCP_TOPUP_WAIT_SECONDS: int(0, 600).default(50),
  /** Self-serve sign-up on the dashboard (an upstream OIDC provider, when set, signs people up regardless). */
  TOLLGATE_SIGNUP: z.enum(['open', 'closed']).default('closed'),
  TOLLGATE_SIGNUPS_PER_HOUR: int(1, 10_000).default(5),
  /** Secret for the signed file links (files/*). Unset: one is generated once into <data dir>/files/signing.key. */
  TOLLGATE_SIGNING_SECRET: z.string().min(32, 'at least 32 characters').optional(),
  /** Signs receipts: a P-256 private JWK (JSON). Unset: one is generated once and kept in the database. */
  TOLLGATE_RECEIPT_SIGNING_KEY: z
    .string()
    .refine((v) => /"kty"\s*:\s*"EC"/.test(v) && /"d"\s*:/.test(v), 'a P-256 private JWK (JSON)')
    .optional(),
  /**
   * PostgreSQL for all state (postgres://…): several replicas and `serve --workers` share it (docs/operator.md
   * "Scale out"). Unset: SQLite under the data dir, one process.
   */
  TOLLGATE_DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'a postgres:// URL')
    .optional(),
  /** Connections each process may hold to PostgreSQL. */
  TOLLGATE_DATABASE_POOL: int(1, 500).default(10),
  /** How long a replica's lease lasts without renewal before a survivor voids its holds. */
  TOLLGATE_REPLICA_LEASE_SECONDS: int(5, 3600).default(30),
  /** Stored files in an S3-compatible bucket shared by replicas (docs/operator.md); unset: <data dir>/files. */
  TOLLGATE_STORAGE_URL: z.string().optional(),
  // OAuth for MCP hosts (auth/oauth): the built-in authorization server, always on; sign-in with an API key, or
  // through an upstream OpenID Connect provider when TOLLGATE_OIDC_ISSUER is set.
  /** Lifetime of an OAuth access token; hosts refresh it with their (rotating) refresh token. */
  TOLLGATE_OAUTH_ACCESS_TOKEN_TTL_SECONDS: int(60, 86_400).default(900),
  /** A refresh token unused this long expires (each use rotates it and restarts the clock). */
  TOLLGATE_OAUTH_REFRESH_TOKEN_TTL_SECONDS: int(3600, 365 * 86_400).default(30 * 86_400),
  /** Signs the sign-in cookies. Unset: one is generated once and kept in the database. */
  TOLLGATE_OAUTH_COOKIE_SECRET: z.string().min(32, 'at least 32 characters').optional(),
  /** Sign-in attempts (and client registrations) per client IP per minute; beyond it 429. */
  TOLLGATE_OAUTH_SIGNIN_ATTEMPTS_PER_MINUTE: int(1, 10_000).default(10),
  /** Upstream OpenID Connect provider for "Sign in with …" (first sign-in creates the account). */
  TOLLGATE_OIDC_ISSUER: url.optional(),
  TOLLGATE_OIDC_CLIENT_ID: z.string().min(1).optional(),
  /** A secret; never logged. Unset: the gateway is a public client of the upstream (PKCE only). */
  TOLLGATE_OIDC_CLIENT_SECRET: z.string().min(1).optional(),
  /** Label of the upstream sign-in button; default: the issuer's host name. */
  TOLLGATE_OIDC_NAME: z.string().min(1).max(60).optional(),
  // x402 (README "Pay with x402"): off, API keys only, until a pay-to address is set. Keys/headers are secrets.
  TOLLGATE_X402_PAY_TO: evmAddress.optional(),
  TOLLGATE_X402_NETWORK: z
    .string()
    .regex(/^eip155:[1-9]\d{0,11}$/, 'CAIP-2, e.g. eip155:8453')
    .default('eip155:8453'),
  /** Token (a 6-decimal USD stablecoin with EIP-3009) and its EIP-712 domain; default: the network's USDC. */
  TOLLGATE_X402_ASSET: evmAddress.optional(),
  TOLLGATE_X402_ASSET_NAME: z.string().min(1).max(100).optional(),
  TOLLGATE_X402_ASSET_VERSION: z.string().min(1).max(20).optional(),
  TOLLGATE_X402_MAX_TIMEOUT_SECONDS: int(30, 3600).default(300),
  /** Actions priced at or above this many cents settle before they run ("upfront"); unset: never. */
  TOLLGATE_X402_SETTLE_FIRST_CENTS: int(1, 100_000_000).optional(),
  TOLLGATE_X402_FACILITATOR_URL: url.optional(),
  TOLLGATE_X402_FACILITATOR_AUTH_HEADER: z
    .string()
    .regex(/^[A-Za-z0-9-]+:\s*\S/, '"Name: value"')
    .optional(),
  TOLLGATE_X402_FACILITATOR_TIMEOUT_SECONDS: int(1, 600).default(60),
  /** Built-in facilitator: settle through this RPC, paying gas from this key's account. */
  TOLLGATE_X402_RPC_URL: url.optional(),
  TOLLGATE_X402_SIGNER_KEY: z
    .string()
    .regex(/^0x[0-9a-fA-F]{64}$/, 'a 0x-prefixed 32-byte hex key')
    .optional(),
  // Model router (docs/spec.md §4.9, §8). Its upstream is TOLLGATE_LLM_API_KEY / TOLLGATE_LLM_BASE_URL below.
  /** Inference spend per account per UTC day, USD; beyond it the router answers 429 with Retry-After. */
  TOLLGATE_LLM_DAILY_CAP_USD: usd.refine((v) => /[1-9]/.test(v), 'above 0').default('10'),
  /** Tier fallback lists: exact upstream slugs, comma-separated, tried in order (defaults in LLM_DEFAULT_TIERS). */
  TOLLGATE_LLM_TIER_CHEAP: list.optional(),
  TOLLGATE_LLM_TIER_MID: list.optional(),
  TOLLGATE_LLM_TIER_BEST: list.optional(),
  /** Tier price ceilings "prompt/completion", USD per million tokens: a model above either is never used. */
  TOLLGATE_LLM_TIER_CHEAP_CEILING: llmCeiling().optional(),
  TOLLGATE_LLM_TIER_MID_CEILING: llmCeiling().optional(),
  TOLLGATE_LLM_TIER_BEST_CEILING: llmCeiling().optional(),
  /** Operator prices "slug=prompt/completion,…" (USD per million tokens); such models bill tokens × these. */
  TOLLGATE_LLM_PRICE_OVERRIDES: llmOverrides().optional(),
  /** How often the upstream's model listing (prices) is reloaded. */
  TOLLGATE_LLM_PRICES_REFRESH_SECONDS: int(10, 86_400).default(3600),
  /** Streaming: a model that sends no first token within this falls back to the tier's next model. */
  TOLLGATE_LLM_FIRST_BYTE_TIMEOUT_MS: int(100, 600_000).default(30_000),
  /** Bound on one chat completion, every fallback attempt included. */
  TOLLGATE_LLM_TIMEOUT_SECONDS: int(1, 3600).default(600),
  /** Largest chat-completions body (a long conversation with images can be several MB). */
  TOLLGATE_LLM_MAX_BODY_BYTES: int(1024, 64 * 1024 * 1024).default(4 * 1024 * 1024),
  // MPP and x402 sessions (src/config/rails.ts).
  ...railsEnvShape,
  // Alert e-mail (src/config/alerts.ts).
  ...alertsEnvShape,
  ...vendorShape,
});

export type Env = z.output<typeof envSchema>;

export interface VendorConfig {
  apiKey: string | undefined;
  baseUrl: string;
}

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  /** PostgreSQL (TOLLGATE_DATABASE_URL), or undefined for the embedded SQLite under the data dir. */
  database: { url: string; pool: number; leaseMs: number } | undefined;
  publicUrl: string;
  logLevel: Env['TOLLGATE_LOG_LEVEL'];
  maxBodyBytes: number;
  holdTtlMs: number;
  /** How long an API key read from the database is trusted (0: read on every call). */
  keyCacheTtlMs: number;
  sweepIntervalMs: number;
  idempotencyTtlMs: number;
  upstreamTimeoutMs: number;
  /** Connections per upstream host of each pool (TOLLGATE_UPSTREAM_CONNECTIONS). */
  upstreamConnections: number;
  shutdownGraceMs: number;
  rateLimitPerSecond: number;
  rateLimitBurst: number;
  allowedHosts: string[];
  allowedOrigins: string[];
  fetchAllow: string[];
  operatorCreditUsd: string;
  welcomeCreditUsd: string;
  vendors: Record<VendorName, VendorConfig>;
  /** x402 payments; undefined when TOLLGATE_X402_PAY_TO is unset (then only API keys pay). */
  x402: X402Config | undefined;
  /** The Machine Payments Protocol; undefined unless TOLLGATE_MPP_METHODS is set. */
  mpp: MppConfig | undefined;
  /** x402 sessions (batch-settlement); undefined unless TOLLGATE_X402_SESSIONS=on. */
  x402Sessions: X402SessionConfig | undefined;
  llm: LlmConfig;
  oauth: OAuthConfig;
  /** Where stored files live: the data dir, or S3 (credentials from the AWS_* variables). */
  storage: StorageConfig;
  billing: BillingConfig;
  alerts: AlertsConfig;
  env: Env;
}

/** The known name within two edits of a mistyped one (TOLLGATE_PROT → TOLLGATE_PORT), if exactly one is. */
function nearest(name: string, known: string[]): string | undefined {
  const near = known.filter((k) => Math.abs(k.length - name.length) <= 2 && editDistance(k, name) <= 2);
  return near.length === 1 ? near[0] : undefined;
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const sub = (prev[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1);
      row[j] = Math.min(sub, (prev[j] as number) + 1, (row[j - 1] as number) + 1);
    }
    prev = row;
  }
  return prev[b.length] as number;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

export function loadConfig(source: NodeJS.ProcessEnv = process.env): Config {
  // Empty strings mean "unset" so that `FOO=` in a .env file does not fail validation.
  const raw = Object.fromEntries(
    Object.entries(source).filter(([k, v]) => k.startsWith('TOLLGATE_') && v !== ''),
  );
  // Every problem at once: each variable is parsed on its own, so a typo in one name does not hide a bad value
  // in another. A bad value is replaced by its default (every variable has one, or is optional) so that the
  // sections' cross-field checks still run, except for a section whose own variables are bad (their checks
  // would only repeat the same problem in other words).
  const problems: string[] = [];
  const bad: string[] = [];
  const values: Record<string, unknown> = {};
  for (const [key, schema] of Object.entries(envSchema.shape) as Array<[string, z.ZodType]>) {
    const r = schema.safeParse(raw[key]);
    if (r.success) {
      values[key] = r.data;
      continue;
    }
    bad.push(key);
    // zod's generic prefix says nothing the variable name does not.
    for (const issue of r.error.issues)
      problems.push(`${key}: ${issue.message.replace(/^Invalid (input|option): /, '')}`);
    values[key] = schema.parse(undefined);
  }
  for (const k of Object.keys(raw)) {
    if (k in envSchema.shape) continue;
    const near = nearest(k, Object.keys(envSchema.shape));
    problems.push(
      `${k}: unknown variable (${near ? `did you mean ${near}?` : '.env.example lists them all'})`,
    );
  }
  const env = values as Env;
  const sectionOk = (prefix: string) => !bad.some((k) => k.startsWith(prefix));

  const byName = values as Record<string, string | undefined>;
  const vendors = Object.fromEntries(
    (Object.keys(VENDORS) as VendorName[]).map((v) => [
      v,
      {
        apiKey: byName[`TOLLGATE_${v}_API_KEY`],
        baseUrl: byName[`TOLLGATE_${v}_BASE_URL`] ?? VENDORS[v].defaultBaseUrl,
      },
    ]),
  ) as Record<VendorName, VendorConfig>;

  const x402 = sectionOk('TOLLGATE_X402_') ? x402Config(env, problems) : undefined;
  const oauth = oauthConfig(env, sectionOk('TOLLGATE_OIDC_') ? problems : []);
  const storage = storageConfig(env.TOLLGATE_STORAGE_URL, source, problems);
  const billing = billingConfig(env, problems);
  const mpp = mppConfig(env, { x402: x402 !== undefined, stripe: billing.stripe !== undefined }, problems);
  const x402Sessions = x402SessionConfig(env, x402 !== undefined, problems);
  const alerts = alertsConfig(env, problems);
  if (problems.length > 0) throw new ConfigError(problems);

  const host = env.TOLLGATE_HOST;
  const shownHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  return {
    port: env.TOLLGATE_PORT,
    host,
    dataDir: resolve(env.TOLLGATE_DATA_DIR),
    database: env.TOLLGATE_DATABASE_URL
      ? {
          url: env.TOLLGATE_DATABASE_URL,
          pool: env.TOLLGATE_DATABASE_POOL,
          leaseMs: env.TOLLGATE_REPLICA_LEASE_SECONDS * 1000,
        }
      : undefined,
    publicUrl: env.TOLLGATE_PUBLIC_URL ?? `http://${shownHost}:${env.TOLLGATE_PORT}`,
    logLevel: env.TOLLGATE_LOG_LEVEL,
    maxBodyBytes: env.TOLLGATE_MAX_BODY_BYTES,
    holdTtlMs: env.TOLLGATE_HOLD_TTL_SECONDS * 1000,
    keyCacheTtlMs: env.TOLLGATE_KEY_CACHE_SECONDS * 1000,
    sweepIntervalMs: env.TOLLGATE_SWEEP_INTERVAL_SECONDS * 1000,
    idempotencyTtlMs: env.TOLLGATE_IDEMPOTENCY_TTL_HOURS * 3_600_000,
    upstreamTimeoutMs: env.TOLLGATE_UPSTREAM_TIMEOUT_SECONDS * 1000,
    upstreamConnections: env.TOLLGATE_UPSTREAM_CONNECTIONS,
    shutdownGraceMs: env.TOLLGATE_SHUTDOWN_GRACE_SECONDS * 1000,
    rateLimitPerSecond: env.TOLLGATE_RATE_LIMIT_PER_SECOND,
    rateLimitBurst: env.TOLLGATE_RATE_LIMIT_BURST,
    allowedHosts: env.TOLLGATE_ALLOWED_HOSTS,
    allowedOrigins: env.TOLLGATE_ALLOWED_ORIGINS,
    fetchAllow: env.TOLLGATE_FETCH_ALLOW,
    operatorCreditUsd: env.TOLLGATE_OPERATOR_CREDIT_USD,
    welcomeCreditUsd: env.TOLLGATE_WELCOME_CREDIT_USD,
    vendors,
    x402,
    mpp,
    x402Sessions,
    llm: llmConfig(env, vendors.LLM),
    oauth,
    storage,
    billing,
    alerts,
    env,
  };
}

export * from './alerts.js';
export * from './billing.js';
export * from './llm.js';
export * from './oauth.js';
export * from './rails.js';
export * from './storage.js';
export * from './x402.js';
