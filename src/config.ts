import { resolve } from 'node:path';
import { z } from 'zod';

// One schema over every TOLLGATE_* variable, parsed once at start-up. A bad value stops the process with
// every problem listed (not just the first). `.env.example` lists the same variables; a contract test keeps
// the two in step.

const int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);
const url = z.url({ protocol: /^https?$/ }).transform((u) => u.replace(/\/+$/, ''));
const list = z.string().transform((s) =>
  s
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean),
);
const usd = z.string().regex(/^\d{1,9}(\.\d{1,6})?$/, 'a USD amount such as 2 or 0.35');

/** Vendor groups of DESIGN.md: `TOLLGATE_<VENDOR>_API_KEY` / `_BASE_URL`. */
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
  TOLLGATE_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** Maximum JSON request body, bytes. */
  TOLLGATE_MAX_BODY_BYTES: int(1024, 64 * 1024 * 1024).default(1024 * 1024),
  /** How long a hold may stay pending before the sweeper voids it, seconds. Longer than any action timeout. */
  TOLLGATE_HOLD_TTL_SECONDS: int(1, 86_400).default(900),
  TOLLGATE_SWEEP_INTERVAL_SECONDS: int(1, 3600).default(30),
  /** Idempotency keys are kept at least this long (Stripe keeps 24 h). */
  TOLLGATE_IDEMPOTENCY_TTL_HOURS: int(24, 24 * 90).default(24),
  /** Upper bound for one upstream call, seconds (actions may set a shorter one). */
  TOLLGATE_UPSTREAM_TIMEOUT_SECONDS: int(1, 600).default(60),
  /** Graceful shutdown: how long in-flight calls may take to finish before their holds are voided. */
  TOLLGATE_SHUTDOWN_GRACE_SECONDS: int(0, 600).default(30),
  /** Hosts (and host:port) accepted in the Host header of /mcp, besides the public URL's and loopback. */
  TOLLGATE_ALLOWED_HOSTS: list.default([]),
  /** Origins accepted for browser clients of /mcp (e.g. MCP Inspector's web UI). */
  TOLLGATE_ALLOWED_ORIGINS: list.default([]),
  /** Hosts/CIDRs the SSRF guard lets through (tests, intranets). Empty: loopback and private ranges refused. */
  TOLLGATE_FETCH_ALLOW: list.default([]),
  /** Credit given to the operator account created by the first `serve`, USD. */
  TOLLGATE_OPERATOR_CREDIT_USD: usd.default('0'),
  /** Credit given to accounts created by sign-in (spec §5: 2 USD welcome credit once a card is on file). */
  TOLLGATE_WELCOME_CREDIT_USD: usd.default('0'),
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
  publicUrl: string;
  logLevel: Env['TOLLGATE_LOG_LEVEL'];
  maxBodyBytes: number;
  holdTtlMs: number;
  sweepIntervalMs: number;
  idempotencyTtlMs: number;
  upstreamTimeoutMs: number;
  shutdownGraceMs: number;
  allowedHosts: string[];
  allowedOrigins: string[];
  fetchAllow: string[];
  operatorCreditUsd: string;
  welcomeCreditUsd: string;
  vendors: Record<VendorName, VendorConfig>;
  env: Env;
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
  const parsed = envSchema.safeParse(raw);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((i) => `${i.path.join('.') || '(env)'}: ${i.message}`));
  }
  const env = parsed.data;
  const known = new Set(Object.keys(envSchema.shape));
  const unknown = Object.keys(raw).filter((k) => !known.has(k));
  if (unknown.length > 0) throw new ConfigError(unknown.map((k) => `${k}: unknown variable (typo?)`));

  const vendors = Object.fromEntries(
    (Object.keys(VENDORS) as VendorName[]).map((v) => [
      v,
      {
        apiKey: (env as unknown as Record<string, string | undefined>)[`TOLLGATE_${v}_API_KEY`],
        baseUrl:
          (env as unknown as Record<string, string | undefined>)[`TOLLGATE_${v}_BASE_URL`] ??
          VENDORS[v].defaultBaseUrl,
      },
    ]),
  ) as Record<VendorName, VendorConfig>;

  const host = env.TOLLGATE_HOST;
  const shownHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  return {
    port: env.TOLLGATE_PORT,
    host,
    dataDir: resolve(env.TOLLGATE_DATA_DIR),
    publicUrl: env.TOLLGATE_PUBLIC_URL ?? `http://${shownHost}:${env.TOLLGATE_PORT}`,
    logLevel: env.TOLLGATE_LOG_LEVEL,
    maxBodyBytes: env.TOLLGATE_MAX_BODY_BYTES,
    holdTtlMs: env.TOLLGATE_HOLD_TTL_SECONDS * 1000,
    sweepIntervalMs: env.TOLLGATE_SWEEP_INTERVAL_SECONDS * 1000,
    idempotencyTtlMs: env.TOLLGATE_IDEMPOTENCY_TTL_HOURS * 3_600_000,
    upstreamTimeoutMs: env.TOLLGATE_UPSTREAM_TIMEOUT_SECONDS * 1000,
    shutdownGraceMs: env.TOLLGATE_SHUTDOWN_GRACE_SECONDS * 1000,
    allowedHosts: env.TOLLGATE_ALLOWED_HOSTS,
    allowedOrigins: env.TOLLGATE_ALLOWED_ORIGINS,
    fetchAllow: env.TOLLGATE_FETCH_ALLOW,
    operatorCreditUsd: env.TOLLGATE_OPERATOR_CREDIT_USD,
    welcomeCreditUsd: env.TOLLGATE_WELCOME_CREDIT_USD,
    vendors,
    env,
  };
}
