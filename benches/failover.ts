// Leader failover (how long writes and pre-confirmations stop when the leader dies): three
// nodes (--cluster) on a three-server NATS cluster (stream and lease bucket R3), all on this
// machine: the nodes on core 0, the NATS servers and this process on core 1 (taskset).
//
// 1. takeover: under a steady flow of transfers sent to every node, kill -9 the leader, and
//    time from the kill to the first pre-confirmation a surviving node streams that the new
//    leader made (newFlashblocks, preconfTimestampMs after the kill); the killed node is
//    restarted before the next round. Per lease duration (--leases).
// 2. steady: the same cluster without faults for --steady seconds per lease: leader changes
//    that happened anyway (a lease too short for the machine shows here).
// 3. cadence and send -> pending: the leader's pre-confirmation intervals (newFlashblocks
//    timestamps) and eth_sendRawTransactionSync round trips (send -> pre-confirmed receipt),
//    cluster leader vs one node without --cluster, same flow.
//
//   npm run bench:failover -- [--kills 10] [--leases 2000,1000,500] [--steady 30] [--rate 50] [--sync-seconds 20]

import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { parseGwei, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { DEV_KEYS } from '../test/helpers/node.js';
import { ClusterNodes } from '../test/helpers/cluster-nodes.js';
import { spawnNode, type NodeProcess } from '../test/helpers/process.js';
import { percentile, rpc, sleep } from './util.js';

interface Options {
  kills: number;
  leases: number[];
  steadyS: number;
  rate: number;
  syncS: number;
}

function options(argv: string[]): Options {
  const o: Options = { kills: 10, leases: [2000, 1000, 500], steadyS: 30, rate: 50, syncS: 20 };
  for (let i = 0; i < argv.length; i += 2) {
    const [flag, v] = [argv[i], argv[i + 1] ?? ''];
    if (flag === '--kills') o.kills = Number(v);
    else if (flag === '--leases') o.leases = v.split(',').map(Number);
    else if (flag === '--steady') o.steadyS = Number(v);
    else if (flag === '--rate') o.rate = Number(v);
    else if (flag === '--sync-seconds') o.syncS = Number(v);
    else throw new Error(`unknown flag ${flag}`);
  }
  return o;
}

const fmt = (x: number, d = 0): string => (Number.isFinite(x) ? x.toFixed(d) : '-');
const pin = (pid: number | undefined, core: number): void => {
  if (pid !== undefined) execFileSync('taskset', ['-a', '-p', '-c', String(core), String(pid)], { stdio: 'ignore' });
};

/** Pre-confirmations streamed by one node: (block, index, builder's timestamp, arrival). */
function stream(url: string): { socket: WebSocket; seen: { n: number; i: number; stamp: number; at: number }[] } {
  const socket = new WebSocket(url.replace('http', 'ws'));
  const seen: { n: number; i: number; stamp: number; at: number }[] = [];
  socket.on('open', () => socket.send('{"jsonrpc":"2.0","id":1,"method":"eth_subscribe","params":["newFlashblocks"]}'));
  socket.on('error', () => undefined);
  socket.on('message', (data) => {
    const b = (JSON.parse(data.toString()) as { params?: { result: { number: string; preconfIndex: string; preconfTimestampMs: number } } }).params?.result;
    if (b) seen.push({ n: Number(b.number), i: Number(b.preconfIndex), stamp: b.preconfTimestampMs, at: Date.now() });
  });
  return { socket, seen };
}

/** Transfers at `rate` per second from a few accounts, each to a node `pick` chooses. */
function flow(pick: () => string | undefined, rate: number, accounts: number[]): { stop(): Promise<void> } {
  let running = true;
  const run = async (index: number): Promise<void> => {
    const acct = privateKeyToAccount(DEV_KEYS[index]!);
    let nonce: number | null = null;
    while (running) {
      const url = pick();
      try {
        if (url === undefined) throw new Error('no node');
        nonce ??= Number(await rpc<string>(url, 'eth_getTransactionCount', [acct.address, 'pending']));
        const raw = await acct.signTransaction({
          chainId: 31337,
          type: 'eip1559',
          to: acct.address,
          value: 1n,
          gas: 21_000n,
          maxFeePerGas: parseGwei('50'),
          maxPriorityFeePerGas: 1n,
          nonce,
        });
        await rpc(url, 'eth_sendRawTransaction', [raw]);
        nonce++;
      } catch {
        nonce = null;
      }
      await sleep((1000 * accounts.length) / rate);
    }
  };
  const done = Promise.all(accounts.map(run));
  return {
    stop: async () => {
      running = false;
      await done;
    },
  };
}

async function takeovers(o: Options, leaseMs: number): Promise<void> {
  const c = await ClusterNodes.start({ nodes: 3, leaseMs, args: ['--ephemeral'] });
  try {
    for (const s of c.nats.servers) pin(s.pid, 1);
    for (const i of c.running()) pin(c.node(i).child.pid, 0);
    await c.leader(30_000);
    const load = flow(() => c.running().map((i) => c.url(i))[Math.floor(Math.random() * c.running().length)], o.rate, [0, 1, 2, 3, 4]);
    const gaps: number[] = [];
    const elections = async (): Promise<number> => {
      const all = await Promise.all(c.running().map(async (i) => (await fetch(`${c.url(i)}/health`).then((r) => r.json())).term as number));
      return Math.max(...all);
    };
    const termBefore = await elections();
    await sleep(o.steadyS * 1000);
    const spurious = (await elections()) - termBefore;
    for (let k = 0; k < o.kills; k++) {
      const old = await c.leader(30_000);
      const survivors = c.running().filter((i) => i !== old);
      const watching = survivors.map((i) => stream(c.url(i)));
      await sleep(500);
      const killedAt = Date.now();
      await c.node(old).kill('SIGKILL');
      const t0 = performance.now();
      let gap = Number.NaN;
      while (performance.now() - t0 < 30_000) {
        const first = watching
          .flatMap((w) => w.seen)
          .filter((s) => s.stamp > killedAt)
          .sort((a, b) => a.at - b.at)[0];
        if (first) {
          gap = first.at - killedAt;
          break;
        }
        await sleep(5);
      }
      gaps.push(gap);
      watching.forEach((w) => w.socket.terminate());
      await c.start(old);
      pin(c.node(old).child.pid, 0);
      await c.leader(30_000);
      await sleep(1000);
    }
    await load.stop();
    console.log(
      `| ${leaseMs} | ${o.kills} | ${fmt(percentile(gaps, 50))} | ${fmt(percentile(gaps, 99))} | ${fmt(Math.max(...gaps))} | ${spurious} in ${o.steadyS} s |`,
    );
  } finally {
    await c.stop();
  }
}

/** The leader's pre-confirmation intervals and send -> pre-confirmed round trips. */
async function cadenceAndSync(url: string, o: Options): Promise<{ intervals: number[]; sync: number[] }> {
  const watch = stream(url);
  const sync: number[] = [];
  let running = true;
  const senders = [5, 6, 7, 8, 9].map(async (index) => {
    const acct = privateKeyToAccount(DEV_KEYS[index]!);
    let nonce = Number(await rpc<string>(url, 'eth_getTransactionCount', [acct.address, 'pending']));
    while (running) {
      const raw: Hex = await acct.signTransaction({
        chainId: 31337,
        type: 'eip1559',
        to: acct.address,
        value: 1n,
        gas: 21_000n,
        maxFeePerGas: parseGwei('50'),
        maxPriorityFeePerGas: 1n,
        nonce,
      });
      const t0 = performance.now();
      try {
        await rpc(url, 'eth_sendRawTransactionSync', [raw]);
        sync.push(performance.now() - t0);
        nonce++;
      } catch {
        nonce = Number(await rpc<string>(url, 'eth_getTransactionCount', [acct.address, 'pending']));
      }
      await sleep((1000 * 5) / o.rate);
    }
  });
  await sleep(o.syncS * 1000);
  running = false;
  await Promise.all(senders);
  watch.socket.terminate();
  const s = watch.seen;
  const intervals = s.slice(1).flatMap((x, k) => (x.n === s[k]!.n && x.i === s[k]!.i + 1 ? [x.stamp - s[k]!.stamp] : []));
  return { intervals, sync: sync.slice(5) };
}

async function compare(o: Options): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-failover-'));
  let alone: NodeProcess | undefined;
  const rows: [string, { intervals: number[]; sync: number[] }][] = [];
  try {
    alone = await spawnNode(['--ephemeral']);
    pin(alone.child.pid, 0);
    rows.push(['one node, no cluster', await cadenceAndSync(alone.url, o)]);
  } finally {
    await alone?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
  const c = await ClusterNodes.start({ nodes: 3, args: ['--ephemeral'] });
  try {
    for (const s of c.nats.servers) pin(s.pid, 1);
    for (const i of c.running()) pin(c.node(i).child.pid, 0);
    const leader = await c.leader(30_000);
    rows.push(['cluster leader (3 nodes, NATS R3)', await cadenceAndSync(c.url(leader), o)]);
  } finally {
    await c.stop();
  }
  console.log('\n| node | pre-confirmations | interval p50 ms | p99 ms | max ms | send -> pre-confirmed p50 ms | p99 ms |');
  console.log('|---|---|---|---|---|---|---|');
  for (const [name, r] of rows) {
    const i = r.intervals;
    console.log(
      `| ${name} | ${i.length} | ${fmt(percentile(i, 50))} | ${fmt(percentile(i, 99))} | ${fmt(Math.max(...i))} | ${fmt(percentile(r.sync, 50), 1)} | ${fmt(percentile(r.sync, 99), 1)} |`,
    );
  }
}

async function main(): Promise<void> {
  const o = options(process.argv.slice(2));
  execFileSync('taskset', ['-a', '-p', '-c', '1', String(process.pid)], { stdio: 'ignore' });
  console.log(`\n## Takeover: kill -9 of the leader -> the next pre-confirmation on a surviving node, ${o.rate} tx/s sent to every node\n`);
  console.log('| lease ms | kills | p50 ms | p99 ms | max ms | leader changes without a fault |');
  console.log('|---|---|---|---|---|---|');
  for (const lease of o.leases) await takeovers(o, lease);
  await compare(o);
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
