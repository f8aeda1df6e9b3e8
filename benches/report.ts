// Markdown tables of the results (readable in a terminal and pasted into RESULTS.md).

import type { CadenceStats } from './cadence.js';
import type { RunReport } from './loadgen.js';
import type { Options } from './options.js';
import type { ProcUsage } from './servers.js';
import type { TargetInfo } from './targets.js';
import type { FloodResult, PacedResult } from './txs.js';
import { percentile } from './util.js';

export interface Measured {
  report: RunReport;
  proc: ProcUsage | null;
  load1: number; // machine load average when the run started
}

export interface Meta {
  date: string;
  /** The command that produced the run. */
  command: string;
  cpus: string;
  memGiB: number;
  loadAvgAtStart: string;
  loadAvgAtEnd?: string;
  node: string;
  /** The cores asked for, and the affinities read back from /proc. */
  pinning: { serverCore: number; loadCores: number[]; driver: string | null; calibration: string | null };
  targets: TargetInfo[];
  options: Record<string, unknown>;
}

export interface Results {
  meta: Meta;
  targets: string[];
  /** The trivial uWS responder at the scenarios' settings, and with 8 requests in flight. */
  calibration: { label: string; m: Measured }[];
  reads: { name: string; description: string; perTarget: Record<string, Measured> }[];
  flood: Record<string, FloodResult>;
  /** The paced phase's first round (the table of figures). */
  paced: Record<string, PacedResult>;
  /** Every round of it, per target (`--rounds`). */
  pacedRounds: Record<string, PacedResult[]>;
  cadence: Record<string, Record<string, CadenceStats>>;
}

const f = (n: number | undefined, digits = 0): string =>
  n === undefined || !Number.isFinite(n) ? '—' : n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
const ms = (us: number) => f(us / 1000, 2);
const pair = (a: string, b: string) => `${a} / ${b}`;

function table(head: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [line(head), line(head.map(() => '---')), ...rows.map(line)].join('\n');
}

/** a ÷ b as "1.23×", or — when either is missing. */
const ratio = (a: number | undefined, b: number | undefined): string =>
  a === undefined || b === undefined || !Number.isFinite(a) || !Number.isFinite(b) || b === 0 ? '—' : `${f(a / b, 2)}×`;

export function renderHeader(m: Meta, o: Options): string {
  const p = m.pinning;
  const affinities = [
    ...m.targets.map((t) => `${t.name} ${t.affinity ?? '?'}`),
    ...(p.calibration ? [`calibration responder ${p.calibration}`] : []),
    `driver ${p.driver ?? '?'}`,
  ];
  const targets = m.targets.map((t) => {
    const co = t.checkout;
    const what = co
      ? `${co.dir} at ${co.commit}${co.dirty ? ' (node sources modified)' : ''}, addon built ${co.addonBuilt}, dist built ${co.distBuilt}`
      : (t.version ?? t.url);
    return `- **${t.name}**: ${what}`;
  });
  return (
    `## Benchmark ${m.date}\n\n` +
    '```sh\n' +
    `${m.command}\n` +
    '```\n\n' +
    `Machine: ${m.cpus}, ${m.memGiB} GiB; load average ${m.loadAvgAtStart} at start, ${m.loadAvgAtEnd ?? '?'} at end. Node ${m.node}.\n\n` +
    `Pinning (taskset): servers started by this run on core ${p.serverCore}, load generator and driver on core(s) ${p.loadCores.join(',')}. ` +
    `Read back from /proc: ${affinities.join('; ')}.\n\n` +
    `Targets (in the order they run in each scenario):\n\n${targets.join('\n')}\n\n` +
    `${o.connections} connections, pipeline ${o.pipeline}, ${o.warmup} s warm-up + ${o.duration} s measured per scenario per target.\n\n`
  );
}

