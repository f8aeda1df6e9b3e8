// Read replicas (how far behind a replica reads, and what reads scale to): one leader
// (--publish) and two replicas (--follow) on one real nats-server, all on this machine.
//
// 1. lag: newFlashblocks subscribers on all three nodes while transactions flow; for each
//    pre-confirmation, when it reached this process from a replica minus when it reached it
//    from the leader (the same WebSocket path on both ends, so the difference is replication:
//    encode, JetStream publish and delivery, apply, render). Also against the leader's own
//    `preconfTimestampMs` (when the builder made it visible).
// 2. cadence: the leader's pre-confirmation intervals (loadgen watch mode, benches/cadence.ts)
//    while it publishes, next to a leader that does not publish, under the same flow.
// 3. reads: the same read load against the leader alone, then spread over the three nodes.
// 4. catch-up: a fresh replica of a leader 1,000 blocks ahead: blocks/s until it has them.
//
//   npm run bench:replicas -- [--duration 20] [--tx-rate 50] [--read-seconds 8]
//                             [--connections 24] [--catchup-blocks 1000] [--only lag,reads,catchup]

import WebSocket from 'ws';
import { parseGwei, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEV_KEYS } from '../test/helpers/node.js';
import { startNats, type NatsServer } from '../test/helpers/nats.js';
import { spawnNode, type NodeProcess } from '../test/helpers/process.js';
import { analyze, watchPending } from './cadence.js';
import { deployToken, holders } from './fixtures.js';
import { checkLoadgen, runLoad } from './loadgen.js';
import { readScenarios } from './reads.js';
import { percentile, rpc, rpcRaw, sleep } from './util.js';

interface Options {
  durationS: number;
  txRate: number;
  readSeconds: number;
  connections: number;
  catchupBlocks: number;
  only: Set<string>;
}

function options(argv: string[]): Options {
  const o: Options = { durationS: 20, txRate: 50, readSeconds: 8, connections: 24, catchupBlocks: 1000, only: new Set(['lag', 'reads', 'catchup']) };
  for (let i = 0; i < argv.length; i += 2) {
    const [flag, v] = [argv[i], argv[i + 1] ?? ''];
    if (flag === '--duration') o.durationS = Number(v);
    else if (flag === '--tx-rate') o.txRate = Number(v);
    else if (flag === '--read-seconds') o.readSeconds = Number(v);
    else if (flag === '--connections') o.connections = Number(v);
    else if (flag === '--catchup-blocks') o.catchupBlocks = Number(v);
    else if (flag === '--only') o.only = new Set(v.split(','));
    else throw new Error(`unknown flag ${flag}`);
  }
  return o;
}

const fmt = (x: number, d = 1): string => (Number.isFinite(x) ? x.toFixed(d) : '-');
const stats = (xs: number[]): string => `${fmt(percentile(xs, 50))} | ${fmt(percentile(xs, 99))} | ${fmt(Math.max(...xs))}`;

/** A leader and `replicas` replicas on `nats`, each in a temporary datadir. */
class Nodes {
  readonly dir = mkdtempSync(join(tmpdir(), 'bench-replicas-'));
  leader!: NodeProcess;
  replicas: NodeProcess[] = [];

  constructor(
    readonly nats: NatsServer,
    readonly chainArgs: string[],
    readonly stream: string,
  ) {}

  async start(replicas: number, publish = true): Promise<this> {
    const pub = publish ? ['--publish', this.nats.url, '--stream', this.stream] : [];
    this.leader = await spawnNode(['--datadir', join(this.dir, 'leader'), ...pub, ...this.chainArgs]);
    for (let i = 0; i < replicas; i++) await this.addReplica();
    return this;
  }

  async addReplica(): Promise<NodeProcess> {
    const dir = join(this.dir, `replica-${this.replicas.length}`);
    const r = await spawnNode(['--datadir', dir, '--follow', this.nats.url, '--stream', this.stream, '--leader', this.leader.url, ...this.chainArgs]);
    this.replicas.push(r);
    return r;
  }

