// An OP Stack sequencer and an RPC node following it, driven as op-node drives them, timed.
//
// Two real processes: the OP dev chain in sequencer mode (blocks only from the Engine API,
// flashblocks served) pinned to core 0, and an RPC node (--no-build, pending from the
// sequencer's /brotli flashblocks, canonical blocks from newPayload) pinned to core 1. This
// driver plays both op-nodes, runs unpinned and so shares the cores with them.
//
// Per interval (fresh nodes each):
//   paced blocks  transfers sent to the sequencer at --rate while a block is open (--block-ms):
//                 for each, its flashblock's arrival at a plain listener on the sequencer's
//                 endpoint (JSON) → the first poll of the follower's pending block that lists
//                 it; and the follower's own histograms (lag: arrival → shown as pending;
//                 execution: one flashblock on its head, transactions and state root).
//   full blocks   enough signed transfers in the pool to fill the block's gas before op-node
//                 starts it; after --block-ms, engine_getPayloadV4 timed on the sequencer, then
//                 engine_newPayloadV4 of the same block on the follower.
//
//   node --import tsx benches/op-node.ts [--intervals 200,10] [--blocks 6] [--full-blocks 4] [--rate 100] [--block-ms 2000]

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { keccak256, parseGwei, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { freePort } from '../test/helpers/anvil.js';
import { devChainAttributes, devChainL1Info, engineClient } from '../test/helpers/engine.js';
import { DEV_KEYS } from '../test/helpers/node.js';
import { startPreconfNode, type Server } from './servers.js';
import { percentile, rpc, rpcRaw, sleep } from './util.js';

const TO = '0x000000000000000000000000000000000000c0de' as Hex;
const load = (): string => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

interface Options {
  intervals: number[];
  blocks: number;
  fullBlocks: number;
  rate: number;
  blockMs: number;
}

function options(argv: string[]): Options {
  const o: Options = { intervals: [200, 10], blocks: 6, fullBlocks: 4, rate: 100, blockMs: 2000 };
  for (let i = 0; i < argv.length; i += 2) {
    const v = argv[i + 1] ?? '';
    if (argv[i] === '--intervals') o.intervals = v.split(',').map(Number);
    else if (argv[i] === '--blocks') o.blocks = Number(v);
    else if (argv[i] === '--full-blocks') o.fullBlocks = Number(v);
    else if (argv[i] === '--rate') o.rate = Number(v);
    else if (argv[i] === '--block-ms') o.blockMs = Number(v);
    else throw new Error(`unknown option ${argv[i]}`);
  }
  return o;
}

interface Histogram {
  buckets: [number, number][]; // upper bound, cumulative count
  sum: number;
  count: number;
}

/** One histogram from the Prometheus text (no labels other than `le`). */
function histogram(text: string, name: string): Histogram {
  const buckets: [number, number][] = [];
  for (const m of text.matchAll(new RegExp(`^${name}_bucket\\{le="([^"]+)"\\} (\\S+)$`, 'gm'))) {
    buckets.push([m[1] === '+Inf' ? Infinity : Number(m[1]), Number(m[2])]);
  }
  const one = (suffix: string) => Number(new RegExp(`^${name}_${suffix} (\\S+)$`, 'm').exec(text)?.[1] ?? 'NaN');
  return { buckets, sum: one('sum'), count: one('count') };
}

const minus = (a: Histogram, b: Histogram): Histogram => ({
  buckets: a.buckets.map(([le, c], i) => [le, c - (b.buckets[i]?.[1] ?? 0)]),
  sum: a.sum - b.sum,
  count: a.count - b.count,
});

/** The bucket bound (ms) under which p % of the observations fall. */
function bucketMs(h: Histogram, p: number): string {
  const want = (p / 100) * h.count;
  const b = h.buckets.find(([, c]) => c >= want);
  const top = h.buckets.filter(([le]) => le !== Infinity).at(-1)?.[0] ?? 0;
  return b === undefined || h.count === 0 ? '-' : b[0] === Infinity ? `> ${+(top * 1000).toPrecision(3)}` : `≤ ${+(b[0] * 1000).toPrecision(3)}`;
}
const describe = (h: Histogram) =>
  h.count === 0 ? '-' : `mean ${((h.sum / h.count) * 1000).toFixed(2)}, p50 ${bucketMs(h, 50)}, p99 ${bucketMs(h, 99)} ms (${h.count})`;

const ms = (v: number[]) => (v.length === 0 ? '-' : `${percentile(v, 50).toFixed(1)} / ${percentile(v, 99).toFixed(1)}`);
const maxOf = (v: number[]) => (v.length === 0 ? '-' : `${percentile(v, 50).toFixed(1)} / ${Math.max(...v).toFixed(1)}`);

interface Block {
  number: Hex;
  hash: Hex;
  timestamp: Hex;
  gasLimit: Hex;
  transactions: Hex[];
}

async function runInterval(o: Options, interval: number, l1Info: Hex[]): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'op-node-bench-'));
  const servers: Server[] = [];
  let ws: WebSocket | undefined;
  try {
    const [seqAuth, folAuth, fbPort] = [await freePort(), await freePort(), await freePort()];
    const seqSecret = join(dir, 'sequencer.jwt.hex');
    const folSecret = join(dir, 'follower.jwt.hex');
    const common = ['--optimism', '--preconf-interval-ms', String(interval)];
    const seq = await startPreconfNode(
      [...common, '--authrpc.port', String(seqAuth), '--authrpc.jwtsecret', seqSecret, '--flashblocks.port', String(fbPort)],
      undefined,
      [0],
    );
    servers.push(seq);
    const fol = await startPreconfNode(
      [
        ...common,
        '--no-build',
        '--authrpc.port',
        String(folAuth),
        '--authrpc.jwtsecret',
        folSecret,
        '--flashblocks-url',
        `ws://127.0.0.1:${fbPort}/brotli`,
        // Longer than the driver's pause before a full block (it signs 1.5 blocks of transfers
        // while the sequencer, between blocks, sends nothing): a stale reconnect there joins
        // the next block mid-way and drops it, which is not what this bench measures.
        '--flashblocks.stale-after',
        '10000',
      ],
      undefined,
      [1],
    );
    servers.push(fol);
    const seqEngine = engineClient(`http://127.0.0.1:${seqAuth}`, seqSecret);
    const folEngine = engineClient(`http://127.0.0.1:${folAuth}`, folSecret);
    const chainId = Number(await rpc<Hex>(seq.url, 'eth_chainId'));
    const senders = DEV_KEYS.map((k) => privateKeyToAccount(k as Hex));
    const nonces = senders.map(() => 0);
    let next = 0;
    const sign = (): Promise<Hex> => {
      const i = next++ % senders.length;
      const nonce = nonces[i]!++;
      return senders[i]!.signTransaction({
        chainId,
        type: 'eip1559',
        to: TO,
        value: 1n,
        gas: 21_000n,
        maxFeePerGas: parseGwei('50'),
        maxPriorityFeePerGas: 1n,
        nonce,
      });
    };

    // The listener on the sequencer's endpoint: arrival of each transaction's flashblock.
    const arrived = new Map<Hex, number>();
    const perFlashblock: number[] = [];
    let paced = true; // transfers per flashblock counted in the paced blocks only
    ws = new WebSocket(`ws://127.0.0.1:${fbPort}/`);
    await new Promise((resolve, reject) => ws!.once('open', resolve).once('error', reject));
    ws.on('message', (data: Buffer) => {
      const at = performance.now();
      const txs = (JSON.parse(data.toString('utf8')) as { diff: { transactions: Hex[] } }).diff.transactions;
      let user = 0;
      for (const raw of txs) {
        if (raw.startsWith('0x7e')) continue; // deposits
        user++;
        arrived.set(keccak256(raw), at);
      }
      if (user > 0 && paced) perFlashblock.push(user);
    });

    const metrics = async () => await (await fetch(`${fol.url}/metrics`)).text();
    const getPayload: number[] = [];
    const newPayload: number[] = [];
    const gasUsed: number[] = [];
    const shown = new Map<Hex, number>();

    let n = 0;
    const oneBlock = async (full: boolean): Promise<void> => {
      n++;
      const head = await rpc<Block>(seq.url, 'eth_getBlockByNumber', ['latest', false]);
      if (Number(head.number) !== n - 1) throw new Error(`sequencer at ${Number(head.number)}, expected ${n - 1}`);
      if (full) {
        // The pool holds more than the block's gas before op-node starts it.
        const count = Math.ceil(Number(head.gasLimit) / 21_000) + 100;
        for (let sent = 0; sent < count; sent += 100) {
          const raws = await Promise.all(Array.from({ length: Math.min(100, count - sent) }, sign));
          await rpcRaw(seq.url, JSON.stringify(raws.map((r, id) => ({ jsonrpc: '2.0', id, method: 'eth_sendRawTransaction', params: [r] }))));
        }
      }
      const attributes = devChainAttributes(head, [l1Info[n - 1]!]);
      const fc = { headBlockHash: head.hash, safeBlockHash: head.hash, finalizedBlockHash: head.hash };
      const started = await seqEngine('engine_forkchoiceUpdatedV3', [fc, attributes]);
      if (started.error) throw new Error(`forkchoiceUpdated: ${started.error.message}`);
      const start = performance.now();
      if (full) await sleep(o.blockMs);
      else {
        // Paced transfers, and the follower's pending block polled as fast as it answers.
        let open = true;
        const poller = (async () => {
          while (open) {
            const b = await rpc<Block | null>(fol.url, 'eth_getBlockByNumber', ['pending', false]);
            const t = performance.now();
            for (const h of b?.transactions ?? []) if (!shown.has(h)) shown.set(h, t);
          }
        })();
        for (let i = 0; performance.now() - start < o.blockMs - 100; i++) {
          const wait = start + (i * 1000) / o.rate - performance.now();
          if (wait > 0) await sleep(wait);
          void rpcRaw(seq.url, JSON.stringify({ jsonrpc: '2.0', id: i, method: 'eth_sendRawTransaction', params: [await sign()] }));
        }
        await sleep(Math.max(0, start + o.blockMs - performance.now()));
        open = false;
        await poller;
      }
      const t0 = performance.now();
      const got = await seqEngine('engine_getPayloadV4', [started.result.payloadId]);
      const t1 = performance.now();
      if (got.error) throw new Error(`getPayload: ${got.error.message}`);
      const payload = got.result.executionPayload;
      const given = await folEngine('engine_newPayloadV4', [payload, [], attributes.parentBeaconBlockRoot, []]);
      const t2 = performance.now();
      if (given.result?.status !== 'VALID') throw new Error(`newPayload: ${JSON.stringify(given)}`);
      if (full) {
        getPayload.push(t1 - t0);
        newPayload.push(t2 - t1);
        gasUsed.push(Number(payload.gasUsed) / Number(payload.gasLimit));
      }
      const moved = { headBlockHash: payload.blockHash, safeBlockHash: head.hash, finalizedBlockHash: head.hash };
      for (const engine of [folEngine, seqEngine]) {
        const r = await engine('engine_forkchoiceUpdatedV3', [moved, null]);
        if (r.result?.payloadStatus?.status !== 'VALID') throw new Error(`forkchoiceUpdated: ${JSON.stringify(r)}`);
      }
    };

    const before = await metrics();
    const loadPaced = load();
    for (let b = 0; b < o.blocks; b++) await oneBlock(false);
    const afterPaced = await metrics();
    paced = false;
    const loadFull = load();
    for (let b = 0; b < o.fullBlocks; b++) await oneBlock(true);
    const afterFull = await metrics();

    const lags = [...shown].flatMap(([h, t]) => (arrived.has(h) ? [t - arrived.get(h)!] : []));
    const lagH = minus(histogram(afterPaced, 'preconf_flashblocks_lag_seconds'), histogram(before, 'preconf_flashblocks_lag_seconds'));
    const execName = 'preconf_flashblocks_execution_seconds';
    const execH = minus(histogram(afterPaced, execName), histogram(before, execName));
    const execFull = minus(histogram(afterFull, execName), histogram(afterPaced, execName));
    const mismatches = /^preconf_flashblocks_mismatches_total (\S+)$/m.exec(afterFull)?.[1];
    const reused = /^preconf_flashblocks_reused_total (\S+)$/m.exec(afterFull)?.[1];
    const perFb = perFlashblock.length === 0 ? 0 : perFlashblock.reduce((s, x) => s + x, 0) / perFlashblock.length;
    return [
      `| ${interval} ms | arrival at a listener → follower pending (polled), p50 / p99 ms | ${ms(lags)} (${lags.length} transfers) | ${loadPaced} |`,
      `| ${interval} ms | follower lag histogram (arrival → shown as pending) | ${describe(lagH)} | ${loadPaced} |`,
      `| ${interval} ms | follower execution per flashblock, ${perFb.toFixed(1)} transfers per flashblock carrying any | ${describe(execH)} | ${loadPaced} |`,
      `| ${interval} ms | follower execution per flashblock, full blocks (sum per block ${((execFull.sum / Math.max(1, o.fullBlocks)) * 1000).toFixed(0)} ms) | ${describe(execFull)} | ${loadFull} |`,
      `| ${interval} ms | engine_getPayloadV4 at the end of a full block (gas used ${gasUsed.map((g) => `${(g * 100).toFixed(0)} %`).join(', ')}), p50 / max ms | ${maxOf(getPayload)} | ${loadFull} |`,
      `| ${interval} ms | follower engine_newPayloadV4 of that block, p50 / max ms | ${maxOf(newPayload)} (mismatches ${mismatches}, blocks taken from the follower ${reused}) | ${loadFull} |`,
    ].join('\n');
  } finally {
    ws?.terminate();
    for (const s of servers.reverse()) await s.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const o = options(process.argv.slice(2));
  const l1Info = await devChainL1Info(o.blocks + o.fullBlocks);
  console.log(`\n## OP sequencer and RPC node: ${o.rate} transfers/s in ${o.blocks} blocks of ${o.blockMs} ms, ${o.fullBlocks} full blocks\n`);
  console.log('| interval | figure | value | load (1, 5, 15 min) |');
  console.log('|---|---|---|---|');
  for (const interval of o.intervals) console.log(await runInterval(o, interval, l1Info));
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
