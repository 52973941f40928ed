/** One row of the summary of docs/benchmarks.md: a target as its issue states it, and what this run measured. */
export interface BenchTarget {
  /** The target, as the issue states it, with the issue: "#19 HTTP shim added p50 at concurrency 1 ≤ 0.6 ms". */
  target: string;
  /** What was measured, with the baseline of the same run beside it where the target is a ratio. */
  measured: string;
  verdict: 'met' | 'not met' | 'reported';
  /** Why a target is not met (what the section's profile says), one sentence. */
  why?: string;
}

/** One section of docs/benchmarks.md, written by one bench module. */
export interface BenchSection {
  /** Stable id; the section lives between `<!-- bench:id -->` markers so modules can be re-run alone. */
  id: string;
  title: string;
  /** Markdown: what was measured, how, the figures, the target and what limits it. */
  body: string;
  /**
   * The section's rows of the summary table, computed from its own figures. bench/run.ts stores them in the
   * section (a machine-readable comment) and builds the summary from every section's rows, so a section not
   * re-run keeps its figures and its rows.
   */
  targets?: BenchTarget[];
}

/** A bench module: one section, or several (the soak writes the fast and the slow upstream's). */
export type BenchModule = () => Promise<BenchSection | BenchSection[]>;

/** "met" or "not met", for a target checked by a comparison. */
export const verdict = (ok: boolean): 'met' | 'not met' => (ok ? 'met' : 'not met');