  async stop(): Promise<void> {
    await Promise.all([...this.replicas, this.leader].map((n) => n?.kill('SIGKILL')));
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Signed transfers from dev account `from`, nonces 0.. (one sender per flow keeps order). */
async function transfers(from: number, count: number): Promise<Hex[]> {
  const acct = privateKeyToAccount(DEV_KEYS[from]!);
  const out: Hex[] = [];
  for (let nonce = 0; nonce < count; nonce++) {
    out.push(
      await acct.signTransaction({
        chainId: 31337,
        type: 'eip1559',
        to: acct.address,
        value: 1n,
        gas: 21_000n,
        maxFeePerGas: parseGwei('50'),
        maxPriorityFeePerGas: 1n,
        nonce,
      }),
    );
  }
  return out;
}

/** Sends `raws` at `rate` per second until `stop` says so. */
async function flow(url: string, raws: Hex[], rate: number, stop: () => boolean): Promise<number> {
  const t0 = performance.now();
  let sent = 0;
  while (!stop() && sent < raws.length) {
    const due = Math.min(raws.length, Math.floor(((performance.now() - t0) / 1000) * rate));
    const batch = [];
    for (; sent < due; sent++) batch.push({ jsonrpc: '2.0', id: sent, method: 'eth_sendRawTransaction', params: [raws[sent]] });
    if (batch.length > 0) await rpcRaw(url, JSON.stringify(batch));
    await sleep(10);
  }
  return sent;
}

/** Arrival times (ms, this process's clock) of each pre-confirmation at one node. */
async function arrivals(url: string): Promise<{ socket: WebSocket; at: Map<string, number>; stamped: Map<string, number> }> {
  const socket = new WebSocket(url.replace('http', 'ws'));
  const at = new Map<string, number>();
  const stamped = new Map<string, number>();
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.once('open', () => socket.send('{"jsonrpc":"2.0","id":1,"method":"eth_subscribe","params":["newFlashblocks"]}'));
    socket.on('message', (data) => {
      const now = performance.timeOrigin + performance.now();
      const msg = JSON.parse(data.toString()) as { id?: number; params?: { result: { number: string; preconfIndex: string; preconfTimestampMs: number } } };
      if (msg.id === 1) return resolve();
      const b = msg.params?.result;
      if (!b) return;
      const key = `${Number(b.number)}.${Number(b.preconfIndex)}`;
      at.set(key, now);
      stamped.set(key, b.preconfTimestampMs);
    });
  });
  return { socket, at, stamped };
}

async function lagAndCadence(nats: NatsServer, o: Options): Promise<void> {
  const raws = await transfers(8, Math.ceil(o.txRate * o.durationS) + 50);
  const baseRaws = await transfers(9, Math.ceil(o.txRate * o.durationS) + 50);
  console.log(`\n## Replica lag and leader cadence: ${o.txRate} tx/s for ${o.durationS} s, defaults (200 ms pre-confirmations, 2 s blocks)\n`);

  // A leader that does not publish: the cadence to compare with.
  const alone = await new Nodes(nats, [], 'unused').start(0, false);
  let done = false;
  const baseFlow = flow(alone.leader.url, baseRaws, o.txRate, () => done);
  const baseCadence = analyze(await watchPending(alone.leader.url, o.durationS, 5), o.durationS);
  done = true;
  await baseFlow;
  await alone.stop();

  const nodes = await new Nodes(nats, [], 'bench').start(2);
  try {
    const watchers = await Promise.all([nodes.leader, ...nodes.replicas].map((n) => arrivals(n.url)));
    done = false;
    const sending = flow(nodes.leader.url, raws, o.txRate, () => done);
    const cadence = analyze(await watchPending(nodes.leader.url, o.durationS, 5), o.durationS);
    done = true;
    const sent = await sending;
    await sleep(500);
    watchers.forEach((w) => w.socket.terminate());
    const [leader, ...replicas] = watchers;
    console.log(
      '| node | pre-confirmations | lag behind the leader p50 ms | p99 ms | max ms | since the builder published p50 ms | p99 ms | max ms | missed |',
    );
    console.log('|---|---|---|---|---|---|---|---|---|');
    const own = [...leader!.at].map(([k, t]) => t - leader!.stamped.get(k)!);
    console.log(`| leader | ${leader!.at.size} | - | - | - | ${stats(own)} | - |`);
    replicas.forEach((r, i) => {
      const lag: number[] = [];
      const since: number[] = [];
      let missed = 0;
      for (const [key, t] of leader!.at) {
        const there = r.at.get(key);
        if (there === undefined) {
          missed++;
          continue;
        }
        lag.push(there - t);
        since.push(there - r.stamped.get(key)!);
      }
      console.log(`| replica ${i + 1} | ${r.at.size} | ${stats(lag)} | ${stats(since)} | ${missed} |`);
    });
    console.log(`\n${sent} transactions sent.\n`);
    console.log('| leader | pre-confirmations | interval p50 ms | p99 ms | max ms | skipped |');
    console.log('|---|---|---|---|---|---|');
    for (const [name, c] of [
      ['not publishing', baseCadence],
      ['publishing, 2 replicas following', cadence],
    ] as const) {
      console.log(`| ${name} | ${c.preconfs} | ${fmt(c.intervalMs.p50)} | ${fmt(c.intervalMs.p99)} | ${fmt(c.intervalMs.max)} | ${c.skipped} |`);
    }
  } finally {
    await nodes.stop();
  }
}

