import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

// Modules loaded when used (docs/decisions.md): a gateway in its own process (test/helpers/lazy-probe.ts, with
// test/helpers/module-trace.mjs recording every package it resolves), asked after each step which optional
// packages it has loaded.

const ROOT = resolve(import.meta.dirname, '..', '..');

/** The optional packages, by what brings them in. */
const MCP = ['@modelcontextprotocol/server', '@modelcontextprotocol/node', '@modelcontextprotocol/core'];
const X402 = ['viem', '@x402/core', '@x402/evm'];
const OAUTH = ['oidc-provider'];
const OIDC_CLIENT = ['openid-client'];
const S3 = ['@aws-sdk/client-s3'];
const STRIPE = ['stripe'];
const OTEL = ['@opentelemetry/sdk-trace-base'];
const METRICS = ['prom-client'];
const BROWSER = ['playwright-core'];
const MAIL = ['nodemailer'];
/** node-postgres: only a gateway on PostgreSQL loads it (these probes run on SQLite). */
const PG = ['pg'];
const OPTIONAL = [
  ...MCP,
  ...X402,
  ...OAUTH,
  ...OIDC_CLIENT,
  ...S3,
  ...STRIPE,
  ...OTEL,
  ...METRICS,
  ...BROWSER,
  ...MAIL,
  ...PG,
];

interface Step {
  step: string;
  status?: number;
  challenge?: string;
  body: string;
  charged: boolean;
  loaded: string[];
}

async function probe(steps: string[], env: Record<string, string> = {}): Promise<Record<string, Step>> {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-lazy-'));
  const trace = join(dir, 'trace.txt');
  writeFileSync(trace, '');
  const { OTEL_TRACES_EXPORTER, ...gatewayEnv } = env;
  try {
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        '--import',
        join(ROOT, 'test/helpers/module-trace.mjs'),
        join(ROOT, 'test/helpers/lazy-probe.ts'),
        ...steps,
      ],
      {
        cwd: ROOT,
        env: {
          PATH: process.env.PATH,
          MODULE_TRACE_FILE: trace,
          PROBE_DATA_DIR: dir,
          PROBE_ENV: JSON.stringify(gatewayEnv),
          ...(OTEL_TRACES_EXPORTER ? { OTEL_TRACES_EXPORTER } : {}),
        },
      },
    );
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.stderr.on('data', (d) => {
      err += d;
    });
    const code = await new Promise((r) => child.once('exit', r));
    if (code !== 0) throw new Error(`probe exited ${code}: ${err}`);
    // The console span exporter writes to stdout too: only the probe's own lines are read.
    const lines = out.split('\n').filter((l) => l.startsWith('{"step"'));
    return Object.fromEntries(lines.map((l) => JSON.parse(l) as Step).map((s) => [s.step, s]));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const optionalIn = (s: Step | undefined) => OPTIONAL.filter((p) => s?.loaded.includes(p));

describe('[ops:lazy-modules] optional modules load only when configured or used', () => {
  it('with nothing optional configured (SQLite): none at start, node-postgres neither, nor for a paid shim call (which brings undici, not the HTML parser); the MCP SDK with the first /mcp request (its 401 challenge without oidc-provider), oidc-provider with the first OAuth request', async () => {
    const r = await probe(['start', 'health', 'shim', 'mcp-401', 'mcp-call', 'oauth-discovery']);
    expect(optionalIn(r.start)).toEqual([]);
    // undici, the upstreams' HTTP client, comes with the first upstream request (src/lib/upstream-pool.ts);
    // the HTML parser with the first page read as markdown or text, which scraperC's raw HTML is not.
    for (const s of [r.start, r.health]) expect(s?.loaded).not.toContain('undici');
    expect(r.shim?.loaded).toContain('undici');
    for (const s of [r.start, r.health, r.shim]) expect(s?.loaded).not.toContain('htmlparser2');
    expect(r.shim?.status).toBe(200);
    expect(r.shim?.charged).toBe(true);
    expect(optionalIn(r.shim)).toEqual([]);

    // The first request to /mcp: a 401 that points at the protected-resource metadata, with the SDK loaded and
    // nothing else (no OAuth library, no x402).
    expect(r['mcp-401']?.status).toBe(401);
    expect(r['mcp-401']?.challenge).toContain('/.well-known/oauth-protected-resource/mcp');
    expect(optionalIn(r['mcp-401']).sort()).toEqual([...MCP].sort());
    expect(r['mcp-call']?.status).toBe(200);
    expect(r['mcp-call']?.charged).toBe(true);
    expect(optionalIn(r['mcp-call']).sort()).toEqual([...MCP].sort());

    expect(r['oauth-discovery']?.status).toBe(200);
    expect(optionalIn(r['oauth-discovery']).sort()).toEqual([...MCP, ...OAUTH].sort());
  }, 120_000);

  it('each loads at start when configured (metrics, x402, Stripe, S3, tracing, alert e-mail); the upstream sign-in client and the browser driver on first use', async () => {
    const r = await probe(['start', 'browser'], {
      TOLLGATE_METRICS_TOKEN: 'probe-metrics-token-0123456789abcdefghijkl',
      TOLLGATE_X402_PAY_TO: '0x1111111111111111111111111111111111111111',
      TOLLGATE_X402_FACILITATOR_URL: 'http://127.0.0.1:9',
      TOLLGATE_STRIPE_SECRET_KEY: 'sk_test_probe',
      TOLLGATE_STRIPE_WEBHOOK_SECRET: 'whsec_probe',
      TOLLGATE_STRIPE_BASE_URL: 'http://127.0.0.1:9',
      TOLLGATE_STORAGE_URL:
        's3://probe?endpoint=http%3A%2F%2F127.0.0.1%3A9&region=us-east-1&force_path_style=true',
      AWS_ACCESS_KEY_ID: 'probe',
      AWS_SECRET_ACCESS_KEY: 'probe',
      TOLLGATE_OIDC_ISSUER: 'http://127.0.0.1:9',
      TOLLGATE_OIDC_CLIENT_ID: 'probe',
      TOLLGATE_SMTP_URL: 'smtp://127.0.0.1:9',
      OTEL_TRACES_EXPORTER: 'console',
    });
    const configured = [...X402, ...S3, ...STRIPE, ...OTEL, ...METRICS, ...MAIL];
    expect(optionalIn(r.start).sort()).toEqual(configured.sort());
    // Rendering a page loads the browser driver (and the gateway still has no use for MCP or OAuth).
    expect(r.browser?.status).toBe(200);
    expect(optionalIn(r.browser).sort()).toEqual([...configured, ...BROWSER].sort());
  }, 120_000);
});
