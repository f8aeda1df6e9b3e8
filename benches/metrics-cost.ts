// What the per-request metrics cost on the request path (they must not slow the reads they
// count): recording one request into its method's figures (a map lookup, two clock reads, a
// bucket scan), timed over a few million requests. Compare with the time one request takes at
// the read throughput in RESULTS.md (~28 µs at 35,000 req/s on one core).
//
//   node --import tsx benches/metrics-cost.ts

import { RpcStats } from '../src/metrics/rpc.js';

const N = 5_000_000;
const stats = new RpcStats(['eth_getBalance', 'eth_call', 'eth_sendRawTransaction']);
for (let round = 1; round <= 3; round++) {
  let t0 = performance.now();
  for (let i = 0; i < N; i++) stats.of('eth_getBalance').record(performance.now(), false);
  const recorded = performance.now() - t0;
  t0 = performance.now();
  let sink = 0;
  for (let i = 0; i < N; i++) sink += performance.now();
  const clockOnly = performance.now() - t0;
  const ns = (ms: number) => ((ms / N) * 1e6).toFixed(0);
  console.log(`round ${round}: ${ns(recorded)} ns per recorded request (a clock read alone: ${ns(clockOnly)} ns)${sink > 0 ? '' : ' '}`);
}
