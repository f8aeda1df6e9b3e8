// `npm run bench:interval`: what a short interval costs the reads and the replicas: short
// pre-confirmation intervals at production state size and load. A genesis of N accounts and a
// Token with N slots (benches/scaling's generator; --genesis-dir reuses a file written
// earlier) is imported once into a template datadir; then for each (rate, interval) a leader
// (--publish, pinned to --server-core) and a replica following it over a real nats-server
// start on fresh copies of it. 100 senders send transfers to existing accounts at the rate
// (the load generator, pinned to --load-cores with this driver, the replica and nats-server),
// 10 more send eth_sendRawTransactionSync, and:
//
//   phase 1 (--seconds): pre-confirmation gaps on the builder's clock (preconfTimestampMs)
//     and as a WebSocket subscriber sees them, send → pending (the hash stream), Sync
//     latency, replica lag (the same pre-confirmation's arrival from the replica minus from
//     the leader; also split into a block's first 250 ms, which wait for the leader's durable
//     commit of the block before, and the rest), the leader's commit and seal times and the
//     replica's (from /metrics), the builder thread's CPU per pre-confirmation and the
//     busiest threads;
//   phase 2 (--read-rounds of --read-seconds, each after a warm-up second): eth_call
//     balanceOf at "pending" at full speed meanwhile (the transfers go on until the reads
//     end; the row says at what rate they were answered).
//
// --repeat K runs the interval list K times, alternating its order, and compares the reads
// between intervals over the repetitions (reads.ts says why).
//
//   npm run bench:interval -- [--accounts 1000000] [--genesis-dir /work/.bench-genesis]
//     [--intervals 200,50,20,10] [--rates 1000,200] [--block-time-ms 1000] [--seconds 15]
//     [--read-seconds 8] [--read-rounds 1] [--repeat 1] [--server-core 0] [--load-cores 1]
//     [--out FILE.json]

import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeFunctionData, keccak256, parseGwei, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { freePort } from '../../test/helpers/anvil.js';
import { contract } from '../../test/helpers/contracts.js';
import { devAccount } from '../../test/helpers/node.js';
import { startNats, type NatsServer } from '../../test/helpers/nats.js';
import { checkLoadgen, pinLoadgen, runLoad } from '../loadgen.js';
import { parseCpuList, pinSelf, pinnedCommand } from '../pinning.js';
import { accountAt, holderAt, TOKEN, writeGenesis } from '../scaling/genesis.js';
import { ROOT, percentile, rpc, rpcRaw, sleep } from '../util.js';
import { cpuDelta, gaps, histogramMeans, nowMs, threadCpu, watchStreams } from './observe.js';
import { compare, threadTable, type ReadSample } from './reads.js';

const arg = (name: string, dflt: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1]! : dflt;
};
const ACCOUNTS = Number(arg('accounts', '1000000'));
const GENESIS_DIR = arg('genesis-dir', '');
const INTERVALS = arg('intervals', '200,50,20,10').split(',').map(Number);
const RATES = arg('rates', '1000,200').split(',').map(Number);
const BLOCK_MS = Number(arg('block-time-ms', '1000'));
const SECONDS = Number(arg('seconds', '15'));
const READ_SECONDS = Number(arg('read-seconds', '8'));
const READ_ROUNDS = Number(arg('read-rounds', '1'));
const REPEAT = Number(arg('repeat', '1'));
const SERVER = parseCpuList(arg('server-core', '0'));
const LOAD = parseCpuList(arg('load-cores', '1'));
const OUT = arg('out', '');
const SENDERS = 100;
const SYNC_SENDERS = 10;
const SYNC_RATE = 20;
/** Seconds of transfers past phase 1 and the reads (the replica's stop between the phases),
 *  so the load runs until the reads end. */
