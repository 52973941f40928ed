// Bucketed counts, their sum and their count in one Float64Array: [bucket 0 … bucket n (+Inf), sum, count].
// The array may live on a SharedArrayBuffer so that another thread can observe into it while the main thread
// reads it when metrics are scraped. One thread writes; a reader may
// see an observation half-applied, which a metric tolerates.

export class Histogram {
  readonly data: Float64Array;

  constructor(
    readonly bounds: readonly number[],
    buffer?: SharedArrayBuffer | ArrayBuffer,
  ) {
    this.data = new Float64Array(buffer ?? new ArrayBuffer((bounds.length + 3) * 8));
  }

  /** A histogram another thread can observe into: hand it `data.buffer` and the same bounds. */
  static shared(bounds: readonly number[]): Histogram {
    return new Histogram(bounds, new SharedArrayBuffer((bounds.length + 3) * 8));
  }

  observe(v: number): void {
    const b = this.bounds;
    const d = this.data;
    let i = 0;
    while (i < b.length && v > (b[i] as number)) i++;
    d[i] = (d[i] as number) + 1;
    d[b.length + 1] = (d[b.length + 1] as number) + v;
    d[b.length + 2] = (d[b.length + 2] as number) + 1;
  }

  /** Observations in bucket `i` alone (not cumulative); `i = bounds.length` is +Inf. */
  bucket(i: number): number {
    return this.data[i] as number;
  }

  get sum(): number {
    return this.data[this.bounds.length + 1] as number;
  }

  get count(): number {
    return this.data[this.bounds.length + 2] as number;
  }
}

/** The ledger's group commits: how long each took (BEGIN to COMMIT, seconds) and how many writes it carried. */
export interface CommitHistograms {
  seconds: Histogram;
  writes: Histogram;
}