async function reads(nats: NatsServer, o: Options): Promise<void> {
  const nodes = await new Nodes(nats, [], 'reads').start(2);
  try {
    const token = await deployToken(nodes.leader.url);
    const top = Number(await rpc<string>(nodes.leader.url, 'eth_blockNumber'));
    for (const r of nodes.replicas) {
      while (Number(await rpc<string>(r.url, 'eth_blockNumber')) < top) await sleep(50);
    }
    const scenarios = readScenarios({ token, holders: holders() }).filter((s) => ['eth_getBalance', 'eth_call balanceOf', 'batch 100 mixed'].includes(s.name));
    console.log(`\n## Reads: one node vs three, ${o.connections} connections in all, ${o.readSeconds} s each\n`);
    console.log('On one 2-core machine the three nodes, nats-server and the load generator share the same two cores.\n');
    console.log('| scenario | leader alone req/s | p99 ms | leader + 2 replicas req/s | p99 ms (worst node) | ratio |');
    console.log('|---|---|---|---|---|---|');
    for (const s of scenarios) {
      const one = await runLoad({ url: nodes.leader.url, bodies: s.bodies, connections: o.connections, duration: o.readSeconds, warmup: 1 });
      const urls = [nodes.leader.url, ...nodes.replicas.map((r) => r.url)];
      const three = await Promise.all(
        urls.map((url) => runLoad({ url, bodies: s.bodies, connections: Math.max(1, Math.round(o.connections / 3)), duration: o.readSeconds, warmup: 1 })),
      );
      const rps = three.reduce((a, r) => a + r.rps, 0);
      const p99 = Math.max(...three.map((r) => r.latency_us.p99 / 1000));
      const errors = one.errors + three.reduce((a, r) => a + r.errors, 0);
      console.log(
        `| ${s.name} | ${Math.round(one.rps)} | ${fmt(one.latency_us.p99 / 1000, 2)} | ${Math.round(rps)} | ${fmt(p99, 2)} | ${fmt(rps / one.rps, 2)} |${errors ? ` (${errors} errors)` : ''}`,
      );
    }
  } finally {
    await nodes.stop();
  }
}

async function catchUp(nats: NatsServer, o: Options): Promise<void> {
  const chainArgs = ['--preconf-interval-ms', '10', '--block-time-ms', '20'];
  const nodes = await new Nodes(nats, chainArgs, 'catchup').start(0);
  try {
    let done = false;
    const raws = await transfers(7, Math.ceil((o.catchupBlocks / 40) * 100)); // ~100 tx/s for as long as it takes
    const sending = flow(nodes.leader.url, raws, 100, () => done);
    while (Number(await rpc<string>(nodes.leader.url, 'eth_blockNumber')) < o.catchupBlocks) await sleep(200);
    done = true;
    await sending;
    const target = Number(await rpc<string>(nodes.leader.url, 'eth_blockNumber'));
    const t0 = performance.now();
    const replica = await nodes.addReplica();
    const listening = performance.now();
    while (Number(await rpc<string>(replica.url, 'eth_blockNumber')) < target) await sleep(20);
    const t1 = performance.now();
    const txs = Number(await rpc<string>(nodes.leader.url, 'eth_getTransactionCount', [privateKeyToAccount(DEV_KEYS[7]!).address, 'latest']));
    console.log(`\n## Catch-up: a fresh replica of a leader ${target} blocks ahead (20 ms blocks, 10 ms pre-confirmations, ${txs} transfers in them)\n`);
    console.log('| from | seconds | blocks/s |');
    console.log('|---|---|---|');
    console.log(`| process start | ${fmt((t1 - t0) / 1000, 2)} | ${Math.round(target / ((t1 - t0) / 1000))} |`);
    console.log(`| listening (stream read and applied) | ${fmt((t1 - listening) / 1000, 2)} | ${Math.round(target / ((t1 - listening) / 1000))} |`);
  } finally {
    await nodes.stop();
  }
}

async function main(): Promise<void> {
  const o = options(process.argv.slice(2));
  checkLoadgen();
  const nats = await startNats();
  try {
    if (o.only.has('lag')) await lagAndCadence(nats, o);
    if (o.only.has('reads')) await reads(nats, o);
    if (o.only.has('catchup')) await catchUp(nats, o);
  } finally {
    await nats.cleanup();
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
