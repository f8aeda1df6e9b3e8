// The transaction scenarios.
//
// flood: pre-signed transfers (dev accounts 1..8, one connection per sender so each sends
// its nonces in order) go out through the load generator as fast as they are answered.
// Reports accepted tx/s, the submission latency, the time from submission to a visible
// receipt for a sample (see receipts.ts), and the time until the last one was included.
//
// paced: transfers at a fixed rate (paced by the load generator) while it also runs
// eth_getBalance at full speed: read throughput while the builder is busy, and the time
// to receipt at a load both servers can take.

import type { Hex } from 'viem';
import { keccak256 } from 'viem';
import { devAccount } from '../test/helpers/node.js';
import { syntheticAddress } from './fixtures.js';
import { runLoad, type RunReport } from './loadgen.js';
import { ReceiptTracker, summarize, type LatencySummary } from './receipts.js';
import { measured, type ProcUsage, type Server } from './servers.js';
import { nowUs, rpc, sleep } from './util.js';

const SENDERS = [1, 2, 3, 4, 5, 6, 7, 8];
const CHAIN_ID = 31337; // both the dev chain and anvil

export interface SignedTx {
  raw: Hex;
  hash: Hex;
}

const signed = new Map<string, SignedTx>();

/** A 1-wei transfer to a fresh address; the same (sender, nonce) signs the same bytes. */
async function transfer(sender: number, nonce: number): Promise<SignedTx> {
  const key = `${sender}:${nonce}`;
  let tx = signed.get(key);
  if (!tx) {
    const raw = await devAccount(sender).signTransaction({
      chainId: CHAIN_ID,
      type: 'eip1559',
      to: syntheticAddress(`to-${sender}`, nonce),
      value: 1n,
      nonce,
      gas: 21_000n,
      maxFeePerGas: 100_000_000_000n,
      maxPriorityFeePerGas: 1_000_000_000n,
    });
    tx = { raw, hash: keccak256(raw) };
    signed.set(key, tx);
  }
  return tx;
}

async function nonces(url: string): Promise<number[]> {
  return Promise.all(SENDERS.map(async (s) => Number(await rpc<string>(url, 'eth_getTransactionCount', [devAccount(s).address, 'pending']))));
}

/** `count` transfers, round-robin over the senders: tx j is sender j % 8's next nonce.
 *  Signed before any measurement (about 1 ms each), and once for both servers when their
 *  nonces agree. */
async function signBatch(url: string, count: number): Promise<SignedTx[]> {
  const base = await nonces(url);
  const out: SignedTx[] = [];
  for (let j = 0; j < count; j++) {
    const s = j % SENDERS.length;
    out.push(await transfer(SENDERS[s]!, base[s]! + Math.floor(j / SENDERS.length)));
  }
  return out;
}

/** How long without a new receipt before the tracked rest counts as stuck. */
const STALL_MS = 5_000;

/**
 * anvil's automine can leave ready transactions in its pool for good when many arrive at
 * once (foundry-rs/foundry#10122). Counts what is stuck and mines it with evm_mine, so the
 * next phase starts from an empty pool. Only for the anvil this run started.
 */
async function flushStuck(server: Server): Promise<number> {
  if (server.kind !== 'anvil') return 0;
  const pending = async () => Number((await rpc<{ pending: string }>(server.url, 'txpool_status')).pending);
  const stuck = await pending();
  for (let i = 0; i < 50 && (await pending()) > 0; i++) await rpc(server.url, 'evm_mine');
  return stuck;
}

const sendBody = (tx: SignedTx, id: number) => JSON.stringify({ jsonrpc: '2.0', id, method: 'eth_sendRawTransaction', params: [tx.raw] });

/** Lookups of the flood's transactions once they are all in sealed blocks. */
export interface SealedLookups {
  receipt: RunReport;
  transaction: RunReport;
}

export interface FloodResult {
  sent: number;
  accepted: number;
  errors: number;
  errorSample: string | null;
  acceptedTps: number;
  submitMs: { p50: number; p99: number };
  toReceipt: LatencySummary;
  /** From the first submission until the last transaction's receipt was visible. */
  drainS: number;
  includedTps: number;
  missing: number;
  /** Transactions anvil left in its pool (then mined with evm_mine). */
  stuck: number;
  proc: ProcUsage | null;
  sealed: SealedLookups | null;
}

const ZERO_HASH = `0x${'0'.repeat(64)}`;

/** Waits until the receipt of `hash` carries a block hash (sealed, not just pre-confirmed). */
async function waitSealed(url: string, hash: Hex, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const r = await rpc<{ blockHash: string } | null>(url, 'eth_getTransactionReceipt', [hash]);
    if (r && r.blockHash !== ZERO_HASH) return true;
    await sleep(100);
  }
  return false;
}

/** eth_getTransactionReceipt and eth_getTransactionByHash over 256 of the flood's hashes. */
async function sealedLookups(server: Server, txs: SignedTx[], load: LookupLoad): Promise<SealedLookups | null> {
  const last = txs[txs.length - 1]!.hash;
  // anvil can strand transactions again after the first flush: flush once more.
  if (!(await waitSealed(server.url, last, 10_000)) && ((await flushStuck(server)) === 0 || !(await waitSealed(server.url, last, 5_000)))) {
    return null;
  }
  const sample = txs.filter((_, j) => j % Math.max(1, Math.floor(txs.length / 256)) === 0).slice(0, 256);
  const bodies = (method: string) => sample.map((t, i) => JSON.stringify({ jsonrpc: '2.0', id: i + 1, method, params: [t.hash] }));
  const receipt = await runLoad({ ...load, url: server.url, bodies: bodies('eth_getTransactionReceipt') });
  const transaction = await runLoad({ ...load, url: server.url, bodies: bodies('eth_getTransactionByHash') });
  return { receipt, transaction };
}

