import { collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import { type CommitHistograms, Histogram } from '../lib/histogram.js';
import { type CounterChild, CounterFamily, type HistogramChild, HistogramFamily } from './metric-families.js';
import type { CapScope, Door, HoldRefusal, Metrics, PaymentLabel } from './telemetry.js';

// The Metrics of src/ops/telemetry.ts, counted in memory and exposed in Prometheus's text format through
// prom-client's registry (with its process and Node.js metrics). docs/operator.md "Monitoring" lists every
// series; the names and labels here are that list.

const LATENCY_BUCKETS = [
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300,
];
const LEDGER_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];
const BATCH_BUCKETS = [1, 2, 4, 8, 16, 32, 64, 128, 256];

const DOORS: readonly Door[] = ['http', 'mcp', 'llm'];
const PAYMENTS: readonly PaymentLabel[] = ['api_key', 'oauth', 'x402', 'anonymous'];
const DOOR_INDEX: Record<Door, number> = { http: 0, mcp: 1, llm: 2 };
const PAYMENT_INDEX: Record<PaymentLabel, number> = { api_key: 0, oauth: 1, x402: 2, anonymous: 3 };

export interface GaugeSources {
  /** Calls running now (execute and the model router). */
  inflight(): number;
  /** Holds taken and not yet resolved by this process, and how long the oldest has been pending. */
  pendingHolds(): { count: number; oldestMs: number };
}

export interface PrometheusMetrics {
  metrics: Metrics;
  /** The ledger observes its group commits into these. */
  commits: CommitHistograms;
  registry: Registry;
  /** The exposition: `text/plain; version=0.0.4`. */
  render(): Promise<string>;
  contentType: string;
}

/** Per action: its call counters by door × payment method × outcome, and its latency by door. */
interface ActionSlots {
  calls: Array<Map<string, CounterChild> | undefined>;
  latency: Array<HistogramChild | undefined>;
  charged: Array<CounterChild | undefined>;
}

