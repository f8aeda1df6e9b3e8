// Flags of `npm run bench -- ...`.

import { parseArgs } from 'node:util';
import { parseCpuList } from './pinning.js';

export const SCENARIO_GROUPS = ['calibrate', 'reads', 'tx', 'cadence'] as const;
export type Group = (typeof SCENARIO_GROUPS)[number];

export interface Options {
  duration: number; // measured seconds per scenario per target
  warmup: number; // seconds of load before measuring
  connections: number;
  pipeline: number;
  only: Set<Group>;
  url: string | null; // bench only this target
  pid: number | null; // its server process, for RSS and CPU
  nodeArgs: string[]; // extra flags for our node (and every baseline)
  thisNodeArgs: string[]; // extra flags for this checkout's node only
  baselines: string[]; // other checkouts of the node to bench alongside (before/after)
  anvil: boolean; // bench anvil too
  floor: boolean; // bench the floor (benches/floor-server.ts) in the read scenarios
  serverCore: number; // the core every server under test is pinned to
  loadCores: number[]; // the cores of the load generator and this driver
  txCount: number; // transactions in the flood
  txRate: number; // transactions per second in the paced phase
  pollMs: number; // receipt polling period
  watchMs: number; // pending-block polling period for the cadence side channel
  longS: number; // seconds of the cadence and paced-transfer phases
  rounds: number; // paced-phase rounds, alternating the targets' order
  out: string | null; // raw results as JSON
  build: boolean;
}

export const USAGE = `npm run bench -- [flags]

Benchmarks this node, any --baseline checkouts of it and anvil side by side (all started on
free loopback ports, scenario by scenario in turn), or only the server at --url. Every server
is pinned to --server-core and the load generator and this driver to --load-cores with
taskset (util-linux); without taskset the run fails. Prints Markdown tables.

  --duration S        measured seconds per scenario per target (default 5)
  --warmup S          seconds of load before each measurement (default 1)
  --connections N     load generator connections (default 8)
  --pipeline D        requests in flight per connection (default 1)
  --only LIST         comma-separated groups: ${SCENARIO_GROUPS.join(',')} (default all)
  --url URL           bench only this JSON-RPC server (no node or anvil is started)
  --pid PID           with --url: the server's process id, for RSS and CPU figures
  --node-args "..."   extra flags for our node and every baseline (e.g. "--preconf-interval-ms 100")
  --this-node-args "..."  extra flags for this checkout's node only (a flag a baseline lacks,
                      e.g. "--preconf-receipts" to compare with an older node whose receipts
                      come at the pre-confirmation)
  --baseline DIR|REF  also bench the node of another checkout DIR (holding bin/preconf-node.cjs,
                      dist/ and native/*.node, built), or of the commit REF (checked out in a
                      worktree under BENCH_WORKTREES, default /tmp/preconf-baselines, and built
                      there once), named "baseline (<commit>)"; repeatable or a comma-separated
                      list. Tables show this node ÷ each other target.
  --no-anvil          do not start anvil
  --no-floor          leave out the floor: a bare uWebSockets.js app that parses each body and
                      answers a fixed result (benches/floor-server.ts), benched in the read scenarios
  --server-core N     the core every server under test runs on (default 0)
  --load-cores LIST   the cores of the load generator and this driver, e.g. 1 or 1-3 (default 1)
  --tx-count N        pre-signed transfers in the flood (default 4000)
  --tx-rate R         transfers per second in the paced phase (default 200)
  --poll-ms MS        receipt polling period (default 10)
  --watch-ms MS       pending-block polling period for the cadence measurement (default 2)
  --long-s S          seconds of the cadence observations and of the paced-transfer phase (default 10)
  --rounds N          paced-transfer rounds (default 1); above 1 the targets alternate order each
                      round and the paced figures are per-figure medians over the rounds
  --out FILE          also write the raw results as JSON
  --no-build          do not run cargo build --release -p loadgen first
`;

export function parseOptions(argv: string[]): Options | null {
  const { values } = parseArgs({
    args: argv,
    options: {
      duration: { type: 'string', default: '5' },
      warmup: { type: 'string', default: '1' },
      connections: { type: 'string', default: '8' },
      pipeline: { type: 'string', default: '1' },
      only: { type: 'string', default: SCENARIO_GROUPS.join(',') },
      url: { type: 'string' },
      pid: { type: 'string' },
      'node-args': { type: 'string', default: '' },
      'this-node-args': { type: 'string', default: '' },
      baseline: { type: 'string', multiple: true, default: [] },
      'no-anvil': { type: 'boolean', default: false },
      'no-floor': { type: 'boolean', default: false },
      'server-core': { type: 'string', default: '0' },
      'load-cores': { type: 'string', default: '1' },
      'tx-count': { type: 'string', default: '4000' },
      'tx-rate': { type: 'string', default: '200' },
      rounds: { type: 'string', default: '1' },
      'poll-ms': { type: 'string', default: '10' },
      'watch-ms': { type: 'string', default: '2' },
      'long-s': { type: 'string', default: '10' },
      out: { type: 'string' },
      'no-build': { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) return null;
  const num = (name: string, v: string, min: number): number => {
    const n = Number(v);
    if (!Number.isFinite(n) || n < min) throw new Error(`--${name} must be a number >= ${min}, got "${v}"`);
    return n;
  };
  const only = new Set<Group>();
  for (const g of values.only.split(',').filter(Boolean)) {
    if (!(SCENARIO_GROUPS as readonly string[]).includes(g)) throw new Error(`--only: unknown group "${g}"`);
    only.add(g as Group);
  }
  const baselines = values.baseline
    .flatMap((b) => b.split(','))
    .map((b) => b.trim())
    .filter(Boolean);
  if (values.url && (baselines.length > 0 || values['no-anvil'])) {
    throw new Error('--url benches only that server: --baseline and --no-anvil do not apply');
  }
  return {
    duration: num('duration', values.duration, 0.5),
    warmup: num('warmup', values.warmup, 0),
    connections: Math.floor(num('connections', values.connections, 1)),
    pipeline: Math.floor(num('pipeline', values.pipeline, 1)),
    only,
    url: values.url ?? null,
    pid: values.pid === undefined ? null : Math.floor(num('pid', values.pid, 1)),
    nodeArgs: values['node-args'].split(/\s+/).filter(Boolean),
    thisNodeArgs: values['this-node-args'].split(/\s+/).filter(Boolean),
    baselines,
    anvil: !values['no-anvil'],
    floor: !values['no-floor'],
    serverCore: Math.floor(num('server-core', values['server-core'], 0)),
    loadCores: parseCpuList(values['load-cores']),
    txCount: Math.floor(num('tx-count', values['tx-count'], 8)),
    txRate: num('tx-rate', values['tx-rate'], 1),
    pollMs: num('poll-ms', values['poll-ms'], 1),
    watchMs: num('watch-ms', values['watch-ms'], 0.1),
    longS: num('long-s', values['long-s'], 1),
    rounds: Math.floor(num('rounds', values.rounds, 1)),
    out: values.out ?? null,
    build: !values['no-build'],
  };
}
