// Per-method request counts, error counts and latency histograms, on the request path.
// Each method has one MethodStat created when the registry is built; recording a request
// bumps its numbers in place (no allocation, no label hashing). prom-client sees the
// figures only at scrape time (collectors.ts).

/** Upper bounds (seconds) of the per-method latency histogram. */
export const LATENCY_BUCKETS: readonly number[] = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** The label unknown method names share, so a client cannot grow the series set. */
export const OTHER_METHOD = 'other';

export class MethodStat {
  requests = 0;
  errors = 0;
  /** Sum of latencies in seconds. */
  seconds = 0;
  /** Requests per latency bucket (not cumulative); slower than every bound: only in `requests`. */
  readonly buckets = new Float64Array(LATENCY_BUCKETS.length);

  constructor(readonly method: string) {}

  /** Records a request answered after `ms` milliseconds (the caller reads the clock once
   *  for this and the slow-request log). */
  record(ms: number, failed: boolean): void {
    const seconds = ms / 1000;
    this.requests++;
    if (failed) this.errors++;
    this.seconds += seconds;
    for (let i = 0; i < LATENCY_BUCKETS.length; i++) {
      if (seconds <= LATENCY_BUCKETS[i]!) {
        this.buckets[i]!++;
        return;
      }
    }
  }
}

/** One event loop's figures, by method name. */
export class RpcStats {
  private readonly byName = new Map<string, MethodStat>();
  private readonly other = new MethodStat(OTHER_METHOD);

  constructor(methods: Iterable<string>) {
    for (const name of methods) this.byName.set(name, new MethodStat(name));
  }

  /** The entry a request for `method` records into (unknown names share one). */
  of(method: string): MethodStat {
    return this.byName.get(method) ?? this.other;
  }

  /** Methods that served at least one request. */
  used(): MethodStat[] {
    const out = [...this.byName.values()].filter((s) => s.requests > 0);
    if (this.other.requests > 0) out.push(this.other);
    return out;
  }
}