const LOAD_SLACK_S = 6;
const LOAD_SECONDS = SECONDS + READ_ROUNDS * (READ_SECONDS + 1) + LOAD_SLACK_S;
const log = (m: string): void => void process.stderr.write(`[interval] ${m}\n`);
const fmt = (x: number, d = 1): string => (Number.isFinite(x) ? x.toFixed(d) : '-');

interface Node {
  child: ChildProcess;
  url: string;
  exited: Promise<unknown>;
}

async function start(args: string[], cores: number[], timeoutS: number): Promise<Node> {
  const port = await freePort();
  const [cmd, argv] = pinnedCommand(cores, process.execPath, [join(ROOT, 'bin/preconf-node.cjs'), '--port', String(port), '--quiet', ...args]);
  const child = spawn(cmd, argv, { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr?.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-4000)));
  const exited = new Promise((r) => child.once('exit', r));
  const url = `http://127.0.0.1:${port}`;
  const t0 = performance.now();
  for (;;) {
    if (child.exitCode !== null) throw new Error(`node exited: ${err}`);
    if (performance.now() - t0 > timeoutS * 1000) throw new Error(`node did not answer within ${timeoutS} s: ${err}`);
    try {
      await rpc(url, 'eth_chainId');
      return { child, url, exited };
    } catch {
      await sleep(50);
    }
  }
}

