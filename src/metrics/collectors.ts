// Metrics whose figures are kept elsewhere (the addon, the per-method stats) and turned
// into samples only when scraped. They follow prom-client's collector contract (name,
// help, type, aggregator and an async get()), so prom-client renders them, aggregates
// them across event loops and checks their names like its own.

import type { Registry, Metric } from 'prom-client';

export type Labels = Record<string, string | number>;

export interface Sample {
  value: number;
  labels: Labels;
  /** For histograms: `<name>_bucket`, `<name>_sum`, `<name>_count`. */
  metricName?: string;
}

export type Kind = 'counter' | 'gauge' | 'histogram';

/** Cumulative counts per upper bound, their sum and the total count. */
export interface HistogramFigures {
  bounds: readonly number[];
  cumulative: ArrayLike<number>;
  sum: number;
  count: number;
}

/** Registers a metric whose samples `samples()` computes at scrape time. */
export function registerSnapshot(registry: Registry, name: string, help: string, type: Kind, samples: () => Sample[]): void {
  const metric = {
    name,
    help,
    type,
    aggregator: 'sum' as const,
    get: async () => ({ name, help, type, aggregator: 'sum' as const, values: samples() }),
    reset: () => {},
  };
  registry.registerMetric(metric as unknown as Metric);
}

/** The samples of one histogram series (`labels` identify the series, `le` is added). */
export function histogramSamples(name: string, h: HistogramFigures, labels: Labels = {}): Sample[] {
  const out: Sample[] = [];
  for (let i = 0; i < h.bounds.length; i++) {
    out.push({ metricName: `${name}_bucket`, labels: { ...labels, le: h.bounds[i]! }, value: h.cumulative[i]! });
  }
  out.push(
    { metricName: `${name}_bucket`, labels: { ...labels, le: '+Inf' }, value: h.count },
    { metricName: `${name}_sum`, labels, value: h.sum },
    { metricName: `${name}_count`, labels, value: h.count },
  );
  return out;
}

/** Running totals of per-bucket counts (what Prometheus' `le` buckets hold). */
export function cumulate(perBucket: ArrayLike<number>): number[] {
  const out: number[] = [];
  let sum = 0;
  for (let i = 0; i < perBucket.length; i++) out.push((sum += perBucket[i]!));
  return out;
}
