import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors.js';
import { connectClient } from '../e2e/mcp-clients.js';
import { type FakeServer, RENTCAST_KEY, startFakeRentCast } from '../fakes/rentcast.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

// Traces through a real gateway into OpenTelemetry's in-memory exporter: a span per call with its steps as
// children, the caller's W3C trace context honoured on HTTP (`traceparent`) and MCP (`_meta`, SEP-414), and
// vendor calls nested under the step that made them.

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT = '00f067aa0ba902b7';
const traceparent = `00-${TRACE}-${PARENT}-01`;

const exporter = new InMemorySpanExporter();
let rentcast: FakeServer;
let t: TestGateway;
let failNext = false;

beforeAll(async () => {
  rentcast = await startFakeRentCast({ perSecond: 1000 });
  t = await startGateway({
    traceExporter: exporter,
    env: { TOLLGATE_RENTCAST_API_KEY: RENTCAST_KEY, TOLLGATE_RENTCAST_BASE_URL: rentcast.url },
    handlers: {
      'scraperC/scrape': async () => {
        if (failNext) {
          failNext = false;
          throw new GatewayError('upstream_error', 'the fake vendor failed');
        }
        return { raw: '<html>ok</html>' };
      },
    },
  });
});
afterAll(async () => {
  await t?.close();
  await rentcast?.close();
});
beforeEach(() => exporter.reset());

const spans = () => exporter.getFinishedSpans();
const named = (name: string) => spans().find((s) => s.name === name) as ReadableSpan;
const parentOf = (s: ReadableSpan) => s.parentSpanContext?.spanId;
const idOf = (s: ReadableSpan) => s.spanContext().spanId;
const ADDRESS = { address: '5500 Grand Lake Dr, San Antonio, TX 78244' };

describe('[ops:traces] a span per call, its steps as children', () => {
  it('[ops:trace-context] HTTP: continues the caller traceparent; validate, hold, upstream, capture; the vendor call under upstream', async () => {
    const { key } = await t.account('1');
    const r = await t.post('/api/run/propstats/properties', ADDRESS, { key, headers: { traceparent } });
    expect(r.status).toBe(200);
    const call = named('call propstats/properties');
    expect(call.spanContext().traceId).toBe(TRACE);
    expect(parentOf(call)).toBe(PARENT);
    expect(call.kind).toBe(1); // SERVER
    expect(call.attributes).toMatchObject({
      'tollgate.action': 'propstats/properties',
      'tollgate.door': 'http',
      'tollgate.payment_method': 'api_key',
      'tollgate.charged_cents': 30,
      'tollgate.transaction_id': r.body.transaction_id,
    });
    expect(call.status.code).not.toBe(2);
    for (const step of ['validate', 'hold', 'upstream', 'capture']) {
      const s = named(step);
      expect(s, step).toBeDefined();
      expect(s.spanContext().traceId).toBe(TRACE);
      expect(parentOf(s), step).toBe(idOf(call));
    }
    const vendor = named('rentcast properties');
    expect(parentOf(vendor)).toBe(idOf(named('upstream')));
    // Steps in order, each within the call.
    const start = (s: ReadableSpan) => s.startTime[0] * 1e9 + s.startTime[1];
    expect(start(named('validate'))).toBeLessThanOrEqual(start(named('hold')));
    expect(start(named('hold'))).toBeLessThanOrEqual(start(named('upstream')));
    expect(start(named('upstream'))).toBeLessThanOrEqual(start(named('capture')));
    // No account id or key in any attribute.
    const attrs = JSON.stringify(spans().map((s) => s.attributes));
    expect(attrs).not.toContain(key);
  });

  it('a failed call: the span and its upstream step carry the error code, the hold is voided', async () => {
    const { key } = await t.account('1');
    failNext = true;
    const r = await t.post(
      '/api/run/scraperC/scrape',
      { url: 'https://example.com/', browser: false },
      {
        key,
      },
    );
    expect(r.status).toBe(502);
    const call = named('call scraperC/scrape');
    expect(call.status).toMatchObject({ code: 2, message: 'upstream_error' });
    expect(call.attributes['error.type']).toBe('upstream_error');
    expect(named('upstream').status.code).toBe(2);
    expect(parentOf(named('void'))).toBe(idOf(call));
    expect(spans().some((s) => s.name === 'capture')).toBe(false);
  });

  it('invalid input: the validate step ends failed with the call; without traceparent a new trace begins', async () => {
    const { key } = await t.account('1');
    const r = await t.post('/api/run/scraperC/scrape', { url: 42 }, { key });
    expect(r.status).toBe(400);
    const call = named('call scraperC/scrape');
    expect(call.spanContext().traceId).not.toBe(TRACE);
    expect(parentOf(call)).toBeUndefined();
    expect(call.status.message).toBe('invalid_input');
    expect(named('validate').status.code).toBe(2);
    expect(spans().some((s) => s.name === 'hold')).toBe(false);
  });

  it('a malformed traceparent is ignored: a new root trace', async () => {
    const { key } = await t.account('1');
    await t.post(
      '/api/run/scraperC/scrape',
      { url: 'https://example.com/', browser: false },
      {
        key,
        headers: { traceparent: `00-${'0'.repeat(32)}-${PARENT}-01` },
      },
    );
    const call = named('call scraperC/scrape');
    expect(parentOf(call)).toBeUndefined();
    expect(call.spanContext().traceId).not.toBe('0'.repeat(32));
  });

  it('[ops:trace-context] MCP: the official client sends traceparent in _meta (SEP-414); the call continues it', async () => {
    const { key } = await t.account('1');
    const client = await connectClient('v2-modern', t.url, key);
    try {
      const r = await client.callTool(
        'scraperC_scrape',
        { url: 'https://example.com/', browser: false },
        { meta: { traceparent, tracestate: 'vendor=1' } },
      );
      expect(r.isError).toBeFalsy();
    } finally {
      await client.close();
    }
    const call = named('call scraperC/scrape');
    expect(call.spanContext().traceId).toBe(TRACE);
    expect(parentOf(call)).toBe(PARENT);
    expect(call.spanContext().traceState?.get('vendor')).toBe('1');
    expect(call.attributes['tollgate.door']).toBe('mcp');
    expect(parentOf(named('capture'))).toBe(idOf(call));
  });
});