const stop = async (n: Node, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> => {
  n.child.kill(signal);
  await n.exited;
};

const key = (label: string): Hex => keccak256(`0x${Buffer.from(label).toString('hex')}`);

/** Funding for the senders, their transfers (round-robin: body j is sender j % 100's next
 *  nonce, so each connection carries one sender in order), and the Sync probe's. Signed once:
 *  every run starts from the same template, so the same bytes are valid in each. */
async function sign(perSender: number, syncPerSender: number) {
  const t0 = performance.now();
  const keys = Array.from({ length: SENDERS + SYNC_SENDERS }, (_, i) => key(`interval-sender:${i}`));
  const accounts = keys.map((k) => privateKeyToAccount(k));
  const fee = { maxFeePerGas: parseGwei('100'), maxPriorityFeePerGas: 1n, gas: 21_000n, chainId: 31337, type: 'eip1559' } as const;
  const funder = devAccount(1);
  const funding = await Promise.all(accounts.map((a, nonce) => funder.signTransaction({ ...fee, to: a.address, value: 10n ** 18n, nonce })));
  const load: Hex[] = [];
  for (let nonce = 0; nonce < perSender; nonce++) {
    for (let s = 0; s < SENDERS; s++) {
      const to = accountAt(((nonce * SENDERS + s) * 7919) % ACCOUNTS);
      load.push(await accounts[s]!.signTransaction({ ...fee, to, value: 1n, nonce }));
    }
  }
  const sync: Hex[] = [];
  for (let nonce = 0; nonce < syncPerSender; nonce++) {
    for (let s = SENDERS; s < SENDERS + SYNC_SENDERS; s++) {
      sync.push(await accounts[s]!.signTransaction({ ...fee, to: accountAt(nonce * 31 + s), value: 1n, nonce }));
    }
  }
  log(`signed ${funding.length + load.length + sync.length} transactions in ${fmt((performance.now() - t0) / 1000)} s`);
  return { funding, load, sync, lastSender: accounts.at(-1)!.address };
}

type Signed = Awaited<ReturnType<typeof sign>>;

interface Row {
  rate: number;
  intervalMs: number;
  rep: number;
  preconfs: number;
  builderGap: { p50: number; p99: number; max: number };
  wsGap: { p50: number; p99: number; max: number };
  sendToPending: { p50: number; p99: number; count: number };
  stalls: ReturnType<typeof stallSummary>;
  sync: { p50: number; p99: number; count: number; errors: number };
  builderCpuUsPerTick: number;
  threads: [string, number][];
  replicaLag: { p50: number; p99: number; max: number; missed: number };
  /** Replica lag p99 of the pre-confirmations in a block's first 250 ms, and of the rest. */
  replicaLagSplit: { early: number; later: number };
  /** Mean ms over phase 1: the leader's seal and durable commit, the replica's sealed-block apply and commit. */
  times: { leaderSeal: number; leaderCommit: number; replicaSeal: number; replicaCommit: number };
  /** `rps`: the mean of `rounds` (req/s of each); `p99` and `errors` of the last round;
   *  `serverCore`: the leader's CPU during the reads, in cores (below 1: the load side was the limit). */
  reads: { rps: number; rounds: number[]; p99: number; errors: number; serverCore: number; threads: [string, number][] };
  readPhaseBuilderGapP99: number;
  /** Transfers answered per second while the reads were measured, and their latency p50 ms. */
  txDuringReads: { perSecond: number; p50: number };
  sent: number;
  errors: number;
  load: number[];
}

const SEAL = 'preconf_builder_seal_duration_seconds';
const COMMIT = 'preconf_store_commit_duration_seconds';
/** Transfers pending over a second: how many, from how many senders, sent when (s into the
 *  phase), and the longest wait. */
function stallSummary(stalled: { sender: number; nonce: number; sentS: number; waitedMs: number }[]) {
  if (stalled.length === 0) return { count: 0 };
  const senders = new Set(stalled.map((s) => s.sender));
  const sent = stalled.map((s) => s.sentS);
  const nonces = stalled.map((s) => s.nonce);
  return {
    count: stalled.length,
    senders: senders.size,
    sentFromS: Math.min(...sent),
    sentToS: Math.max(...sent),
    nonces: [Math.min(...nonces), Math.max(...nonces)],
    longestMs: Math.max(...stalled.map((s) => s.waitedMs)),
  };
}

const stats = (xs: number[]) => ({ p50: percentile(xs, 50), p99: percentile(xs, 99), max: Math.max(...xs) });

async function run(template: string, nats: NatsServer, signed: Signed, rate: number, intervalMs: number, rep: number): Promise<Row> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-interval-'));
  // A stream per leader: one publishing into an earlier leader's stream would find it ahead.
  const stream = `interval-${rate}-${intervalMs}-${rep}`;
  execFileSync('cp', ['-r', template, join(dir, 'leader')]);
  execFileSync('cp', ['-r', template, join(dir, 'replica')]);
  const chain = ['--preconf-interval-ms', String(intervalMs), '--block-time-ms', String(BLOCK_MS)];
  const leader = await start(['--datadir', join(dir, 'leader'), '--publish', nats.url, '--stream', stream, ...chain], SERVER, 120);
  const replica = await start(['--datadir', join(dir, 'replica'), '--follow', nats.url, '--stream', stream, '--leader', leader.url, ...chain], LOAD, 120);
  try {
    await rpcRaw(leader.url, JSON.stringify(signed.funding.map((raw, id) => ({ jsonrpc: '2.0', id, method: 'eth_sendRawTransaction', params: [raw] }))));
    while (BigInt(await rpc<string>(replica.url, 'eth_getBalance', [signed.lastSender, 'latest'])) === 0n) await sleep(100);
    const [mine, theirs] = await Promise.all([watchStreams(leader.url, true), watchStreams(replica.url, false)]);
    const bodies = signed.load
      .slice(0, rate * LOAD_SECONDS)
      .map((raw) => JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_sendRawTransaction', params: [raw] }));
    const syncBodies = signed.sync
      .slice(0, SYNC_RATE * SECONDS)
      .map((raw) => JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_sendRawTransactionSync', params: [raw] }));
    const cpu0 = threadCpu(leader.child.pid!);
    const metrics0 = await Promise.all([histogramMeans(leader.url), histogramMeans(replica.url)]);
    const t0 = nowMs();
    const load = runLoad({ url: leader.url, bodies, connections: SENDERS, duration: LOAD_SECONDS + 30, rate, once: true, timestamps: true });
    const sync = runLoad({ url: leader.url, bodies: syncBodies, connections: SYNC_SENDERS, duration: SECONDS + 30, rate: SYNC_RATE, once: true });
    await sleep(SECONDS * 1000);
    const t1 = nowMs();
    const cpu1 = threadCpu(leader.child.pid!);
    const metrics1 = await Promise.all([histogramMeans(leader.url), histogramMeans(replica.url)]);
    const token = TOKEN;
    const callBodies = Array.from({ length: 256 }, (_, i) => {
      const data = encodeFunctionData({ abi: contract('Token').abi, functionName: 'balanceOf', args: [holderAt((i * 3989) % ACCOUNTS)] });
      return JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_call', params: [{ to: token, data }, 'pending'] });
    });
    // The replica and its watcher share the load core with the read generator: stopped, so
    // the figure is the leader's (its lag was measured in phase 1).
    theirs.close();
    await stop(replica);
    const readCpu0 = threadCpu(leader.child.pid!);
    const tr = nowMs();
    const rounds: number[] = [];
    let reads!: Awaited<ReturnType<typeof runLoad>>;
    for (let k = 0; k < READ_ROUNDS; k++) {
      reads = await runLoad({ url: leader.url, bodies: callBodies, connections: 8, duration: READ_SECONDS, warmup: 1 });
      rounds.push(reads.rps);
    }
    const t2 = nowMs();
    const readThreads = cpuDelta(readCpu0, threadCpu(leader.child.pid!));
    const readCpu = readThreads.reduce((sum, [, s]) => sum + s, 0);
    // The CPU samples span the warm-up seconds too.
    const readS = (t2 - tr) / 1000;
    const [loaded, synced] = await Promise.all([load, sync]);
    await sleep(500);
    mine.close();
    theirs.close();

    // The transfers the leader answered while the reads were measured (after the warm-up).
    const duringReads = (loaded.timestamps ?? []).filter(([, , done, ok]) => ok && done / 1000 >= tr + 1000 && done / 1000 < t2);
    const txDuringReads = {
      perSecond: duringReads.length / ((t2 - tr - 1000) / 1000),
      p50: percentile(
        duringReads.map(([, sent, done]) => (done - sent) / 1000),
        50,
      ),
    };
    const inPhase = (from: number, to: number) => mine.preconfs.filter((p) => p.arrived >= from && p.arrived < to);
    const phase1 = inPhase(t0, t1);
    const toPending: number[] = [];
    // Transfers pending more than a second: whether one sender's queue or everyone stalled.
    const stalled: { sender: number; nonce: number; sentS: number; waitedMs: number }[] = [];
    // Up to a second before phase 1 ends: at its end this process reads the leader's CPU and
    // metrics and stops the replica, which delayed the announcements it timed by seconds.
    for (const [j, sent, , ok] of loaded.timestamps ?? []) {
      if (!ok || sent / 1000 >= t1 - 1000) continue;
      const at = mine.pendingAt.get(keccak256(signed.load[j]!));
      if (at === undefined) continue;
      toPending.push(at - sent / 1000);
      if (at - sent / 1000 > 1000)
        stalled.push({ sender: j % SENDERS, nonce: Math.floor(j / SENDERS), sentS: (sent / 1000 - t0) / 1000, waitedMs: at - sent / 1000 });
    }
    const replicaAt = new Map(theirs.preconfs.map((p) => [p.key, p.arrived]));
    const lag: number[] = [];
    const early: number[] = [];
    const later: number[] = [];
    let missed = 0;
    for (const p of phase1) {
      const there = replicaAt.get(p.key);
      if (there === undefined) missed++;
      else {
        lag.push(there - p.arrived);
        (Number(p.key.split('.')[1]) * intervalMs < 250 ? early : later).push(there - p.arrived);
      }
    }
    const mean = (i: 0 | 1, name: string) => {
      const [a, b] = [metrics0[i].get(name), metrics1[i].get(name)];
      return a && b && b.count > a.count ? ((b.sum - a.sum) / (b.count - a.count)) * 1000 : Number.NaN;
    };
    const busiest = cpuDelta(cpu0, cpu1);
    const builder = busiest.find(([n]) => n === 'preconf-builder')?.[1] ?? Number.NaN;
    return {
      rate,
      intervalMs,
      rep,
      preconfs: phase1.length,
      builderGap: stats(gaps(phase1.map((p) => p.stamped))),
      wsGap: stats(gaps(phase1.map((p) => p.arrived))),
      sendToPending: { p50: percentile(toPending, 50), p99: percentile(toPending, 99), count: toPending.length },
      stalls: stallSummary(stalled),
      sync: { p50: synced.latency_us.p50 / 1000, p99: synced.latency_us.p99 / 1000, count: synced.ok, errors: synced.errors },
      builderCpuUsPerTick: (builder * 1e6) / Math.max(1, phase1.length),
      threads: busiest.slice(0, 5).map(([n, s]) => [n, Math.round((s / SECONDS) * 1000) / 10]),
      replicaLag: { ...stats(lag), missed },
      replicaLagSplit: { early: percentile(early, 99), later: percentile(later, 99) },
      times: {
        leaderSeal: mean(0, SEAL),
        leaderCommit: mean(0, COMMIT),
        replicaSeal: mean(1, SEAL),
        replicaCommit: mean(1, COMMIT),
      },
      reads: {
        rps: rounds.reduce((a, b) => a + b, 0) / rounds.length,
        rounds,
        p99: reads.latency_us.p99 / 1000,
        errors: reads.errors,
        serverCore: readCpu / readS,
        threads: readThreads.slice(0, 20).map(([n, c]) => [n, Math.round((c / readS) * 1000) / 10]),
      },
      txDuringReads,
      readPhaseBuilderGapP99: percentile(gaps(inPhase(t1, t2).map((p) => p.stamped)), 99),
      sent: loaded.ok,
      errors: loaded.errors,
      load: loadavg().map((x) => Math.round(x * 100) / 100),
    };
  } finally {
    await Promise.all([stop(leader), stop(replica)]);
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  checkLoadgen();
  pinSelf(LOAD);
  pinLoadgen(LOAD);
  const work = mkdtempSync(join(tmpdir(), 'bench-interval-template-'));
  const reused = GENESIS_DIR ? join(GENESIS_DIR, `genesis-${ACCOUNTS}.json`) : '';
  const genesis = reused && existsSync(reused) ? reused : join(work, 'genesis.json');
  if (genesis !== reused) await writeGenesis(genesis, ACCOUNTS);
  const template = join(work, 'datadir');
  const t0 = performance.now();
  const importer = await start(['--datadir', template, '--genesis', genesis], SERVER, 900);
  await stop(importer, 'SIGTERM');
  log(`genesis of ${ACCOUNTS} accounts + ${ACCOUNTS} slots imported in ${fmt((performance.now() - t0) / 1000)} s`);
  const perSender = Math.ceil((Math.max(...RATES) * LOAD_SECONDS) / SENDERS);
  const signed = await sign(perSender, Math.ceil((SYNC_RATE * SECONDS) / SYNC_SENDERS));
  const nats = await startNats();
  const rows: Row[] = [];
  try {
    for (let rep = 0; rep < REPEAT; rep++) {
      for (const rate of RATES) {
        // Alternating the order evens out a drift of the machine over the run.
        for (const interval of rep % 2 ? [...INTERVALS].reverse() : INTERVALS) {
          log(`${rate} tx/s, ${interval} ms pre-confirmations${REPEAT > 1 ? ` (repetition ${rep + 1} of ${REPEAT})` : ''}`);
          rows.push(await run(template, nats, signed, rate, interval, rep));
          log(JSON.stringify(rows.at(-1)));
        }
      }
    }
  } finally {
    await nats.cleanup();
    rmSync(work, { recursive: true, force: true });
  }
  console.log(
    `\n${ACCOUNTS} accounts + ${ACCOUNTS} slots, ${BLOCK_MS} ms blocks, ${SECONDS} s per phase 1, node on core ${SERVER.join(',')}, load on ${LOAD.join(',')}\n`,
  );
  console.log(
    '| tx/s | interval ms | builder gap p50 / p99 / max ms | WS gap p99 / max ms | send → pending p50 / p99 ms | Sync p50 / p99 ms | builder CPU µs/tick | replica lag p50 / p99 ms (missed) | replica lag p99 first 250 ms / rest | leader seal / commit ms | replica seal / commit ms | eth_call pending req/s (leader core used) | transfers answered during the reads /s | gap p99 during reads ms | busiest threads (% of a core) | load avg |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|');
  for (const r of rows) {
    const threads = r.threads.map(([n, p]) => `${n} ${p}`).join(', ');
    console.log(
      `| ${r.rate} | ${r.intervalMs} | ${fmt(r.builderGap.p50, 0)} / ${fmt(r.builderGap.p99, 0)} / ${fmt(r.builderGap.max, 0)} | ${fmt(r.wsGap.p99)} / ${fmt(r.wsGap.max)} | ${fmt(r.sendToPending.p50)} / ${fmt(r.sendToPending.p99)} | ${fmt(r.sync.p50)} / ${fmt(r.sync.p99)} | ${fmt(r.builderCpuUsPerTick, 0)} | ${fmt(r.replicaLag.p50)} / ${fmt(r.replicaLag.p99)} (${r.replicaLag.missed}) | ${fmt(r.replicaLagSplit.early)} / ${fmt(r.replicaLagSplit.later)} | ${fmt(r.times.leaderSeal)} / ${fmt(r.times.leaderCommit)} | ${fmt(r.times.replicaSeal)} / ${fmt(r.times.replicaCommit)} | ${Math.round(r.reads.rps)} (${fmt(r.reads.serverCore * 100, 0)} %) | ${fmt(r.txDuringReads.perSecond, 0)} | ${fmt(r.readPhaseBuilderGapP99, 0)} | ${threads} | ${r.load.join(' ')} |`,
    );
  }
  if (REPEAT > 1) for (const rate of RATES) printComparison(rows.filter((r) => r.rate === rate));
  if (OUT) writeFileSync(OUT, JSON.stringify(rows, null, 2));
}

/** eth_call pending at each interval against the first, and where the leader's core went. */
function printComparison(rows: Row[]): void {
  const samples: ReadSample[] = rows.map((r) => ({ intervalMs: r.intervalMs, rep: r.rep, rounds: r.reads.rounds, threads: r.reads.threads }));
  const pct = (x: number): string => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)} %`;
  console.log(`\neth_call pending at ${rows[0]!.rate} tx/s, ${REPEAT} repetitions of ${READ_ROUNDS} × ${READ_SECONDS} s per leader:\n`);
  console.log('| interval ms | vs ms | pairs | req/s | vs req/s | change (95 % interval) | single pairs |');
  console.log('|---|---|---|---|---|---|---|');
  for (const c of compare(samples, INTERVALS[0]!)) {
    console.log(
      `| ${c.intervalMs} | ${c.baseMs} | ${c.pairs} | ${Math.round(c.rps)} | ${Math.round(c.baseRps)} | ${pct(c.change)} (${pct(c.low)} to ${pct(c.high)}) | ${pct(c.min)} to ${pct(c.max)} |`,
    );
  }
  console.log(`\n| leader thread, % of its core during the reads | ${INTERVALS.map((i) => `${i} ms`).join(' | ')} |`);
  console.log(`|---|${INTERVALS.map(() => '---').join('|')}|`);
  for (const [name, cols] of threadTable(samples, INTERVALS)) console.log(`| ${name} | ${cols.map((c) => c.toFixed(1)).join(' | ')} |`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
