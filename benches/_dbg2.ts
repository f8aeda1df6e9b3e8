import { startPreconfNode } from './servers.js';
import { pacedWithReads } from './txs.js';
import { runLoad } from './loadgen.js';
import { holders } from './fixtures.js';
import { writeFileSync } from 'node:fs';
const s = await startPreconfNode([]);
const withReads = process.argv[2] === 'reads';
const readBodies = holders().map((a, i) => JSON.stringify({ jsonrpc: '2.0', id: i + 1, method: 'eth_getBalance', params: [a, 'latest'] }));
let probe: any;
const r = await pacedWithReads(s, {
  rate: Number(process.argv[3] ?? 200), duration: 8, warmup: 1, connections: withReads ? 8 : 1, pipeline: 1, pollMs: 10,
  readBodies: withReads ? readBodies : readBodies.slice(0, 1),
  alongside: async () => { probe = await runLoad({ url: s.url, bodies: Array.from({ length: 3500 }, () => '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}'), connections: 1, duration: 8, rate: 500, once: true, timestamps: true }); },
});
console.log(JSON.stringify({ ...r, reads: { rps: r.reads.rps, lat: r.reads.latency_us }, proc: r.proc }));
console.log('probe', JSON.stringify(probe.latency_us));
writeFileSync('/tmp/probe.json', JSON.stringify(probe.timestamps));
await s.stop();
