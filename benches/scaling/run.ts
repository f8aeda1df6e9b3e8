// `npm run bench:scaling`: how start-up, memory, sealing, cadence and reads grow with the
// state (from 10 k to 10 M accounts, start-up and memory must not follow the state). For each
// size N: a genesis of N accounts plus a contract with N slots; first start (genesis import),
// restart, RSS; a traffic phase of blocks of 1,000 transfers to fresh accounts while the
// pre-confirmation cadence is watched; eth_getBalance and eth_call throughput; the same reads
// against anvil on the same genesis where it loads it. Servers are pinned to --server-core,
// the load generator and driver to --load-cores.

import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeFunctionData, parseGwei, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { anvilBinary, freePort } from '../../test/helpers/anvil.js';
import { contract } from '../../test/helpers/contracts.js';
import { devAccount } from '../../test/helpers/node.js';
import { analyze, watchPending } from '../cadence.js';
import { checkLoadgen, pinLoadgen, runLoad } from '../loadgen.js';
import { parseCpuList, pinSelf, pinnedCommand } from '../pinning.js';
import { procSnapshot } from '../servers.js';
import { ROOT, percentile, rpc, rpcRaw, sleep } from '../util.js';
import { accountAt, holderAt, TOKEN, writeGenesis } from './genesis.js';
import { histogramQuantiles } from './metrics.js';
import { watchStamps } from './stamps.js';
import { watchLag } from './lag.js';

const arg = (name: string, dflt: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1]! : dflt;
};
const SIZES = arg('sizes', '10000,100000,1000000').split(',').map(Number);
const TRAFFIC_S = Number(arg('traffic-s', '60'));
const READ_S = Number(arg('read-s', '10'));
const TX_PER_BLOCK = Number(arg('tx-per-block', '1000'));
const SERVER_CORES = parseCpuList(arg('server-core', '0'));
const LOAD_CORES = parseCpuList(arg('load-cores', '1'));
const ANVIL = !process.argv.includes('--no-anvil');
const OUT = arg('out', '');
/** A directory holding genesis-N.json files written earlier (benches/scaling/import.ts keeps
 *  them): reused instead of writing the genesis again (minutes at 10 M). */
const GENESIS_DIR = arg('genesis-dir', '');
const log = (m: string) => process.stderr.write(`[scaling] ${m}\n`);

interface Proc {
  child: ChildProcess;
  url: string;
  exited: Promise<number | null>;
  /** The tail of its stderr, for errors. */
  stderr: () => string;
}

