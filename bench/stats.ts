/** Percentile of a sorted array (nearest-rank). */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const idx = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[idx] as number;
}

export interface Summary {
  p50: number;
  p99: number;
  mean: number;
  n: number;
}

export function summarize(samplesMs: number[]): Summary {
  const s = [...samplesMs].sort((a, b) => a - b);
  const mean = s.reduce((a, b) => a + b, 0) / (s.length || 1);
  return { p50: percentile(s, 50), p99: percentile(s, 99), mean, n: s.length };
}

export const fmt = (ms: number, digits = 3) => `${ms.toFixed(digits)} ms`;

/**
 * Runs `task` `total` times with `concurrency` workers; returns per-call latencies (ms) and calls/s.
 */
export async function load(
  total: number,
  concurrency: number,
  task: (i: number) => Promise<void>,
): Promise<{ latencies: number[]; perSecond: number }> {
  const latencies: number[] = [];
  let next = 0;
  const start = performance.now();
  async function worker() {
    while (next < total) {
      const i = next++;
      const t = performance.now();
      await task(i);
      latencies.push(performance.now() - t);
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker));
  const secs = (performance.now() - start) / 1000;
  return { latencies, perSecond: total / secs };
}

/** Runs the tasks round-robin, one call at a time, `n` rounds; per task its latencies and calls/s. */
export async function interleave(
  n: number,
  tasks: ReadonlyArray<() => Promise<void>>,
): Promise<Array<{ latencies: number[]; perSecond: number }>> {
  const latencies = tasks.map(() => [] as number[]);
  const busy = tasks.map(() => 0);
  for (let i = 0; i < n; i++) {
    for (const [k, task] of tasks.entries()) {
      const t = performance.now();
      await task();
      const ms = performance.now() - t;
      latencies[k]?.push(ms);
      busy[k] = (busy[k] ?? 0) + ms;
    }
  }
  return tasks.map((_, k) => ({ latencies: latencies[k] ?? [], perSecond: (n / (busy[k] ?? 1)) * 1000 }));
}