function readsTables(r: Results): string {
  const t = r.targets;
  const others = t.slice(1); // ratios: the first target (this node) ÷ each other
  const head = ['scenario', ...t.flatMap((n) => [`${n} req/s`, `${n} p50 / p99 ms`]), ...others.map((n) => `req/s ${t[0]} ÷ ${n}`), 'errors'];
  const rows: string[][] = [];
  for (const { label, m: cal } of r.calibration) {
    const cells = (t.length ? t : ['']).flatMap((_, i) =>
      i === 0 ? [f(cal.report.rps), pair(ms(cal.report.latency_us.p50), ms(cal.report.latency_us.p99))] : ['', ''],
    );
    rows.push([`*calibration: ${label}*`, ...cells, ...others.map(() => ''), String(cal.report.errors)]);
  }
  for (const s of r.reads) {
    const m = t.map((n) => s.perTarget[n]);
    const cells = m.flatMap((x) => (x ? [f(x.report.rps), pair(ms(x.report.latency_us.p50), ms(x.report.latency_us.p99))] : ['—', '—']));
    const q = m.slice(1).map((x) => ratio(m[0]?.report.rps, x?.report.rps));
    rows.push([s.name, ...cells, ...q, m.map((x) => (x ? String(x.report.errors) : '—')).join(' / ')]);
  }
  const { serverCore, loadCores } = r.meta.pinning;
  const resHead = [
    'scenario',
    ...t.flatMap((n) => [`${n} RSS / peak MiB`, `${n} cores`]),
    'loadgen cores',
    `busy: server core ${serverCore}`,
    `busy: load core(s) ${loadCores.join(',')}`,
    'other processes, cores',
    'load avg (1 min)',
  ];
  const resRows: string[][] = [];
  const res = (x: Measured | undefined) => (x?.proc ? [pair(f(x.proc.rssMiB), f(x.proc.hwmMiB)), f(x.proc.cores, 2)] : ['—', '—']);
  const lg = (xs: (Measured | undefined)[]) => xs.map((x) => (x ? f(x.report.cpu_s / x.report.wall_s, 2) : '—')).join(' / ');
  // How busy the pinned cores were, whoever used them: 1.00 on the load core means the
  // generator (or the driver) was the limit, not the server.
  const busy = (xs: (Measured | undefined)[], cores: number[]) =>
    xs
      .map((x) =>
        x?.proc?.coreBusy
          ? f(
              cores.reduce((a, c) => a + (x.proc!.coreBusy![c] ?? Number.NaN), 0),
              2,
            )
          : '—',
      )
      .join(' / ');
  // Busy CPU not used by the server, the load generator or this driver: someone else's load
  // (the idle targets included).
  const other = (xs: (Measured | undefined)[]) =>
    xs.map((x) => (x?.proc ? f(Math.max(0, x.proc.machineCores - x.proc.cores - x.report.cpu_s / x.report.wall_s - x.proc.driverCores), 2) : '—')).join(' / ');
  const tail = (xs: (Measured | undefined)[]) => [lg(xs), busy(xs, [serverCore]), busy(xs, loadCores), other(xs)];
  for (const { label, m: cal } of r.calibration) {
    resRows.push([`*calibration: ${label}*`, ...(t.length ? t : ['']).flatMap((_, i) => (i === 0 ? res(cal) : ['', ''])), ...tail([cal]), f(cal.load1, 2)]);
  }
  for (const s of r.reads) {
    const m = t.map((n) => s.perTarget[n]);
    resRows.push([s.name, ...m.flatMap(res), ...tail(m), m.map((x) => (x ? f(x.load1, 2) : '—')).join(' / ')]);
  }
  return `### Reads\n\n${table(head, rows)}\n\n### Server memory and CPU during the reads\n\n${table(resHead, resRows)}`;
}

/** A paced figure of target `t`: its median over the rounds. */
function pacedFigure(r: Results, t: string, pick: (p: PacedResult) => number | undefined): number | undefined {
  const rounds = r.pacedRounds?.[t] ?? (r.paced[t] ? [r.paced[t]] : []);
  const values = rounds.map(pick).filter((v): v is number => v !== undefined && Number.isFinite(v));
  return values.length > 0 ? percentile(values, 50) : undefined;
}

/** One row per round and target, when there was more than one round. */
function pacedRoundsTable(r: Results): string {
  const entries = Object.entries(r.pacedRounds ?? {});
  if (!entries.some(([, rounds]) => rounds.length > 1)) return '';
  const head = ['target', 'round', 'submit p50 / p99 ms', 'getBalance req/s meanwhile', 'getBalance req/s just before, alone', 'to receipt p50 / p99 ms'];
  const rows = entries.flatMap(([n, rounds]) =>
    rounds.map((x, i) => [
      n,
      String(i + 1),
      pair(f(x.submitMs.p50, 2), f(x.submitMs.p99, 2)),
      f(x.reads.rps),
      f(x.readsBefore.rps),
      pair(f(x.toReceipt.p50, 1), f(x.toReceipt.p99, 1)),
    ]),
  );
  return `### Paced rounds (targets in alternating order; the ratios use each figure's median)\n\n${table(head, rows)}`;
}

