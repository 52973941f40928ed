import { cpuUsage } from 'node:process';
import type { StageTimer } from '../lib/stage-timing.js';
import type { CallSpan, Span, Tracing } from './telemetry.js';

// TOLLGATE_TIMING's recorder: where the wall time and the CPU time of a call go, stage by stage. The doors start
// and finish each call and mark auth and body (src/lib/stage-timing.ts); the execution path's trace steps (the
// Tracing below stands in for OpenTelemetry's) mark validation, the hold, the handler and the capture; the web
// fetcher marks its SSRF check and the fetch. CPU is the process's (every thread: the ledger's writer thread
// too), so a stage is charged with what the whole gateway spent while it ran — exact for calls sent one at a
// time; a call that overlaps another is not recorded (counted as `overlapped`).

/** How many of the most recent calls the table covers (the bench warms up first, then sends its calls). */
const WINDOW = 3000;

export interface StageRow {
  stage: string;
  /** Median wall time, ms. */
  wallP50: number;
  wallMean: number;
  /** Mean wall time over the slowest 1 % of calls (by total), ms: what the tail is made of. */
  wallTail: number;
  /** Mean CPU time of the process during the stage, µs. */
  cpuMean: number;
}

export interface StageReport {
  calls: number;
  overlapped: number;
  rows: StageRow[];
  total: StageRow;
}

export interface StageRecorder {
  timer: StageTimer;
  /** The execution path's trace steps, as stage marks. */
  tracing: Tracing;
  report(): StageReport;
  /** The report as a Markdown table. */
  table(): string;
}

interface OpenCall {
  lastWall: number;
  lastCpu: number;
  stages: Map<string, [number, number]>;
}

export function createStageRecorder(window = WINDOW): StageRecorder {
  const order: string[] = [];
  const calls: Array<Map<string, [number, number]>> = [];
  let open: OpenCall | undefined;
  let overlapped = 0;
  const cpuNow = () => {
    const u = cpuUsage();
    return u.user + u.system;
  };
  const mark = (stage: string) => {
    const call = open;
    if (!call) return;
    const wall = performance.now();
    const cpu = cpuNow();
    const seen = call.stages.get(stage);
    const w = wall - call.lastWall;
    const c = cpu - call.lastCpu;
    if (seen) {
      seen[0] += w;
      seen[1] += c;
    } else {
      call.stages.set(stage, [w, c]);
      if (!order.includes(stage)) order.push(stage);
    }
    call.lastWall = wall;
    call.lastCpu = cpu;
  };
  const timer: StageTimer = {
    start() {
      if (open) {
        overlapped++;
        open = undefined;
        return;
      }
      open = { lastWall: performance.now(), lastCpu: cpuNow(), stages: new Map() };
    },
    mark,
    abandon() {
      open = undefined;
    },
    finish(stage) {
      if (!open) return;
      mark(stage);
      calls.push(open.stages);
      if (calls.length > window) calls.shift();
      open = undefined;
    },
  };
  const noSpan: CallSpan = { end() {}, set() {} };
  const step = (name: string): Span => {
    mark(STEP_BEFORE[name] ?? `before ${name}`);
    return { end: () => mark(STEP_LABEL[name] ?? name) };
  };
  const tracing: Tracing = {
    call: (_action, _door, _carrier, fn) => fn(noSpan),
    step,
    within: (_step, fn) => fn(),
  };
  const report = (): StageReport => {
    const totals = calls.map((c) => [...c.values()].reduce((s, [w, cpu]) => [s[0] + w, s[1] + cpu], [0, 0]));
    const walls = totals.map((t) => t[0] as number);
    // The slowest 1 % of calls (at least one): the stages that make the p99.
    const slowest = walls
      .map((w, i) => [w, i] as const)
      .sort((a, b) => b[0] - a[0])
      .slice(0, Math.max(1, Math.ceil(walls.length / 100)));
    const tail = slowest.map(([, i]) => calls[i] as Map<string, [number, number]>);
    const rows = order.map((stage) => {
      const wall = calls.map((c) => c.get(stage)?.[0] ?? 0).sort((a, b) => a - b);
      const cpu = calls.map((c) => c.get(stage)?.[1] ?? 0);
      const wallTail = mean(tail.map((c) => c.get(stage)?.[0] ?? 0));
      return { stage, wallP50: median(wall), wallMean: mean(wall), wallTail, cpuMean: mean(cpu) };
    });
    const total = {
      stage: 'total',
      wallP50: median([...walls].sort((a, b) => a - b)),
      wallMean: mean(walls),
      wallTail: mean(slowest.map(([w]) => w)),
      cpuMean: mean(totals.map((t) => t[1] as number)),
    };
    return { calls: calls.length, overlapped, rows, total };
  };
  return {
    timer,
    tracing,
    report,
    table() {
      const r = report();
      const label = `stage (${r.calls} calls${r.overlapped ? `, ${r.overlapped} overlapping left out` : ''})`;
      return [...stageTableHead(label), ...r.rows.map(stageRowLine), stageRowLine(r.total)].join('\n');
    },
  };
}

/** The stage table's head (docs/benchmarks.md "Where the time of a paid call goes" prints the same). */
export function stageTableHead(label = 'stage'): string[] {
  return [
    `| ${label} | wall p50 ms | wall mean ms | wall, slowest 1 % ms | CPU µs (mean) |`,
    '|---|---|---|---|---|',
  ];
}

/** One stage as a row of that table. */
export function stageRowLine(x: StageRow): string {
  return `| ${x.stage} | ${x.wallP50.toFixed(3)} | ${x.wallMean.toFixed(3)} | ${x.wallTail.toFixed(3)} | ${Math.round(x.cpuMean)} |`;
}

/** What the gap before each trace step is (the stage that ends when the step starts). */
const STEP_BEFORE: Record<string, string> = {
  validate: 'dispatch: door to execute',
  hold: 'admission: rate limit, precheck',
  upstream: 'before the handler',
  capture: 'before the capture',
};

/** The stage each trace step is. */
const STEP_LABEL: Record<string, string> = {
  validate: 'validate (zod)',
  hold: 'hold',
  upstream: 'handler: after the fetch (parse, convert)',
  capture: 'capture',
};

function median(sorted: number[]): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.floor((sorted.length - 1) / 2)] as number;
}

function mean(xs: number[]): number {
  return xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length;
}
