// Counters and histograms whose hot path is plain arithmetic on a pre-bound child (`child.value += 1`), read
// by prom-client's registry only when /metrics is scraped. prom-client's own children hash their label set
// into a string on every observation; these build that string once, when a label set is first seen.
// They implement the registry's metric interface (`name`, `help`, `type`, `get()`, `reset()`), so prom-client
// still does the exposition, the content type and the process metrics.

type Labels = Record<string, string>;

interface Sample {
  labels: Labels;
  value: number;
  metricName?: string;
}

abstract class Family<C extends { labels: Labels }> {
  protected readonly children = new Map<string, C>();
  readonly aggregator = 'sum';

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
  ) {}

  /** The child of one label set: look it up once and keep it (this builds a key string). */
  child(...values: string[]): C {
    const key = values.join('\u0000');
    let c = this.children.get(key);
    if (c === undefined) {
      const labels: Labels = {};
      this.labelNames.forEach((n, i) => {
        labels[n] = values[i] ?? '';
      });
      c = this.make(labels);
      this.children.set(key, c);
    }
    return c;
  }

  protected abstract make(labels: Labels): C;
  abstract get(): { name: string; help: string; type: string; values: Sample[]; aggregator: string };

  reset(): void {
    this.children.clear();
  }
}

export class CounterChild {
  value = 0;
  constructor(readonly labels: Labels) {}
  inc(n = 1): void {
    this.value += n;
  }
}

export class CounterFamily extends Family<CounterChild> {
  readonly type = 'counter';

  protected make(labels: Labels): CounterChild {
    return new CounterChild(labels);
  }

  get() {
    const values: Sample[] = [];
    for (const c of this.children.values()) values.push({ labels: c.labels, value: c.value });
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }
}

export class HistogramChild {
  /** Per bucket (the last is +Inf), not cumulative: cumulated at scrape. */
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(
    readonly labels: Labels,
    private readonly bounds: readonly number[],
  ) {
    this.counts = new Float64Array(bounds.length + 1);
  }

  observe(v: number): void {
    const b = this.bounds;
    let i = 0;
    while (i < b.length && v > (b[i] as number)) i++;
    this.counts[i] = (this.counts[i] as number) + 1;
    this.sum += v;
    this.count++;
  }
}

export class HistogramFamily extends Family<HistogramChild> {
  readonly type = 'histogram';

  constructor(
    name: string,
    help: string,
    labelNames: readonly string[],
    readonly bounds: readonly number[],
  ) {
    super(name, help, labelNames);
  }

  protected make(labels: Labels): HistogramChild {
    return new HistogramChild(labels, this.bounds);
  }

  get() {
    const values: Sample[] = [];
    const bucket = `${this.name}_bucket`;
    for (const c of this.children.values()) {
      let cumulative = 0;
      for (let i = 0; i <= this.bounds.length; i++) {
        cumulative += c.counts[i] as number;
        const le = i < this.bounds.length ? String(this.bounds[i]) : '+Inf';
        values.push({ metricName: bucket, labels: { ...c.labels, le }, value: cumulative });
      }
      values.push({ metricName: `${this.name}_sum`, labels: c.labels, value: c.sum });
      values.push({ metricName: `${this.name}_count`, labels: c.labels, value: c.count });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }
}
