// Summarises benches/runtimes.sh: per scenario, the median over the rounds of each runtime's
// figure, and new ÷ old (Node.js 24 + uWS 20.57 against Node.js 20 + uWS 20.30).
//
//   node --import tsx benches/runtimes-summary.ts DIR

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Results } from './report.js';

const dir = process.argv[2] ?? '.bench/runtimes';
const OLD = 'node20-uws20.30';
const NEW = 'node24-uws20.57';

/** Figures by runtime, then by row name: one value per round. */
const figures: Record<string, Record<string, number[]>> = { [OLD]: {}, [NEW]: {} };
const add = (runtime: string, row: string, v: number): void => void (figures[runtime]![row] ??= []).push(v);

for (const file of readdirSync(dir).filter((f) => f.endsWith('.json'))) {
  const runtime = file.startsWith(OLD) ? OLD : file.startsWith(NEW) ? NEW : null;
  if (!runtime) continue;
  const r = JSON.parse(readFileSync(join(dir, file), 'utf8')) as Results;
  for (const read of r.reads) {
    const m = Object.values(read.perTarget)[0];
    if (!m) continue;
    add(runtime, `${read.name} req/s`, m.report.rps);
    add(runtime, `${read.name} p99 µs`, m.report.latency_us.p99);
    if (m.proc) add(runtime, `${read.name} server RSS MiB`, m.proc.rssMiB);
  }
  for (const f of Object.values(r.flood)) {
    add(runtime, 'sendRawTransaction flood accepted tx/s', f.acceptedTps);
    add(runtime, 'sendRawTransaction flood submit p99 ms', f.submitMs.p99);
  }
  for (const p of Object.values(r.paced)) add(runtime, 'sendRawTransaction paced submit p99 ms', p.submitMs.p99);
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const fmt = (v: number): string => (v >= 100 ? v.toFixed(0) : v.toFixed(2));

console.log(`| figure (median of rounds) | Node 20 + uWS 20.30 | Node 24 + uWS 20.57 | new ÷ old |`);
console.log(`|---|---:|---:|---:|`);
for (const row of Object.keys(figures[OLD]!)) {
  const o = figures[OLD]![row]!;
  const n = figures[NEW]![row];
  if (!n) continue;
  console.log(`| ${row} (${o.length}/${n.length} rounds) | ${fmt(median(o))} | ${fmt(median(n))} | ${(median(n) / median(o)).toFixed(2)} |`);
}