/** The transaction figures of this node ÷ the same figure of each other target. */
function txRatios(r: Results): string {
  const [first, ...others] = r.targets;
  if (!first || others.length === 0 || (Object.keys(r.flood).length === 0 && Object.keys(r.paced).length === 0)) return '';
  const figures: [string, (t: string) => number | undefined][] = [
    ['flood: accepted tx/s', (t) => r.flood[t]?.acceptedTps],
    ['flood: submit p50 ms', (t) => r.flood[t]?.submitMs.p50],
    ['flood: submit p99 ms', (t) => r.flood[t]?.submitMs.p99],
    ['flood: to receipt p50 ms', (t) => r.flood[t]?.toReceipt.p50],
    ['flood: to receipt p99 ms', (t) => r.flood[t]?.toReceipt.p99],
    ['flood: included tx/s', (t) => r.flood[t]?.includedTps],
    ['sealed eth_getTransactionReceipt req/s', (t) => r.flood[t]?.sealed?.receipt.rps],
    ['sealed eth_getTransactionByHash req/s', (t) => r.flood[t]?.sealed?.transaction.rps],
    ['paced: submit p50 ms', (t) => pacedFigure(r, t, (p) => p.submitMs.p50)],
    ['paced: submit p99 ms', (t) => pacedFigure(r, t, (p) => p.submitMs.p99)],
    ['paced: to receipt p50 ms', (t) => pacedFigure(r, t, (p) => p.toReceipt.p50)],
    ['paced: to receipt p99 ms', (t) => pacedFigure(r, t, (p) => p.toReceipt.p99)],
    ['paced: getBalance req/s meanwhile', (t) => pacedFigure(r, t, (p) => p.reads.rps)],
    ['paced: getBalance req/s just before, alone', (t) => pacedFigure(r, t, (p) => p.readsBefore.rps)],
    ['paced: receipt lookups/s by the poller', (t) => pacedFigure(r, t, (p) => p.receiptLookupsPerS)],
    ['paced: peak RSS MiB', (t) => pacedFigure(r, t, (p) => p.proc?.hwmMiB)],
  ];
  const rows = figures.map(([label, get]) => [label, ...others.map((n) => ratio(get(first), get(n)))]);
  return `### Transactions: ${first} ÷ each other target (for latencies and memory, below 1 is better)\n\n${table(['figure', ...others.map((n) => `${first} ÷ ${n}`)], rows)}`;
}

function errorsCell(x: { errors: number; missing: number; stuck: number }): string {
  const notes = [x.missing ? `${x.missing} sampled receipts never seen` : '', x.stuck ? `${x.stuck} stuck in the pool` : ''];
  const n = notes.filter(Boolean).join('; ');
  return n ? `${x.errors} (${n})` : String(x.errors);
}

