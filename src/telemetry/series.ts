/**
 * @module telemetry/series
 * Counters, gauges and histograms whose per-request update is a lookup in a tree of maps keyed
 * by label values (no label-object validation, sorting or hashing per call, as prom-client does
 * on every `inc`/`observe`), exported through a prom-client `Registry` as ordinary metrics: each
 * class implements the registry's metric shape (`name`, `help`, `type`, `get()`), and the
 * registry formats them like its own. Label values are positional, in `labelNames` order, and
 * come from closed sets (routes, catalog models, vendors, statuses), as with any Prometheus
 * metric: every combination seen is kept.
 */
import type { Registry } from "prom-client";

interface MetricValue {
  value: number;
  labels: Record<string, string | number>;
  sharedLabels?: Record<string, string>;
  metricName?: string;
}

interface Definition {
  name: string;
  help: string;
  labelNames: readonly string[];
  registers: readonly Registry[];
}

type Tree<S> = Map<string, Tree<S> | S>;

/** The series of each label-value combination, created on first use. */
class SeriesTree<S> {
  readonly #root: Tree<S> = new Map();
  readonly #all: Array<{ labels: Record<string, string>; series: S }> = [];
  constructor(
    private readonly labelNames: readonly string[],
    private readonly create: () => S,
  ) {}

  at(values: readonly string[]): S {
    let node = this.#root;
    const last = this.labelNames.length - 1;
    for (let depth = 0; depth < last; depth += 1) {
      const value = values[depth]!;
      let next = node.get(value) as Tree<S> | undefined;
      if (!next) {
        next = new Map();
        node.set(value, next);
      }
      node = next;
    }
    const value = values[last]!;
    let series = node.get(value) as S | undefined;
    if (series === undefined) {
      series = this.create();
      node.set(value, series);
      const labels: Record<string, string> = {};
      this.labelNames.forEach((name, index) => {
        labels[name] = values[index]!;
      });
      this.#all.push({ labels, series });
    }
    return series;
  }

  entries(): ReadonlyArray<{ labels: Record<string, string>; series: S }> {
    return this.#all;
  }
}

abstract class RegisteredMetric {
  readonly name: string;
  readonly help: string;
  abstract readonly type: "counter" | "gauge" | "histogram";
  constructor(definition: Definition) {
    if (definition.labelNames.length === 0) throw new Error(`${definition.name}: no labels`);
    this.name = definition.name;
    this.help = definition.help;
    // The registry takes any object of this shape (it only reads name, help, type and get()).
    for (const registry of definition.registers)
      registry.registerMetric(this as unknown as Parameters<Registry["registerMetric"]>[0]);
  }
  abstract values(): MetricValue[];
  get() {
    return Promise.resolve({
      name: this.name,
      help: this.help,
      type: this.type,
      values: this.values(),
      aggregator: "sum" as const,
    });
  }
}

/** One number per label-value combination. */
abstract class ValueSeries extends RegisteredMetric {
  protected readonly tree: SeriesTree<{ value: number }>;
  readonly #divisor: number;
  constructor(definition: Definition & { exportDivisor?: number }) {
    super(definition);
    this.tree = new SeriesTree(definition.labelNames, () => ({ value: 0 }));
    this.#divisor = definition.exportDivisor ?? 1;
  }
  values(): MetricValue[] {
    const divisor = this.#divisor;
    return this.tree
      .entries()
      .map(({ labels, series }) => ({ labels, value: series.value / divisor }));
  }
}

/**
 * A labelled counter. With `exportDivisor` it sums in one unit and exports in another, divided
 * once at scrape (integer micro-USD summed exactly, exported as USD).
 */
export class SeriesCounter extends ValueSeries {
  readonly type = "counter";
  inc(values: readonly string[], by = 1): void {
    if (!(by >= 0)) throw new Error(`${this.name}: a counter only goes up (got ${by})`);
    this.tree.at(values).value += by;
  }
}

/** A labelled gauge moved up and down (requests in progress, say). */
export class SeriesGauge extends ValueSeries {
  readonly type = "gauge";
  add(values: readonly string[], delta: number): void {
    this.tree.at(values).value += delta;
  }
}

interface Buckets {
  counts: number[];
  sum: number;
  count: number;
}

/** A labelled histogram with fixed upper bounds (seconds, say). */
export class SeriesHistogram extends RegisteredMetric {
  readonly type = "histogram";
  readonly #bounds: readonly number[];
  readonly #tree: SeriesTree<Buckets>;
  constructor(definition: Definition & { buckets: readonly number[] }) {
    super(definition);
    this.#bounds = [...definition.buckets].sort((a, b) => a - b);
    const size = this.#bounds.length;
    this.#tree = new SeriesTree(definition.labelNames, () => ({
      counts: new Array<number>(size).fill(0),
      sum: 0,
      count: 0,
    }));
  }
  observe(values: readonly string[], value: number): void {
    const series = this.#tree.at(values);
    const bounds = this.#bounds;
    for (let index = 0; index < bounds.length; index += 1) {
      if (value <= bounds[index]!) {
        series.counts[index]! += 1;
        break;
      }
    }
    series.sum += value;
    series.count += 1;
  }
  values(): MetricValue[] {
    const out: MetricValue[] = [];
    const bucket = `${this.name}_bucket`;
    for (const { labels, series } of this.#tree.entries()) {
      let cumulative = 0;
      this.#bounds.forEach((le, index) => {
        cumulative += series.counts[index]!;
        out.push({ metricName: bucket, labels: { le }, sharedLabels: labels, value: cumulative });
      });
      out.push({
        metricName: bucket,
        labels: { le: "+Inf" },
        sharedLabels: labels,
        value: series.count,
      });
      out.push({ metricName: `${this.name}_sum`, labels, value: series.sum });
      out.push({ metricName: `${this.name}_count`, labels, value: series.count });
    }
    return out;
  }
}
