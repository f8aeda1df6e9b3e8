// Flashblocks on the wire (--flashblocks.port): what publishing costs per pre-confirmation,
// and how long a transaction takes from eth_sendRawTransaction to the flashblock carrying it.
//
// For each interval, three runs of the same paced transfers on a node with N genesis
// accounts (a realistic trie: the transfers go to random existing accounts):
//   off      no flashblocks endpoint
//   zeros    the endpoint with --flashblocks.disable-state-root
//   roots    the endpoint computing a state root and block hash per pre-confirmation
// Cost: CPU time of the node's event renderer thread (`preconf-events`, where flashblocks
// are rendered), from /proc/PID/task/TID/schedstat (ns on the CPU, not wall clock), per
// pre-confirmation, above the `off` run. Latency: send (before the POST) → the frame's
// arrival at a plain client on the same machine, p50/p99. Brotli: the time to compress the
// messages received, per message (what the event loop spends once per message for /brotli).
//
//   node --import tsx benches/flashblocks.ts [--accounts 1000000] [--intervals 200,10] [--seconds 10] [--rate 50]

import { readdirSync, readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliCompressSync, constants as zlib } from 'node:zlib';
import WebSocket from 'ws';
import { keccak256, parseGwei, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { DEV_KEYS } from '../test/helpers/node.js';
import { startPreconfNode } from './servers.js';
import { accountAt, writeGenesis } from './scaling/genesis.js';
import { percentile, rpcRaw, sleep } from './util.js';

interface Options {
  accounts: number;
  intervals: number[];
  seconds: number;
  rate: number;
}

function options(argv: string[]): Options {
  const o: Options = { accounts: 1_000_000, intervals: [200, 10], seconds: 10, rate: 50 };
  for (let i = 0; i < argv.length; i += 2) {
    const v = argv[i + 1] ?? '';
    if (argv[i] === '--accounts') o.accounts = Number(v);
    else if (argv[i] === '--intervals') o.intervals = v.split(',').map(Number);
    else if (argv[i] === '--seconds') o.seconds = Number(v);
    else if (argv[i] === '--rate') o.rate = Number(v);
    else throw new Error(`unknown option ${argv[i]}`);
  }
  return o;
}

async function signTransfers(count: number, accounts: number): Promise<Hex[]> {
  const acct = privateKeyToAccount(DEV_KEYS[8]!);
  const out: Hex[] = [];
  for (let n = 0; n < count; n++) {
    const to = accountAt(Math.floor(Math.random() * accounts));
    out.push(
      await acct.signTransaction({
        chainId: 31337,
        type: 'eip1559',
        to,
        value: 1n,
        gas: 21000n,
        maxFeePerGas: parseGwei('50'),
        maxPriorityFeePerGas: 1n,
        nonce: n,
      }),
    );
  }
  return out;
}

/** Nanoseconds the node's event renderer thread has been on a CPU. */
function rendererNs(pid: number): number {
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    if (readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim() === 'preconf-events') {
      return Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    }
  }
  throw new Error('no preconf-events thread');
}

interface Run {
  mode: 'off' | 'zeros' | 'roots';
  preconfs: number;
  rendererNs: number;
  latencies: number[];
  messages: string[];
}

