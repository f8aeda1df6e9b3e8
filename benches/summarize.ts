// Several runs side by side: `node --import tsx benches/summarize.ts a.json b.json ...`
// (files written by `npm run bench -- --out FILE`). Prints, per read scenario and for the
// transaction figures, the median and the range over the runs, for every target and for the
// ratio of the first (this node) to each other: on a shared 2-core VM one
// run's absolute numbers move by a quarter or more, the within-run ratio much less.

import { readFileSync } from 'node:fs';
import type { Results } from './report.js';
import { percentile } from './util.js';

const runs = process.argv.slice(2).map((f) => JSON.parse(readFileSync(f, 'utf8')) as Results);
if (runs.length === 0) {
  console.error('usage: summarize.ts RESULTS.json...');
  process.exit(2);
}

const fmt = (v: number, d = 0) => v.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });
function cell(values: (number | undefined)[], d = 0): string {
  const v = values.filter((x): x is number => x !== undefined && Number.isFinite(x));
  if (v.length === 0) return '—';
  return `${fmt(percentile(v, 50), d)} (${fmt(Math.min(...v), d)}–${fmt(Math.max(...v), d)})`;
}
const row = (cells: string[]) => `| ${cells.join(' | ')} |`;

// The first target (this node) against each other one (baselines, anvil).
const targets = runs[0]!.targets;
const [first, ...others] = targets;
const ratioHead = others.map((n) => `${first} ÷ ${n}`);
const lines = [
  `${runs.length} runs; median (min–max).`,
  '',
  row(['scenario', ...targets.map((n) => `${n} req/s`), ...ratioHead]),
  row(['---', ...targets.map(() => '---'), ...ratioHead.map(() => '---')]),
];
const calib = runs.map((r) => r.calibration[0]?.m.report.rps);
lines.push(row(['*calibration: trivial uWS responder*', cell(calib), ...targets.slice(1).map(() => ''), ...ratioHead.map(() => '')]));
const rps = (r: Results, scenario: string, t: string | undefined) => (t ? r.reads.find((x) => x.name === scenario)?.perTarget[t]?.report.rps : undefined);
const ratio = (p: number | undefined, q: number | undefined) => (p !== undefined && q !== undefined && q !== 0 ? p / q : undefined);
for (const s of runs[0]!.reads) {
  lines.push(
    row([
      s.name,
      ...targets.map((t) => cell(runs.map((r) => rps(r, s.name, t)))),
      ...others.map((t) =>
        cell(
          runs.map((r) => ratio(rps(r, s.name, first), rps(r, s.name, t))),
          2,
        ),
      ),
    ]),
  );
}
lines.push('', row(['transactions', ...targets, ...ratioHead]), row(['---', ...targets.map(() => '---'), ...ratioHead.map(() => '---')]));
const tx = (label: string, get: (r: Results, t: string) => number | undefined, d = 0) =>
  lines.push(
    row([
      label,
      ...targets.map((t) =>
        cell(
          runs.map((r) => get(r, t)),
          d,
        ),
      ),
      ...others.map((t) =>
        cell(
          runs.map((r) => (first ? ratio(get(r, first), get(r, t)) : undefined)),
          2,
        ),
      ),
    ]),
  );
tx('flood: accepted tx/s', (r, t) => r.flood[t]?.acceptedTps);
tx('flood: submit p99 ms', (r, t) => r.flood[t]?.submitMs.p99, 1);
tx('flood: to receipt p50 ms', (r, t) => r.flood[t]?.toReceipt.p50);
tx('flood: to receipt p99 ms', (r, t) => r.flood[t]?.toReceipt.p99);
tx('flood: stuck in the pool', (r, t) => r.flood[t]?.stuck);
tx('sealed eth_getTransactionReceipt req/s', (r, t) => r.flood[t]?.sealed?.receipt.rps);
tx('paced: to receipt p50 ms', (r, t) => r.paced[t]?.toReceipt.p50);
tx('paced: to receipt p99 ms', (r, t) => r.paced[t]?.toReceipt.p99);
tx('paced: submit p99 ms', (r, t) => r.paced[t]?.submitMs.p99, 1);
tx(
  'paced: getBalance req/s meanwhile ÷ alone',
  (r, t) => {
    const p = r.paced[t];
    return p?.readsBefore ? p.reads.rps / p.readsBefore.rps : undefined;
  },
  2,
);
console.log(lines.join('\n'));
