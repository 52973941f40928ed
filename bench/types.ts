/** One section of docs/benchmarks.md, written by one bench module. */
export interface BenchSection {
  /** Stable id; the section lives between `<!-- bench:id -->` markers so modules can be re-run alone. */
  id: string;
  title: string;
  /** Markdown: what was measured, how, the figures, the target and what limits it. */
  body: string;
}

export type BenchModule = () => Promise<BenchSection>;