export interface LookupLoad {
  connections: number;
  duration: number;
  warmup: number;
  pipeline: number;
}

export async function flood(server: Server, count: number, pollMs: number, load: LookupLoad): Promise<FloodResult> {
  const txs = await signBatch(server.url, count);
  const sampleEvery = Math.max(1, Math.ceil(count / 100));
  const tracker = new ReceiptTracker(server.url, pollMs);
  const tracked = txs.filter((_, j) => j % sampleEvery === 0 || j >= count - SENDERS.length);
  for (const t of tracked) tracker.track(t.hash);
  tracker.start();
  const { result: report, proc } = await measured(server.pid, () =>
    runLoad({ url: server.url, bodies: txs.map(sendBody), connections: SENDERS.length, duration: 120, once: true, timestamps: true }),
  );
  await tracker.finish(STALL_MS);
  const stuck = await flushStuck(server);
  const submitted = new Map<Hex, number>();
  let first = Number.POSITIVE_INFINITY;
  for (const [idx, sent] of report.timestamps ?? []) {
    first = Math.min(first, sent);
    if (tracked.includes(txs[idx]!)) submitted.set(txs[idx]!.hash, sent);
  }
  const lastSeen = Math.max(...txs.slice(-SENDERS.length).map((t) => tracker.seen.get(t.hash)?.recvUs ?? Number.NaN));
  const drainS = (lastSeen - first) / 1e6;
  return {
    sent: count,
    accepted: report.ok,
    errors: report.errors,
    errorSample: report.error_sample,
    acceptedTps: report.rps,
    submitMs: { p50: report.latency_us.p50 / 1000, p99: report.latency_us.p99 / 1000 },
    toReceipt: summarize(tracker.latencies(submitted)),
    drainS,
    includedTps: count / drainS,
    missing: tracker.missing,
    stuck,
    proc,
    sealed: await sealedLookups(server, txs, load),
  };
}

export interface PacedResult {
  rate: number;
  sent: number;
  accepted: number;
  errors: number;
  errorSample: string | null;
  achievedTps: number;
  submitMs: { p50: number; p99: number };
  toReceipt: LatencySummary;
  /** Receipt lookups per second the polling cost the server (more, the later receipts appear). */
  receiptLookupsPerS: number;
  missing: number;
  stuck: number;
  reads: RunReport;
  readsBefore: RunReport;
  /** Both load generator runs (transfers and reads), CPU seconds per wall second. */
  loadgenCores: number;
  proc: ProcUsage | null;
}

export interface PacedOptions {
  rate: number;
  duration: number;
  warmup: number;
  connections: number;
  pipeline: number;
  pollMs: number;
  readBodies: string[];
  /** Runs alongside for the measured part (e.g. the cadence side channel). */
  alongside?: () => Promise<unknown>;
}

/** Every 4th paced transfer's receipt is polled for. */
const PACED_SAMPLE = 4;

export async function pacedWithReads(server: Server, o: PacedOptions): Promise<PacedResult> {
  const total = Math.ceil(o.rate * (o.warmup + o.duration));
  const txs = await signBatch(server.url, total);
  const tracker = new ReceiptTracker(server.url, o.pollMs);
  // The same reads alone just before: this machine's speed drifts over minutes, so the
  // read-scenario figure from earlier is no baseline.
  const readsBefore = await runLoad({
    url: server.url,
    bodies: o.readBodies,
    connections: o.connections,
    duration: o.duration,
    warmup: o.warmup,
    pipeline: o.pipeline,
  });
  const { result, proc } = await measured(server.pid, async () => {
    // The load generator paces the transfers too (one connection per sender, nonces in
    // order): tx j is due at start + j / rate, which is when its receipt is first polled for.
    const start = nowUs();
    txs.forEach((t, j) => j % PACED_SAMPLE === 0 && tracker.track(t.hash, start + (j * 1e6) / o.rate));
    tracker.start();
    const reads = runLoad({ url: server.url, bodies: o.readBodies, connections: o.connections, duration: o.duration, warmup: o.warmup, pipeline: o.pipeline });
    const side = o.alongside ? sleep(o.warmup * 1000).then(o.alongside) : Promise.resolve();
    const sends = runLoad({
      url: server.url,
      bodies: txs.map(sendBody),
      connections: SENDERS.length,
      duration: o.warmup + o.duration + 30,
      rate: o.rate,
      once: true,
      timestamps: true,
    });
    const [sendReport, readReport] = await Promise.all([sends, reads, side]);
    return { sendReport, readReport };
  });
  await tracker.finish(STALL_MS);
  const stuck = await flushStuck(server);
  const submitted = new Map<Hex, number>();
  for (const [idx, sent] of result.sendReport.timestamps ?? []) if (idx % PACED_SAMPLE === 0) submitted.set(txs[idx]!.hash, sent);
  const r = result.sendReport;
  return {
    rate: o.rate,
    sent: total,
    accepted: r.ok,
    errors: r.errors,
    errorSample: r.error_sample,
    achievedTps: r.rps,
    submitMs: { p50: r.latency_us.p50 / 1000, p99: r.latency_us.p99 / 1000 },
    toReceipt: summarize(tracker.latencies(submitted)),
    receiptLookupsPerS: tracker.lookups / (o.warmup + o.duration),
    missing: tracker.missing,
    stuck,
    reads: result.readReport,
    readsBefore,
    loadgenCores: r.cpu_s / r.wall_s + result.readReport.cpu_s / result.readReport.wall_s,
    proc,
  };
}
