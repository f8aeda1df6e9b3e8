// How bench:interval compares eth_call throughput between intervals. On this VM one 4 s
// window of reads differs from the next by up to ±10 % at the same interval (the host, not
// the node: the node's every thread slows together), which is as large as what is being
// measured. So the reads are taken in rounds, the intervals alternate across many leaders
// (`--repeat`), and the comparison is a ratio of means over repetitions with a bootstrap
// confidence interval, next to what each thread of the leader used meanwhile.

export interface ReadSample {
  intervalMs: number;
  /** Which repetition of the interval list this leader belongs to. */
  rep: number;
  /** req/s of each round. */
  rounds: number[];
  /** % of a core per leader thread over the rounds. */
  threads: [string, number][];
}

const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;

/** A deterministic generator, so a summary can be recomputed from the saved rows. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface Comparison {
  intervalMs: number;
  baseMs: number;
  pairs: number;
  /** Mean req/s at each, over the repetitions that have both. */
  rps: number;
  baseRps: number;
  /** rps ÷ baseRps − 1, and its 95 % bootstrap interval (repetitions resampled). */
  change: number;
  low: number;
  high: number;
  /** Single repetitions' changes, smallest and largest. */
  min: number;
  max: number;
}

/** Each interval against `baseMs`, paired by repetition. */
export function compare(samples: ReadSample[], baseMs: number): Comparison[] {
  const byRep = new Map<number, Map<number, number>>();
  for (const s of samples) {
    const reps = byRep.get(s.rep) ?? new Map<number, number>();
    reps.set(s.intervalMs, mean(s.rounds));
    byRep.set(s.rep, reps);
  }
  const intervals = [...new Set(samples.map((s) => s.intervalMs))].filter((i) => i !== baseMs);
  return intervals.map((intervalMs) => {
    const pairs = [...byRep.values()].filter((m) => m.has(intervalMs) && m.has(baseMs)).map((m) => [m.get(intervalMs)!, m.get(baseMs)!] as const);
    const ratio = (ps: (readonly [number, number])[]) => mean(ps.map(([a]) => a)) / mean(ps.map(([, b]) => b)) - 1;
    const next = rng(pairs.length * 7919 + intervalMs);
    const boot: number[] = [];
    for (let i = 0; i < 10_000; i++) boot.push(ratio(pairs.map(() => pairs[Math.floor(next() * pairs.length)]!)));
    boot.sort((a, b) => a - b);
    const singles = pairs.map(([a, b]) => a / b - 1);
    return {
      intervalMs,
      baseMs,
      pairs: pairs.length,
      rps: mean(pairs.map(([a]) => a)),
      baseRps: mean(pairs.map(([, b]) => b)),
      change: ratio(pairs),
      low: boot[Math.floor(boot.length * 0.025)]!,
      high: boot[Math.floor(boot.length * 0.975)]!,
      min: Math.min(...singles),
      max: Math.max(...singles),
    };
  });
}

/** Mean % of a core per thread at each interval, a pool's threads (preconf-calls-0..3) as one
 *  row, busiest first (by the first interval). */
export function threadTable(samples: ReadSample[], intervals: number[]): [string, number[]][] {
  const rows = new Map<string, number[]>();
  intervals.forEach((interval, col) => {
    const at = samples.filter((x) => x.intervalMs === interval);
    for (const s of at) {
      for (const [name, pct] of s.threads) {
        const key = name.replace(/-\d+$/, '-*');
        const row = rows.get(key) ?? intervals.map(() => 0);
        row[col]! += pct / at.length;
        rows.set(key, row);
      }
    }
  });
  return [...rows].sort((a, b) => b[1][0]! - a[1][0]!);
}
