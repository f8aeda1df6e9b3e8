// Pre-confirmation cadence, seen from outside through a light side channel: the load
// generator's watch mode polls eth_getBlockByNumber("pending", false) on its own
// keep-alive connection every --watch-ms and records each poll at which the pending
// block's (number, preconfIndex) changed. A change is placed in the middle of
// [send of the previous poll, answer of this one]; the width of that bracket is the
// resolution, reported with the intervals.
//
// What the node does (crates/chain/src/builder): every interval it publishes the next
// pre-confirmation (index 1, 2, ...); the tick that reaches the last index also seals the
// block, and the new block opens with index 0 and no transactions. So a pre-confirmation
// is a change to index >= 1, and the change to (number + 1, 0) is the end of a seal. When
// that change comes less than half an interval after the previous one, the previous one was
// the block's last pre-confirmation (visible only while the seal ran); otherwise the last
// one came and went between two polls and the change stands for it. Index jumps are counted
// as skipped and the intervals across them left out.

import { runWatch, type WatchReport } from './loadgen.js';
import { percentile } from './util.js';

export const PENDING_BLOCK = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_getBlockByNumber', params: ['pending', false] });

export interface CadenceStats {
  preconfs: number;
  intervalMs: { p50: number; p99: number; min: number; max: number };
  /** How long the last pre-confirmation of a block was visible before the next block opened. */
  sealMs: { p50: number; max: number };
  blockIntervalMs: number; // median time between new pending block numbers
  lastIndex: number; // highest preconfIndex seen (pre-confirmations per block, if the last was seen)
  skipped: number;
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
  const obs = w.events.map((e) => ({
    t: (e.prev_send_us + e.recv_us) / 2,
    bracketMs: (e.recv_us - e.prev_send_us) / 1000,
    n: Number(e.values.number),
    i: Number(e.values.preconfIndex),
  }));
  const lastIndex = Math.max(0, ...obs.map((o) => o.i));
  const typical = percentile(
    obs.slice(1).flatMap((o, k) => (o.n === obs[k]!.n && o.i === obs[k]!.i + 1 ? [(o.t - obs[k]!.t) / 1000] : [])),
    50,
  );
  const intervals: number[] = [];
  const seals: number[] = [];
  const blockStarts: number[] = [];
  const brackets: number[] = [];
  let skipped = 0;
  let lastTick: number | null = null; // time of the previous pre-confirmation, null after a skip
  const tick = (t: number) => {
    if (lastTick !== null) intervals.push((t - lastTick) / 1000);
    lastTick = t;
  };
  for (let k = 1; k < obs.length; k++) {
    const [p, o] = [obs[k - 1]!, obs[k]!];
    brackets.push(o.bracketMs);
    if (o.n === p.n && o.i === p.i + 1) tick(o.t);
    else if (o.n === p.n + 1 && o.i === 0) {
      blockStarts.push(o.t);
      const gap = (o.t - p.t) / 1000;
      if (gap < typical / 2) seals.push(gap);
      else tick(o.t); // the block's last pre-confirmation came and went between two polls
    } else {
      skipped += Math.max(1, o.n === p.n ? o.i - p.i - 1 : 1);
      lastTick = o.i >= 1 ? o.t : null;
    }
  }
  const blockIntervals = blockStarts.slice(1).map((t, k) => (t - blockStarts[k]!) / 1000);
  const t0 = obs[0]?.t ?? 0;
  return {
    preconfs: intervals.length,
    intervalMs: {
      p50: percentile(intervals, 50),
      p99: percentile(intervals, 99),
      min: percentile(intervals, 0),
      max: percentile(intervals, 100),
    },
    sealMs: { p50: percentile(seals, 50), max: percentile(seals, 100) },
    blockIntervalMs: percentile(blockIntervals, 50),
    lastIndex,
    skipped,
    resolutionMs: { p50: percentile(brackets, 50), p99: percentile(brackets, 99) },
    pollRttMs: { p50: w.rtt_us.p50 / 1000, p99: w.rtt_us.p99 / 1000 },
    pollsPerS: w.polls / duration,
    errors: w.errors,
    changes: obs.map((o) => [Math.round((o.t - t0) / 100) / 10, o.n, o.i]),
  };
}
