// Counters and histograms whose hot path is plain arithmetic on a pre-bound child (`child.value += 1`), read
// by prom-client's registry only when /metrics is scraped. prom-client's own children hash their label set
// into a string on every observation; these build that string once, when a label set is first seen.
// They implement the registry's metric interface (`name`, `help`, `type`, `get()`, `reset()`), so prom-client
// still does the exposition, the content type and the process metrics.

import { Histogram } from '../lib/histogram.js';

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
      c = this.make(Object.fromEntries(this.labelNames.map((n, i) => [n, values[i] ?? ''])));
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

/** A histogram of one label set (the storage is src/lib/histogram.ts, shareable with another thread). */
export class HistogramChild extends Histogram {
  constructor(
    readonly labels: Labels,
    bounds: readonly number[],
    buffer?: SharedArrayBuffer,
  ) {
    super(bounds, buffer);
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

  /** A child observed elsewhere (another thread): the family exposes the given shared histogram's figures. */
  adopt(values: string[], shared: Histogram): HistogramChild {
    const c = this.child(...values);
    if (shared.bounds.join() !== this.bounds.join()) throw new Error(`${this.name}: adopted bounds differ`);
    const child = new HistogramChild(c.labels, this.bounds, shared.data.buffer as SharedArrayBuffer);
    this.children.set(values.join('\u0000'), child);
    return child;
  }

  get() {
    const values: Sample[] = [];
    const bucket = `${this.name}_bucket`;
    for (const c of this.children.values()) {
      let cumulative = 0;
      for (let i = 0; i <= this.bounds.length; i++) {
        cumulative += c.bucket(i);
        const le = i < this.bounds.length ? String(this.bounds[i]) : '+Inf';
        values.push({ metricName: bucket, labels: { ...c.labels, le }, value: cumulative });
      }
      values.push({ metricName: `${this.name}_sum`, labels: c.labels, value: c.sum });
      values.push({ metricName: `${this.name}_count`, labels: c.labels, value: c.count });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }
}