async function start(cmd: string, args: string[], timeoutS: number): Promise<{ proc: Proc; ms: number }> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const [c, a] = pinnedCommand(SERVER_CORES, cmd, [...args.map((x) => x.replace('{port}', String(port)))]);
  const t0 = performance.now();
  const child = spawn(c, a, { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr?.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-4000)));
  const exited = new Promise<number | null>((r) => child.once('exit', r));
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${cmd} exited: ${err}`);
    if (performance.now() - t0 > timeoutS * 1000) {
      child.kill('SIGKILL');
      throw new Error(`${cmd} did not answer within ${timeoutS} s`);
    }
    try {
      await rpc(url, 'eth_chainId');
      return { proc: { child, url, exited, stderr: () => err }, ms: performance.now() - t0 };
    } catch {
      await sleep(20);
    }
  }
}

const stop = async (p: Proc) => {
  p.child.kill('SIGTERM');
  await p.exited;
};
const rss = (p: Proc) => Math.round(procSnapshot(p.child.pid ?? null)?.rssMiB ?? NaN);

/** Pre-signs `blocks` × TX_PER_BLOCK transfers to fresh accounts from the ten dev accounts. */
async function signTransfers(blocks: number): Promise<string[][]> {
  const perSender = Math.ceil(TX_PER_BLOCK / 10);
  const out: string[][] = [];
  for (let b = 0; b < blocks; b++) {
    const batch: string[] = [];
    for (let s = 0; s < 10; s++) {
      const acct = devAccount(s);
      for (let k = 0; k < perSender; k++) {
        const to = privateKeyToAccount(generatePrivateKey()).address;
        batch.push(
          await acct.signTransaction({
            chainId: 31337,
            type: 'eip1559',
            to,
            value: 1n,
            gas: 21000n,
            maxFeePerGas: parseGwei('50'),
            maxPriorityFeePerGas: 1n,
            nonce: b * perSender + k,
          }),
        );
      }
    }
    out.push(batch);
  }
  return out;
}

async function readThroughput(url: string, n: number) {
  const addrs = Array.from({ length: 256 }, (_, i) => accountAt(Math.floor((i * n) / 256)));
  const holders = Array.from({ length: 256 }, (_, i) => holderAt(Math.floor((i * n) / 256)));
  const balance = addrs.map((a) => JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_getBalance', params: [a, 'latest'] }));
  const abi = contract('Token').abi;
  const call = holders.map((h) =>
    JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'eth_call',
      params: [{ to: TOKEN, data: encodeFunctionData({ abi, functionName: 'balanceOf', args: [h] }) }, 'latest'],
    }),
  );
  const run = async (bodies: string[]) => {
    const r = await runLoad({ url, bodies, connections: 8, duration: READ_S, warmup: 1 });
    return { rps: Math.round(r.ok / r.window_s), p50: r.latency_us.p50 / 1000, p99: r.latency_us.p99 / 1000, errors: r.errors };
  };
  return { getBalance: await run(balance), call: await run(call) };
}

async function sizeRun(n: number) {
  const dir = mkdtempSync(join(tmpdir(), `scaling-${n}-`));
  let genesis = join(dir, 'genesis.json');
  const datadir = join(dir, 'data');
  try {
    // Signed before any node runs: a connection left idle while signing (tens of seconds)
    // would be closed by the server's idle timeout and fail the next request.
    log(`N=${n}: signing transfers`);
    const blocks = Math.ceil(TRAFFIC_S / 2) + 1;
    const transfers = await signTransfers(blocks);
    const kept = GENESIS_DIR === '' ? '' : join(GENESIS_DIR, `genesis-${n}.json`);
    if (kept !== '' && existsSync(kept)) genesis = kept;
    else {
      log(`N=${n}: writing genesis`);
      await writeGenesis(genesis, n);
    }
    const node = (extra: string[]) => [join(ROOT, 'bin', 'preconf-node.cjs'), '--port', '{port}', '--quiet', '--threads', '1', '--datadir', datadir, ...extra];
    const first = await start(process.execPath, node(['--genesis', genesis]), 3600);
    const rssFirst = rss(first.proc);
    await stop(first.proc);
    const restart = await start(process.execPath, node([]), 600);
    const p = restart.proc;
    const rssStart = rss(p);
    log(`N=${n}: first start ${(first.ms / 1000).toFixed(1)} s, restart ${restart.ms.toFixed(0)} ms; traffic`);
    p.exited.then((code) => {
      if (code !== 0 && code !== null) log(`N=${n}: the node exited with ${code}: ${p.stderr()}`);
    });
    const head0 = Number(await rpc<string>(p.url, 'eth_blockNumber'));
    const stamps = await watchStamps(p.url);
    const watch = watchPending(p.url, TRAFFIC_S, 10);
    const lag = watchLag(p.url);
    // One block's worth of transfers every block time (2 s), in batches of 100.
    const t0 = performance.now();
    for (let b = 0; b < blocks && performance.now() - t0 < TRAFFIC_S * 1000 - 2000; b++) {
      const next = t0 + b * 2000;
      await sleep(Math.max(0, next - performance.now()));
      const txs = transfers[b]!;
      for (let i = 0; i < txs.length; i += 100) {
        await rpcRaw(
          p.url,
          JSON.stringify(txs.slice(i, i + 100).map((raw, j) => ({ jsonrpc: '2.0', id: j, method: 'eth_sendRawTransaction', params: [raw] }))),
        );
      }
    }
    const cadence = analyze(await watch, TRAFFIC_S);
    const builderCadence = stamps.stop();
    const safeLag = await lag.stop();
    // The histogram helper reports seconds as ms; blocks per commit are counts.
    const perCommit = await histogramQuantiles(p.url, 'preconf_store_commit_blocks');
    const commitBlocks = perCommit && { p50: perCommit.p50 / 1000, p99: perCommit.p99 / 1000, count: perCommit.count };
    const head1 = Number(await rpc<string>(p.url, 'eth_blockNumber'));
    const counts: number[] = [];
    for (let b = head0 + 1; b <= head1; b++)
      counts.push((await rpc<{ transactions: Hex[] }>(p.url, 'eth_getBlockByNumber', [`0x${b.toString(16)}`, false])).transactions.length);
    const seal = await histogramQuantiles(p.url);
    const commit = await histogramQuantiles(p.url, 'preconf_store_commit_duration_seconds');
    const tickDelay = await histogramQuantiles(p.url, 'preconf_builder_tick_delay_seconds');
    const rssTraffic = rss(p);
    const reads = await readThroughput(p.url, n);
    await stop(p);
    let anvil: Record<string, unknown> | null = null;
    if (ANVIL) {
      try {
        const a = await start(anvilBinary(), ['--port', '{port}', '--host', '127.0.0.1', '--silent', '--init', genesis], 900);
        const rssA = rss(a.proc);
        const readsA = await readThroughput(a.proc.url, n);
        anvil = { startMs: Math.round(a.ms), rssMiB: rssA, reads: readsA };
        await stop(a.proc);
      } catch (e) {
        anvil = { error: (e as Error).message.slice(0, 200) };
      }
    }
    return {
      n,
      genesisMiB: Math.round(statSync(genesis).size / 2 ** 20),
      firstStartS: first.ms / 1000,
      restartMs: restart.ms,
      rssMiB: { afterFirstStart: rssFirst, afterRestart: rssStart, afterTraffic: rssTraffic },
      blocks: counts.length,
      txPerBlock: { p50: percentile(counts, 50), max: Math.max(...counts) },
      sealMs: seal ?? { p50: cadence.sealMs.p50, p99: cadence.sealMs.max, source: 'cadence watcher' },
      commitMs: commit,
      commitBlocks,
      safeLagBlocks: safeLag,
      cadenceMs: cadence.intervalMs,
      builderCadenceMs: builderCadence,
      tickDelayMs: tickDelay,
      skipped: cadence.skipped,
      reads,
      anvil,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main() {
  checkLoadgen();
  pinSelf(LOAD_CORES);
  pinLoadgen(LOAD_CORES);
  const results = [];
  for (const n of SIZES) {
    const r = await sizeRun(n);
    results.push(r);
    log(JSON.stringify(r));
  }
  if (OUT) writeFileSync(OUT, JSON.stringify({ date: new Date().toISOString(), argv: process.argv.slice(2), results }, null, 2));
  const f = (x: number, d = 0) => x.toFixed(d);
  console.log(
    '| accounts + slots | genesis | first start | restart | RSS start / after traffic | seal p50 / p99 | commit p50 / p99 | blocks per commit p99 | latest - safe p50 / p99 / max (blocks) | cadence p50 / p99 (polled) | cadence p50 / p99 (builder clock) | tick delay p50 / p99 | getBalance req/s | eth_call req/s | anvil start | anvil getBalance / eth_call |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|');
  for (const r of results) {
    const a = r.anvil as { startMs?: number; reads?: { getBalance: { rps: number }; call: { rps: number } }; error?: string } | null;
    const anvilCols = !a ? '- | -' : a.error ? `failed: ${a.error} | -` : `${f(a.startMs! / 1000, 1)} s | ${a.reads!.getBalance.rps} / ${a.reads!.call.rps}`;
    console.log(
      `| ${r.n.toLocaleString('en')} | ${r.genesisMiB} MiB | ${f(r.firstStartS, 1)} s | ${f(r.restartMs)} ms | ${r.rssMiB.afterRestart} / ${r.rssMiB.afterTraffic} MiB | ${f(r.sealMs.p50)} / ${f(r.sealMs.p99)} ms | ${r.commitMs ? `${f(r.commitMs.p50)} / ${f(r.commitMs.p99)} ms` : '-'} | ${r.commitBlocks ? f(r.commitBlocks.p99, 1) : '-'} | ${r.safeLagBlocks.p50} / ${r.safeLagBlocks.p99} / ${r.safeLagBlocks.max} | ${f(r.cadenceMs.p50)} / ${f(r.cadenceMs.p99)} ms | ${f(r.builderCadenceMs.p50)} / ${f(r.builderCadenceMs.p99)} ms | ${r.tickDelayMs ? `${f(r.tickDelayMs.p50, 1)} / ${f(r.tickDelayMs.p99, 1)} ms` : '-'} | ${r.reads.getBalance.rps} | ${r.reads.call.rps} | ${anvilCols} |`,
    );
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