export function createPrometheusMetrics(version: string, sources: GaugeSources): PrometheusMetrics {
  const registry = new Registry();
  const fam = {
    calls: new CounterFamily(
      'tollgate_calls_total',
      'Calls finished, by action, door, payment method and outcome (ok, replayed or the error code).',
      ['action', 'door', 'payment_method', 'outcome'],
    ),
    callSeconds: new HistogramFamily(
      'tollgate_call_duration_seconds',
      'Time from validation to the settled outcome of a call, by action and door.',
      ['action', 'door'],
      LATENCY_BUCKETS,
    ),
    charged: new CounterFamily(
      'tollgate_charged_micros_total',
      'Money captured from accounts, micro-USD (1e-6 USD; 10,000 = 1 cent), by action and payment method.',
      ['action', 'payment_method'],
    ),
    voided: new CounterFamily(
      'tollgate_holds_voided_total',
      'Holds released without a charge, by the failure that released them.',
      ['reason'],
    ),
    captureFailed: new CounterFamily(
      'tollgate_capture_failures_total',
      'Captures that could not be written: the result went out uncharged.',
      [],
    ),
    refunded: new CounterFamily(
      'tollgate_refunded_micros_total',
      'Money given back for failed jobs and by the operator (reason operator), micro-USD, by reason.',
      ['reason'],
    ),
    refunds: new CounterFamily(
      'tollgate_refunds_total',
      'Refunds of failed jobs and by the operator (reason operator), by reason.',
      ['reason'],
    ),
    credited: new CounterFamily(
      'tollgate_credited_micros_total',
      'Money credited onto accounts from outside, micro-USD, by reason (operator, welcome, x402_prepaid).',
      ['reason'],
    ),
    refused: new CounterFamily(
      'tollgate_hold_refusals_total',
      'Holds refused before a call ran, by reason, and for spending limits by whose limit (key, client, door).',
      ['reason', 'scope'],
    ),
    card: new CounterFamily(
      'tollgate_card_money_micros_total',
      'Card money recorded, micro-USD, by kind (topup, refund, dispute, dispute_reversal).',
      ['kind'],
    ),
    cardSettlements: new CounterFamily(
      'tollgate_card_settlements_total',
      'Card charges settling credit lines, by outcome (settled, failed, already).',
      ['outcome'],
    ),
    cardSettled: new CounterFamily(
      'tollgate_card_settled_micros_total',
      'Money settled by card charges of credit lines, micro-USD.',
      [],
    ),
    expired: new CounterFamily(
      'tollgate_holds_expired_total',
      'Holds the sweeper voided because they outlived their TTL (a call that never resolved).',
      [],
    ),
    ledgerOp: new HistogramFamily(
      'tollgate_ledger_operation_duration_seconds',
      'A ledger write as the call waited for it (queueing and commit), by operation.',
      ['op'],
      LEDGER_BUCKETS,
    ),
    commit: new HistogramFamily(
      'tollgate_ledger_commit_duration_seconds',
      'One group commit of the ledger, BEGIN to COMMIT (fsync included).',
      [],
      LEDGER_BUCKETS,
    ),
    commitWrites: new HistogramFamily(
      'tollgate_ledger_commit_writes',
      'Writes carried by one group commit.',
      [],
      BATCH_BUCKETS,
    ),
    upstream: new CounterFamily(
      'tollgate_upstream_calls_total',
      'Calls to vendors, by vendor and outcome (ok or the error code).',
      ['vendor', 'outcome'],
    ),
    upstreamSeconds: new HistogramFamily(
      'tollgate_upstream_duration_seconds',
      'Duration of vendor calls, by vendor.',
      ['vendor'],
      LATENCY_BUCKETS,
    ),
    tokens: new CounterFamily(
      'tollgate_llm_tokens_total',
      'Model router tokens billed, by tier (none: a model named directly) and kind (prompt, completion).',
      ['tier', 'kind'],
    ),
    llmCost: new CounterFamily(
      'tollgate_llm_cost_micros_total',
      'Model router cost billed, micro-USD, by tier.',
      ['tier'],
    ),
    x402: new CounterFamily(
      'tollgate_x402_facilitator_total',
      'x402 facilitator answers: verify (valid, invalid, unavailable) and settle (settled, failed, unknown).',
      ['step', 'outcome'],
    ),
    x402Seconds: new HistogramFamily(
      'tollgate_x402_facilitator_duration_seconds',
      'Duration of x402 facilitator calls, by step.',
      ['step'],
      LATENCY_BUCKETS,
    ),
  };
  for (const f of Object.values(fam)) registry.registerMetric(f as never);

  new Gauge({
    name: 'tollgate_calls_in_flight',
    help: 'Calls running now.',
    registers: [registry],
    collect() {
      this.set(sources.inflight());
    },
  });
  new Gauge({
    name: 'tollgate_holds_pending',
    help: 'Holds taken by this process and not yet captured or voided.',
    registers: [registry],
    collect() {
      this.set(sources.pendingHolds().count);
    },
  });
  new Gauge({
    name: 'tollgate_holds_oldest_pending_seconds',
    help: 'Age of the oldest pending hold of this process (0 when none).',
    registers: [registry],
    collect() {
      this.set(sources.pendingHolds().oldestMs / 1000);
    },
  });
  new Gauge({
    name: 'tollgate_build_info',
    help: 'The running version.',
    labelNames: ['version'],
    registers: [registry],
  }).set({ version }, 1);
  collectDefaultMetrics({ register: registry });

  // Label sets bound once: the hot path below is map lookups on constant strings and number arithmetic.
  const actions = new Map<string, ActionSlots>();
  const slotsOf = (action: string): ActionSlots => {
    let a = actions.get(action);
    if (a === undefined) {
      a = { calls: [], latency: [], charged: [] };
      actions.set(action, a);
    }
    return a;
  };
  const ledgerOps = {
    hold: fam.ledgerOp.child('hold'),
    capture: fam.ledgerOp.child('capture'),
    void: fam.ledgerOp.child('void'),
  };
  const commits: CommitHistograms = {
    seconds: Histogram.shared(LEDGER_BUCKETS),
    writes: Histogram.shared(BATCH_BUCKETS),
  };
  fam.commit.adopt([], commits.seconds);
  fam.commitWrites.adopt([], commits.writes);
  const captureFailed = fam.captureFailed.child();
  const expired = fam.expired.child();
  const byVendor = new Map<string, { seconds: HistogramChild; outcomes: Map<string, CounterChild> }>();
  const x402Steps = {
    verify: { seconds: fam.x402Seconds.child('verify'), outcomes: new Map<string, CounterChild>() },
    settle: { seconds: fam.x402Seconds.child('settle'), outcomes: new Map<string, CounterChild>() },
  };

  const metrics: Metrics = {
    call(action, door, payment, outcome, seconds) {
      const a = slotsOf(action);
      const d = DOOR_INDEX[door];
      const slot = d * PAYMENTS.length + PAYMENT_INDEX[payment];
      let outcomes = a.calls[slot];
      if (outcomes === undefined) {
        outcomes = new Map();
        a.calls[slot] = outcomes;
      }
      let c = outcomes.get(outcome);
      if (c === undefined) {
        c = fam.calls.child(action, door, payment, outcome);
        outcomes.set(outcome, c);
      }
      c.value++;
      let h = a.latency[d];
      if (h === undefined) {
        h = fam.callSeconds.child(action, DOORS[d] as Door);
        a.latency[d] = h;
      }
      h.observe(seconds);
    },
    charged(action, payment, micros) {
      const a = slotsOf(action);
      const p = PAYMENT_INDEX[payment];
      let c = a.charged[p];
      if (c === undefined) {
        c = fam.charged.child(action, payment);
        a.charged[p] = c;
      }
      c.value += micros;
    },
    voided: (reason) => fam.voided.child(reason).inc(),
    captureFailed: () => captureFailed.inc(),
    refunded(reason, micros) {
      fam.refunded.child(reason).inc(micros);
      fam.refunds.child(reason).inc();
    },
    credited: (reason, micros) => fam.credited.child(reason).inc(micros),
    holdRefused: (reason: HoldRefusal, scope: CapScope) => fam.refused.child(reason, scope).inc(),
    cardMoney: (kind, micros) => fam.card.child(kind).inc(micros),
    cardSettlement(outcome, micros) {
      fam.cardSettlements.child(outcome).inc();
      if (micros > 0) fam.cardSettled.child().inc(micros);
    },
    holdsExpired: (n) => expired.inc(n),
    ledgerOp: (op, seconds) => ledgerOps[op].observe(seconds),
    upstream(vendor, outcome, seconds) {
      let v = byVendor.get(vendor);
      if (v === undefined) {
        v = { seconds: fam.upstreamSeconds.child(vendor), outcomes: new Map() };
        byVendor.set(vendor, v);
      }
      v.seconds.observe(seconds);
      let c = v.outcomes.get(outcome);
      if (c === undefined) {
        c = fam.upstream.child(vendor, outcome);
        v.outcomes.set(outcome, c);
      }
      c.value++;
    },
    llmUsage(tier, prompt, completion, costMicros) {
      fam.tokens.child(tier, 'prompt').inc(prompt);
      fam.tokens.child(tier, 'completion').inc(completion);
      fam.llmCost.child(tier).inc(costMicros);
    },
    x402(step, outcome, seconds) {
      const s = x402Steps[step];
      s.seconds.observe(seconds);
      let c = s.outcomes.get(outcome);
      if (c === undefined) {
        c = fam.x402.child(step, outcome);
        s.outcomes.set(outcome, c);
      }
      c.value++;
    },
  };

  return {
    metrics,
    commits,
    registry,
    render: () => registry.metrics(),
    contentType: registry.contentType,
  };
}
