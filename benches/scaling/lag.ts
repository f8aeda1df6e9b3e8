// How far the durable watermark trails the chain: `latest` minus `safe` (the newest durable
// block), sampled every 250 ms from /metrics (preconf_head_block, preconf_durable_block).
// Reported whole and per minute, so a lag that grows over the run shows as a rising tail.

import { percentile, sleep } from '../util.js';

export interface LagReport {
  p50: number;
  p99: number;
  max: number;
  samples: number;
  /** p99 and max of each minute of the run, in order. */
  perMinute: { p99: number; max: number }[];
}

const gauge = (text: string, name: string): number => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? Number.NaN);

export function watchLag(url: string): { stop: () => Promise<LagReport> } {
  const samples: { at: number; lag: number }[] = [];
  let running = true;
  const t0 = performance.now();
  const loop = (async () => {
    while (running) {
      try {
        const text = await (await fetch(`${url}/metrics`)).text();
        const lag = gauge(text, 'preconf_head_block') - gauge(text, 'preconf_durable_block');
        if (Number.isFinite(lag)) samples.push({ at: performance.now() - t0, lag });
      } catch {
        // a scrape that failed under load is a missing sample, not a lag
      }
      await sleep(250);
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      const lags = samples.map((s) => s.lag);
      const minutes = Math.ceil((samples.at(-1)?.at ?? 0) / 60_000);
      const perMinute = Array.from({ length: minutes }, (_, m) => {
        const inMinute = samples.filter((s) => s.at >= m * 60_000 && s.at < (m + 1) * 60_000).map((s) => s.lag);
        return { p99: percentile(inMinute, 99), max: Math.max(...inMinute) };
      });
      return { p50: percentile(lags, 50), p99: percentile(lags, 99), max: Math.max(...lags), samples: lags.length, perMinute };
    },
  };
}