describe('[ops:tracing-off] without OTEL_* variables', () => {
  const ROOT = resolve(import.meta.dirname, '..', '..');
  /** Starts a gateway in a fresh process and reports which OpenTelemetry SDK modules it loaded. */
  async function probe(
    env: Record<string, string>,
  ): Promise<{ loaded: string[]; tracing: boolean; metrics: boolean }> {
    const dir = mkdtempSync(join(tmpdir(), 'tollgate-otel-'));
    try {
      const script = join(dir, 'probe.mts');
      writeFileSync(
        script,
        `import { createRequire } from 'node:module';
import { createGateway } from ${JSON.stringify(join(ROOT, 'src/main.ts'))};
import { testConfig } from ${JSON.stringify(join(ROOT, 'test/helpers/gateway.ts'))};
const gw = await createGateway(testConfig({ TOLLGATE_METRICS_PORT: '0' }, ${JSON.stringify(dir)}));
const loaded = Object.keys(createRequire(import.meta.url).cache).filter((k) => /@opentelemetry[\\/](sdk-|exporter-|context-async)/.test(k));
console.log(JSON.stringify({ loaded, tracing: gw.telemetry?.tracing !== undefined, metrics: gw.telemetry !== undefined }));
await gw.close();
`,
      );
      const child = spawn(process.execPath, ['--import', 'tsx', script], {
        cwd: ROOT,
        env: { PATH: process.env.PATH, ...env },
      });
      let out = '';
      let err = '';
      child.stdout.on('data', (d) => {
        out += d;
      });
      child.stderr.on('data', (d) => {
        err += d;
      });
      const code = await new Promise((r) => child.once('exit', r));
      if (code !== 0) throw new Error(err);
      return JSON.parse(out.trim().split('\n').pop() as string);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  it('loads no tracing SDK and builds no tracer; OTEL_TRACES_EXPORTER=console turns them on', async () => {
    const [off, on] = await Promise.all([probe({}), probe({ OTEL_TRACES_EXPORTER: 'console' })]);
    expect(off).toEqual({ loaded: [], tracing: false, metrics: true });
    expect(on.tracing).toBe(true);
    expect(on.loaded.some((k) => k.includes('sdk-trace'))).toBe(true);
  }, 60_000);
});
