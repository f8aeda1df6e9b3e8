// Seal and commit durations from the node's own histograms (GET /metrics,
// preconf_builder_seal_duration_seconds, preconf_store_commit_duration_seconds): p50 and
// p99 interpolated within buckets.

export async function histogramQuantiles(
  url: string,
  metric = 'preconf_builder_seal_duration_seconds',
): Promise<{ p50: number; p99: number; count: number; source: string } | null> {
  let text: string;
  try {
    const r = await fetch(`${url}/metrics`);
    if (!r.ok) return null;
    text = await r.text();
  } catch {
    return null;
  }
  const buckets: [number, number][] = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${metric}_bucket{`)) continue;
    const m = /le="([^"]+)"[^}]*\} (\S+)/.exec(line);
    if (m) buckets.push([m[1] === '+Inf' ? Infinity : Number(m[1]), Number(m[2])]);
  }
  if (buckets.length === 0) return null;
  buckets.sort((a, b) => a[0] - b[0]);
  const count = buckets[buckets.length - 1]![1];
  const q = (p: number) => {
    const want = (count * p) / 100;
    let prevLe = 0;
    let prevCount = 0;
    for (const [le, c] of buckets) {
      if (c >= want) {
        if (!Number.isFinite(le)) return prevLe * 1000;
        const frac = c === prevCount ? 1 : (want - prevCount) / (c - prevCount);
        return (prevLe + frac * (le - prevLe)) * 1000;
      }
      prevLe = le;
      prevCount = c;
    }
    return NaN;
  };
  return { p50: q(50), p99: q(99), count, source: 'node histogram' };
}
