import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors.js';
import { SqliteLedger } from '../../src/ledger/sqlite/sqlite-ledger.js';
import { openSqlite, type SqliteDb } from '../../src/lib/sqlite.js';
import { instrumentClient, instrumentFacilitator } from '../../src/ops/instrument.js';
import { CounterFamily, HistogramFamily } from '../../src/ops/metric-families.js';
import { tracesFromEnv } from '../../src/ops/otel-env.js';
import { createPrometheusMetrics } from '../../src/ops/prometheus.js';
import { type Metrics, NOOP_METRICS } from '../../src/ops/telemetry.js';
import { Lifecycle } from '../../src/run/lifecycle.js';
import { ManualClock } from '../helpers/clock.js';

// The telemetry seam in isolation: the lifecycle reports every money movement, the wrappers classify vendor
// and facilitator outcomes, the families expose what they count, and OTEL_* decides whether traces are on.

const log = pino({ level: 'silent' });

/** A Metrics that records what it is told, by method. */
function recorder(): Metrics & { seen: Array<[string, ...unknown[]]> } {
  const seen: Array<[string, ...unknown[]]> = [];
  const m = { seen } as Metrics & { seen: typeof seen };
  for (const k of Object.keys(NOOP_METRICS) as Array<keyof Metrics>) {
    (m as unknown as Record<string, unknown>)[k] = (...args: unknown[]) => seen.push([k, ...args]);
  }
  return m;
}

describe('[ops:money-metrics] the lifecycle reports every money movement', () => {
  let db: SqliteDb;
  let ledger: SqliteLedger;
  let clock: ManualClock;
  let metrics: ReturnType<typeof recorder>;
  let money: Lifecycle;
  const principal = (accountId: string) => ({ kind: 'api_key' as const, accountId, keyId: 'key_1' });

  beforeEach(() => {
    db = openSqlite(':memory:');
    clock = new ManualClock(Date.UTC(2026, 10, 22, 12));
    ledger = new SqliteLedger(db, { clock, idempotencyTtlMs: 86_400_000 });
    metrics = recorder();
    money = new Lifecycle({
      ledger,
      clock,
      log,
      holdTtlMs: 60_000,
      telemetry: { metrics, tracing: undefined },
    });
  });
  afterEach(async () => {
    await ledger.close();
    db.close();
  });

  it('capture, void, refusals, credits and the pending-holds gauges', async () => {
    const a = await ledger.createAccount({ name: 't' });
    await money.credit(a.id, 25_000, 'operator', 'top-up');
    const spec = {
      principal: principal(a.id),
      action: 'scraperC/scrape',
      priceMicros: 10_000,
      timeoutMs: 1000,
    };

    const h1 = await money.hold(spec);
    const h2 = await money.hold(spec);
    if (h1.kind !== 'held' || h2.kind !== 'held') throw new Error('not held');
    expect(money.pendingHolds().count).toBe(2);
    expect(money.pendingHolds().oldestMs).toBeGreaterThanOrEqual(0);
    // 5,000 left: a third hold is refused for funds.
    await expect(money.hold(spec)).rejects.toMatchObject({ code: 'insufficient_credit' });
    expect(await h1.hold.capture(10_000, { provider: null })).toBe(10_000);
    await h2.hold.void('upstream_error', { provider: null });
    expect(money.pendingHolds()).toEqual({ count: 0, oldestMs: 0 });

    // A door's daily cap (the model router's): 6,000 held and spent, then 6,000 more is over 10,000.
    const capped = {
      ...spec,
      priceMicros: 6_000,
      doorCap: { limitMicros: 10_000, name: 'Daily inference cap' },
    };
    const h3 = await money.hold(capped);
    if (h3.kind !== 'held') throw new Error('not held');
    await h3.hold.capture(6_000, { provider: null });
    await expect(money.hold({ ...capped, priceMicros: 1_000 })).resolves.toMatchObject({ kind: 'held' });
    await expect(money.hold(capped)).rejects.toMatchObject({ code: 'daily_cap_exceeded' });

    const kinds = metrics.seen.map(([k, ...rest]) => [
      k,
      ...rest.filter((x) => typeof x !== 'number' || Number.isInteger(x)),
    ]);
    expect(kinds).toContainEqual(['credited', 'operator', 25_000]);
    expect(kinds).toContainEqual(['charged', 'scraperC/scrape', 'api_key', 10_000]);
    expect(kinds).toContainEqual(['voided', 'upstream_error']);
    expect(kinds).toContainEqual(['holdRefused', 'insufficient_credit', 'none']);
    expect(kinds).toContainEqual(['holdRefused', 'daily_cap_exceeded', 'door']);
    const ops = metrics.seen.filter(([k]) => k === 'ledgerOp').map(([, op]) => op);
    expect(ops.filter((o) => o === 'hold')).toHaveLength(6);
    expect(ops).toContain('capture');
    expect(ops).toContain('void');
  });

  it('card money (top-ups, refunds) is counted by kind, once per outside reference', async () => {
    const a = await ledger.createAccount({ name: 't' });
    const topup = {
      accountId: a.id,
      kind: 'topup' as const,
      micros: 50_000,
      externalRef: 'pi_1',
      memo: 'card',
    };
    await money.cardMoney(topup);
    await money.cardMoney(topup); // the same payment again: recorded once
    await money.cardMoney({ ...topup, kind: 'refund', micros: 20_000, externalRef: 're_1' });
    expect(metrics.seen.filter(([k]) => k === 'cardMoney')).toEqual([
      ['cardMoney', 'topup', 50_000],
      ['cardMoney', 'refund', 20_000],
    ]);
  });

  it('the sweeper reports the holds it expired', async () => {
    const a = await ledger.createAccount({ name: 't' });
    await money.credit(a.id, 10_000, 'operator', 'top-up');
    await money.hold({
      principal: principal(a.id),
      action: 'scraperC/scrape',
      priceMicros: 10_000,
      timeoutMs: 1,
    });
    clock.advance(10 * 60_000);
    await money.sweep(clock.now());
    expect(metrics.seen).toContainEqual(['holdsExpired', 1]);
  });
});

