// Pre-confirmation cadence, seen from outside through a light side channel: the load
// generator's watch mode polls eth_getBlockByNumber("pending", false) on its own
// keep-alive connection every --watch-ms and records each poll at which the pending
// block's (number, preconfIndex) changed. A change is placed in the middle of
// [send of the previous poll, answer of this one]; the width of that bracket is the
// resolution, reported with the intervals. A jump of more than one pre-confirmation
// between two polls is counted as skipped (its interval is then not a single one).

import { runWatch, type WatchReport } from './loadgen.js';
import { percentile } from './util.js';

export const PENDING_BLOCK = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_getBlockByNumber', params: ['pending', false] });

export interface CadenceStats {
  preconfs: number;
  intervalMs: { p50: number; p99: number; min: number; max: number };
  blockIntervalMs: number; // median time between new pending block numbers
  skipped: number;
  /** Pre-confirmations per complete block, as "count×blocks" (e.g. "10×4, 11×1"). */
  perBlock: string;
  resolutionMs: { p50: number; p99: number };
  pollRttMs: { p50: number; p99: number };
  pollsPerS: number;
  errors: number;
  /** Every change: [ms since the first, block number, preconfIndex]. */
  changes: [number, number, number][];
}

export function watchPending(url: string, duration: number, watchMs: number): Promise<WatchReport> {
  return runWatch(url, PENDING_BLOCK, duration, watchMs);
}

export function analyze(w: WatchReport, duration: number): CadenceStats {
  const times: number[] = [];
  const blockTimes: number[] = [];
  const brackets: number[] = [];
  let skipped = 0;
  const perBlock = new Map<number, number>();
  let prev: { n: number; i: number } | null = null;
  const changes: [number, number, number][] = [];
  let sawBlockStart = false; // count a block only if its first pre-confirmation was seen
  for (const e of w.events) {
    const n = Number(e.values.number);
    const i = Number(e.values.preconfIndex);
    const t = (e.prev_send_us + e.recv_us) / 2;
    changes.push([Math.round((t - w.events[0]!.recv_us) / 100) / 10, n, i]);
    if (prev !== null) {
      // The first event is just the value at the start, not a change.
      if (n === prev.n ? i !== prev.i + 1 : i !== 0) skipped++;
      if (n !== prev.n) {
        blockTimes.push(t);
        if (sawBlockStart) perBlock.set(prev.i + 1, (perBlock.get(prev.i + 1) ?? 0) + 1);
        sawBlockStart = i === 0;
      }
      times.push(t);
      brackets.push((e.recv_us - e.prev_send_us) / 1000);
    }
    prev = { n, i };
  }
  const intervals = times.slice(1).map((t, k) => (t - times[k]!) / 1000);
  const blockIntervals = blockTimes.slice(1).map((t, k) => (t - blockTimes[k]!) / 1000);
  return {
    preconfs: intervals.length,
    intervalMs: {
      p50: percentile(intervals, 50),
      p99: percentile(intervals, 99),
      min: percentile(intervals, 0),
      max: percentile(intervals, 100),
    },
    blockIntervalMs: percentile(blockIntervals, 50),
    skipped,
    perBlock: [...perBlock].sort((a, b) => a[0] - b[0]).map(([k, v]) => `${k}×${v}`).join(', ') || '—',
    resolutionMs: { p50: percentile(brackets, 50), p99: percentile(brackets, 99) },
    pollRttMs: { p50: w.rtt_us.p50 / 1000, p99: w.rtt_us.p99 / 1000 },
    pollsPerS: w.polls / duration,
    errors: w.errors,
    changes,
  };
}