async function run(o: Options, genesis: string, interval: number, mode: Run['mode'], raws: Hex[]): Promise<Run> {
  const fbPort = 20000 + Math.floor(Math.random() * 20000);
  const args = ['--genesis', genesis, '--preconf-interval-ms', String(interval), '--block-time-ms', '2000'];
  if (mode !== 'off') args.push('--flashblocks.port', String(fbPort));
  if (mode === 'zeros') args.push('--flashblocks.disable-state-root');
  const server = await startPreconfNode(args);
  const sent = new Map<Hex, number>();
  const latencies: number[] = [];
  const messages: string[] = [];
  let ws: WebSocket | undefined;
  try {
    if (mode !== 'off') {
      ws = new WebSocket(`ws://127.0.0.1:${fbPort}/`);
      await new Promise((resolve, reject) => ws!.once('open', resolve).once('error', reject));
      ws.on('message', (data: Buffer) => {
        const at = performance.now();
        const text = data.toString('utf8');
        messages.push(text);
        for (const tx of (JSON.parse(text) as { diff: { transactions: Hex[] } }).diff.transactions) {
          const t0 = sent.get(keccak256(tx));
          if (t0 !== undefined) latencies.push(at - t0);
        }
      });
    }
    await sleep(2500); // past the first seal: the stream starts at the block opened after it
    const before = rendererNs(server.pid!);
    const start = performance.now();
    for (let i = 0; i < raws.length && performance.now() - start < o.seconds * 1000; i++) {
      const due = start + (i * 1000) / o.rate;
      const wait = due - performance.now();
      if (wait > 0) await sleep(wait);
      const raw = raws[i]!;
      sent.set(keccak256(raw), performance.now());
      void rpcRaw(server.url, JSON.stringify({ jsonrpc: '2.0', id: i, method: 'eth_sendRawTransaction', params: [raw] }));
    }
    await sleep(500);
    const after = rendererNs(server.pid!);
    // Pre-confirmations over the measured span, from the interval (the same in every mode,
    // so the differences between modes stand).
    const preconfs = Math.max(1, Math.round((performance.now() - start) / interval));
    return { mode, preconfs, rendererNs: after - before, latencies, messages };
  } finally {
    ws?.terminate();
    await server.stop();
  }
}

/** Median over 5 rounds (after one to warm up) of the time to compress each message. */
function brotliUs(messages: string[]): number {
  if (messages.length === 0) return NaN;
  const round = (): number => {
    const t0 = process.hrtime.bigint();
    for (const m of messages) brotliCompressSync(m, { params: { [zlib.BROTLI_PARAM_QUALITY]: 3, [zlib.BROTLI_PARAM_SIZE_HINT]: m.length } });
    return Number(process.hrtime.bigint() - t0) / 1000 / messages.length;
  };
  round();
  const rounds = [round(), round(), round(), round(), round()].sort((a, b) => a - b);
  return rounds[2]!;
}

async function main(): Promise<void> {
  const o = options(process.argv.slice(2));
  const dir = mkdtempSync(join(tmpdir(), 'flashblocks-bench-'));
  try {
    const genesis = join(dir, 'genesis.json');
    await writeGenesis(genesis, o.accounts);
    console.log(
      `\n## Flashblocks: ${o.accounts} accounts, ${o.rate} transfers/s for ${o.seconds} s, load ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}\n`,
    );
    console.log(
      '| interval | mode | renderer CPU µs per pre-confirmation | above off | send → flashblock p50 / p99 ms | messages | mean message bytes | brotli µs per message |',
    );
    console.log('|---|---|---|---|---|---|---|---|');
    for (const interval of o.intervals) {
      const runs: Run[] = [];
      for (const mode of ['off', 'zeros', 'roots'] as const) {
        const raws = await signTransfers(Math.ceil(o.rate * o.seconds) + 10, o.accounts);
        runs.push(await run(o, genesis, interval, mode, raws));
      }
      const off = runs[0]!.rendererNs / runs[0]!.preconfs;
      for (const r of runs) {
        const per = r.rendererNs / r.preconfs;
        const bytes = r.messages.length === 0 ? NaN : r.messages.reduce((s, m) => s + m.length, 0) / r.messages.length;
        const lat = r.latencies.length === 0 ? '-' : `${percentile(r.latencies, 50).toFixed(1)} / ${percentile(r.latencies, 99).toFixed(1)}`;
        console.log(
          `| ${interval} ms | ${r.mode} | ${(per / 1000).toFixed(1)} | ${r.mode === 'off' ? '-' : ((per - off) / 1000).toFixed(1)} | ${lat} | ${r.messages.length} | ${Number.isNaN(bytes) ? '-' : bytes.toFixed(0)} | ${r.mode === 'off' ? '-' : brotliUs(r.messages).toFixed(1)} |`,
        );
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