describe('[ops:upstream-metrics] vendor clients and the facilitator, measured from outside', () => {
  it('counts each method call by vendor and outcome, thrown or reported', async () => {
    const metrics = recorder();
    const tel = { metrics, tracing: undefined };
    const client = {
      base: 'kept',
      ok: async () => 1,
      rejects: async () => Promise.reject(new GatewayError('upstream_busy', 'slow down')),
      reports: async () => ({ ok: false, error: new GatewayError('upstream_timeout', 't') }),
      aborted: async () => Promise.reject(Object.assign(new Error('gone'), { name: 'AbortError' })),
      other: async () => Promise.reject(new Error('boom')),
      close: async () => undefined,
    };
    const c = instrumentClient('rentcast', client, tel);
    expect(c.base).toBe('kept');
    expect(await c.ok()).toBe(1);
    await expect(c.rejects()).rejects.toMatchObject({ code: 'upstream_busy' });
    expect(await c.reports()).toMatchObject({ ok: false });
    await expect(c.aborted()).rejects.toThrow('gone');
    await expect(c.other()).rejects.toThrow('boom');
    await c.close();
    expect(metrics.seen.map(([, v, o]) => `${v}:${o}`)).toEqual([
      'rentcast:ok',
      'rentcast:upstream_busy',
      'rentcast:upstream_timeout',
      'rentcast:cancelled',
      'rentcast:error',
    ]);
  });

  it('counts facilitator answers by kind, and a throw as error', async () => {
    const metrics = recorder();
    let verdict = 'valid';
    const f = instrumentFacilitator(
      {
        verify: async () => ({ kind: verdict }),
        settle: async () => {
          throw new Error('rpc down');
        },
        close: async () => undefined,
      },
      { metrics, tracing: undefined },
    );
    await f.verify();
    verdict = 'invalid';
    await f.verify();
    await expect(f.settle()).rejects.toThrow('rpc down');
    expect(metrics.seen.map(([k, step, o]) => `${k}:${step}:${o}`)).toEqual([
      'x402:verify:valid',
      'x402:verify:invalid',
      'x402:settle:error',
    ]);
  });
});