function txTables(r: Results): string {
  const out: string[] = [];
  const floods = Object.entries(r.flood);
  if (floods.length > 0) {
    const head = [
      'target',
      'sent',
      'accepted',
      'errors',
      'accepted tx/s',
      'submit p50 / p99 ms',
      'to receipt p50 / p99 / max ms',
      'sampled (resolution ms)',
      'all included after s',
      'included tx/s',
      'RSS / peak MiB',
      'server / driver / machine cores',
    ];
    const rows = floods.map(([n, x]) => [
      n,
      f(x.sent),
      f(x.accepted),
      errorsCell(x),
      f(x.acceptedTps),
      pair(f(x.submitMs.p50, 2), f(x.submitMs.p99, 2)),
      `${f(x.toReceipt.p50, 1)} / ${f(x.toReceipt.p99, 1)} / ${f(x.toReceipt.max, 1)}`,
      `${x.toReceipt.n} (${f(x.toReceipt.resolutionMs, 1)})`,
      f(x.drainS, 2),
      f(x.includedTps),
      x.proc ? pair(f(x.proc.rssMiB), f(x.proc.hwmMiB)) : '—',
      x.proc ? `${f(x.proc.cores, 2)} / ${f(x.proc.driverCores, 2)} / ${f(x.proc.machineCores, 2)}` : '—',
    ]);
    out.push(`### Transaction flood (eth_sendRawTransaction, ${floods[0]![1].sent} pre-signed transfers)\n\n${table(head, rows)}`);
    const t = r.targets;
    const lookups = (pick: (x: FloodResult) => RunReport | undefined) =>
      t.flatMap((n) => {
        const x = r.flood[n] ? pick(r.flood[n]!) : undefined;
        return x ? [f(x.rps), pair(ms(x.latency_us.p50), ms(x.latency_us.p99)), String(x.errors)] : ['—', '—', '—'];
      });
    const lhead = ['lookup', ...t.flatMap((n) => [`${n} req/s`, `${n} p50 / p99 ms`, `${n} errors`])];
    const lrows = [
      ['eth_getTransactionReceipt', ...lookups((x) => x.sealed?.receipt)],
      ['eth_getTransactionByHash', ...lookups((x) => x.sealed?.transaction)],
    ];
    out.push(`### Lookups of the flood's transactions once sealed (256 hashes)\n\n${table(lhead, lrows)}`);
  }
  const paced = Object.entries(r.paced);
  if (paced.length > 0) {
    const head = [
      'target',
      'tx/s sent',
      'tx errors',
      'submit p50 / p99 ms',
      'to receipt p50 / p99 / max ms',
      'sampled (resolution ms)',
      'getBalance req/s meanwhile',
      'getBalance req/s just before, alone',
      'receipt lookups/s (poller)',
      'read p50 / p99 ms',
      'read errors',
      'RSS / peak MiB',
      'cores: server / loadgen / driver / other',
    ];
    const rows = paced.map(([n, x]) => [
      n,
      f(x.achievedTps),
      errorsCell(x),
      pair(f(x.submitMs.p50, 2), f(x.submitMs.p99, 2)),
      `${f(x.toReceipt.p50, 1)} / ${f(x.toReceipt.p99, 1)} / ${f(x.toReceipt.max, 1)}`,
      `${x.toReceipt.n} (${f(x.toReceipt.resolutionMs, 1)})`,
      f(x.reads.rps),
      f(x.readsBefore.rps),
      f(x.receiptLookupsPerS),
      pair(ms(x.reads.latency_us.p50), ms(x.reads.latency_us.p99)),
      String(x.reads.errors),
      x.proc ? pair(f(x.proc.rssMiB), f(x.proc.hwmMiB)) : '—',
      x.proc
        ? [x.proc.cores, x.loadgenCores, x.proc.driverCores, Math.max(0, x.proc.machineCores - x.proc.cores - x.loadgenCores - x.proc.driverCores)]
            .map((v) => f(v, 2))
            .join(' / ')
        : '—',
    ]);
    const several = Object.values(r.pacedRounds ?? {}).some((rounds) => rounds.length > 1);
    out.push(`### Transfers at ${paced[0]![1].rate} tx/s while eth_getBalance runs flat out${several ? ' (round 1)' : ''}\n\n${table(head, rows)}`);
  }
  out.push(pacedRoundsTable(r));
  out.push(txRatios(r));
  return out.filter(Boolean).join('\n\n');
}

function cadenceTable(r: Results): string {
  const head = [
    'target',
    'condition',
    'intervals',
    'interval p50 / p99 ms',
    'min / max ms',
    'highest index seen',
    'block interval p50 ms',
    'last pre-conf visible p50 / max ms',
    'skipped',
    'resolution p50 / p99 ms',
    'poll RTT p50 / p99 ms',
    'polls/s',
  ];
  const rows: string[][] = [];
  for (const [n, conds] of Object.entries(r.cadence)) {
    for (const [cond, c] of Object.entries(conds)) {
      rows.push([
        n,
        cond,
        String(c.preconfs),
        pair(f(c.intervalMs.p50, 1), f(c.intervalMs.p99, 1)),
        pair(f(c.intervalMs.min, 1), f(c.intervalMs.max, 1)),
        String(c.lastIndex),
        f(c.blockIntervalMs, 0),
        pair(f(c.sealMs.p50, 1), f(c.sealMs.max, 1)),
        String(c.skipped),
        pair(f(c.resolutionMs.p50, 2), f(c.resolutionMs.p99, 2)),
        pair(f(c.pollRttMs.p50, 2), f(c.pollRttMs.p99, 2)),
        f(c.pollsPerS),
      ]);
    }
  }
  return rows.length ? `### Pre-confirmation cadence\n\n${table(head, rows)}` : '';
}

export function render(r: Results): string {
  const parts = [r.reads.length || r.calibration.length ? readsTables(r) : '', txTables(r), cadenceTable(r)];
  return parts.filter(Boolean).join('\n\n');
}
