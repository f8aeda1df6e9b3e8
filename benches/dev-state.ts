// `npm run bench:dev`: the test methods a harness loops on, as the state grows (a revert must
// stay cheap at a million accounts). For each size N: a genesis of N accounts plus a contract
// with N slots (scaling/genesis.ts), the node started on it with --dev; then, ROUNDS times,
// evm_snapshot, 200 transfers pre-confirmed and sealed into two blocks, evm_revert (timed);
// then anvil_dumpState of the whole state and anvil_loadState of that dump (timed, and the
// seal of the block that holds it). Times are round trips from this process over loopback.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseGwei, type Hex } from 'viem';
import { devAccount } from '../test/helpers/node.js';
import { spawnNode } from '../test/helpers/process.js';
import { percentile, rpc } from './util.js';
import { writeGenesis } from './scaling/genesis.js';

const arg = (name: string, dflt: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1]! : dflt;
};
const SIZES = arg('sizes', '10000,1000000').split(',').map(Number);
const ROUNDS = Number(arg('rounds', '20'));
const TXS = 200;
const SINK: Hex = '0x000000000000000000000000000000000000517c';
const log = (m: string) => process.stderr.write(`[dev-state] ${m}\n`);

async function timed<T>(work: () => Promise<T>): Promise<[T, number]> {
  const t0 = performance.now();
  const r = await work();
  return [r, performance.now() - t0];
}

/** The same 200 transfers every round: after a revert their nonces are free again. */
async function signTransfers(): Promise<string> {
  const senders = [1, 2, 3, 4].map(devAccount);
  const raws: Hex[] = [];
  for (const s of senders) {
    for (let n = 0; n < TXS / senders.length; n++) {
      raws.push(
        await s.signTransaction({
          chainId: 31337,
          type: 'eip1559',
          nonce: n,
          gas: 21_000n,
          maxFeePerGas: parseGwei('100'),
          maxPriorityFeePerGas: 1n,
          to: SINK,
          value: 1n,
        }),
      );
    }
  }
  return JSON.stringify(raws.map((raw, i) => ({ jsonrpc: '2.0', id: i, method: 'eth_sendRawTransaction', params: [raw] })));
}

async function sizeRun(n: number, transfers: string) {
  const dir = mkdtempSync(join(tmpdir(), `dev-state-${n}-`));
  const genesis = join(dir, 'genesis.json');
  try {
    log(`N=${n}: writing genesis`);
    await writeGenesis(genesis, n);
    log(`N=${n}: starting the node`);
    const args = [
      '--genesis',
      genesis,
      '--dev',
      '--datadir',
      join(dir, 'data'),
      '--threads',
      '1',
      '--block-time-ms',
      '3600000',
      '--max-body-bytes',
      String(2 ** 30),
    ];
    const node = await spawnNode(args, undefined, undefined, 3_600_000);
    try {
      const url = node.url;
      await rpc(url, 'anvil_setIntervalMining', [0]);
      const reverts: number[] = [];
      const snapshots: number[] = [];
      for (let r = 0; r < ROUNDS; r++) {
        const [id, snapMs] = await timed(() => rpc<string>(url, 'evm_snapshot'));
        snapshots.push(snapMs);
        const sent = (await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: transfers }).then((x) => x.json())) as {
          error?: unknown;
        }[];
        if (sent.some((x) => x.error !== undefined)) throw new Error(`round ${r}: a transfer was refused`);
        await rpc(url, 'anvil_mine', ['0x2']);
        const [found, ms] = await timed(() => rpc<boolean>(url, 'evm_revert', [id]));
        if (found !== true) throw new Error(`round ${r}: evm_revert answered ${found}`);
        reverts.push(ms);
      }
      log(`N=${n}: revert p50 ${percentile(reverts, 50).toFixed(1)} ms; dumping`);
      const [dump, dumpMs] = await timed(() => rpc<string>(url, 'anvil_dumpState'));
      const [, loadMs] = await timed(() => rpc(url, 'anvil_loadState', [dump]));
      const [, sealMs] = await timed(() => rpc(url, 'anvil_mine', []));
      const rssMiB = Number(/VmHWM:\s+(\d+)/.exec(spawnSync('cat', [`/proc/${node.child.pid}/status`]).stdout.toString())?.[1] ?? 0) / 1024;
      return {
        n,
        snapshotMs: { p50: percentile(snapshots, 50), p99: percentile(snapshots, 99) },
        revertMs: { p50: percentile(reverts, 50), p99: percentile(reverts, 99), max: Math.max(...reverts) },
        dumpMs,
        dumpMiB: (dump.length - 2) / 2 / 2 ** 20,
        loadMs,
        sealAfterLoadMs: sealMs,
        peakRssMiB: Math.round(rssMiB),
      };
    } finally {
      await node.kill('SIGTERM');
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const transfers = await signTransfers();
const results = [];
for (const n of SIZES) results.push(await sizeRun(n, transfers));
const f = (x: number) => x.toFixed(1);
console.log(
  `| accounts + slots | evm_snapshot p50 / p99 | evm_revert p50 / p99 / max (${ROUNDS} rounds) | anvil_dumpState | dump (gzip) | anvil_loadState | seal after load | peak RSS |`,
);
console.log('|---|---|---|---|---|---|---|---|');
for (const r of results) {
  console.log(
    `| ${r.n.toLocaleString('en')} | ${f(r.snapshotMs.p50)} / ${f(r.snapshotMs.p99)} ms | ${f(r.revertMs.p50)} / ${f(r.revertMs.p99)} / ${f(r.revertMs.max)} ms | ${f(r.dumpMs)} ms | ${f(r.dumpMiB)} MiB | ${f(r.loadMs)} ms | ${f(r.sealAfterLoadMs)} ms | ${r.peakRssMiB} MiB |`,
  );
}