describe('[ops:metrics] families and the Prometheus exposition', () => {
  it('histograms are cumulative with +Inf, _sum and _count; counters sum per label set', () => {
    const h = new HistogramFamily('t_seconds', 'h', ['door'], [0.1, 1]);
    const c = h.child('http');
    for (const v of [0.05, 0.1, 0.5, 3]) c.observe(v);
    const byLe = Object.fromEntries(
      h
        .get()
        .values.filter((v) => v.metricName === 't_seconds_bucket')
        .map((v) => [v.labels.le, v.value]),
    );
    expect(byLe).toEqual({ '0.1': 2, '1': 3, '+Inf': 4 });
    expect(h.get().values.find((v) => v.metricName === 't_seconds_count')?.value).toBe(4);
    expect(h.get().values.find((v) => v.metricName === 't_seconds_sum')?.value).toBeCloseTo(3.65);
    const k = new CounterFamily('t_total', 'c', ['a', 'b']);
    k.child('x', 'y').inc();
    k.child('x', 'y').inc(2);
    expect(k.get().values).toEqual([{ labels: { a: 'x', b: 'y' }, value: 3 }]);
  });

  it('renders every family, the gauges and the process metrics', async () => {
    const p = createPrometheusMetrics('9.9.9', {
      inflight: () => 3,
      pendingHolds: () => ({ count: 2, oldestMs: 1500 }),
    });
    p.metrics.call('scraperC/scrape', 'mcp', 'oauth', 'ok', 0.002);
    p.commits.seconds.observe(0.0004);
    p.commits.writes.observe(7);
    const text = await p.render();
    expect(text).toContain(
      'tollgate_calls_total{action="scraperC/scrape",door="mcp",payment_method="oauth",outcome="ok"} 1',
    );
    expect(text).toContain(
      'tollgate_call_duration_seconds_bucket{action="scraperC/scrape",door="mcp",le="0.0025"} 1',
    );
    expect(text).toContain('tollgate_ledger_commit_writes_bucket{le="8"} 1');
    expect(text).toContain('tollgate_calls_in_flight 3');
    expect(text).toContain('tollgate_holds_pending 2');
    expect(text).toContain('tollgate_holds_oldest_pending_seconds 1.5');
    expect(text).toContain('tollgate_build_info{version="9.9.9"} 1');
    expect(text).toMatch(/^process_resident_memory_bytes \d+/m);
    expect(text).toMatch(/^nodejs_heap_size_used_bytes \d+/m);
  });
});

describe('[ops:tracing-off] traces only when OTEL_* asks for them', () => {
  it('reads the standard variables', () => {
    expect(tracesFromEnv({})).toBeUndefined();
    expect(tracesFromEnv({ OTEL_SERVICE_NAME: 'x' })).toBeUndefined();
    expect(tracesFromEnv({ OTEL_TRACES_EXPORTER: 'none' })).toBeUndefined();
    expect(tracesFromEnv({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_SDK_DISABLED: 'true' })).toBeUndefined();
    expect(tracesFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' })).toEqual({
      exporters: ['otlp'],
      warnings: [],
    });
    expect(tracesFromEnv({ OTEL_TRACES_EXPORTER: 'console, otlp' })?.exporters).toEqual(['console', 'otlp']);
    const z = tracesFromEnv({ OTEL_TRACES_EXPORTER: 'zipkin,otlp', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' });
    expect(z?.exporters).toEqual(['otlp']);
    expect(z?.warnings).toHaveLength(2);
    expect(tracesFromEnv({ OTEL_TRACES_EXPORTER: 'zipkin' })).toBeUndefined();
  });
});
