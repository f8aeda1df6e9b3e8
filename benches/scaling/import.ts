// `node --import tsx benches/scaling/import.ts --sizes 1000000,10000000`: the genesis import
// alone (a fresh node on a large genesis must start in minutes). For each N: a genesis of N
// accounts plus a token with N slots (the scaling bench's), then the first start of a node on
// it, timed until it listens, with the process's peak RSS (VmHWM) and the store's size. The
// genesis file is kept in --dir between runs of the same N (writing 10 M accounts takes
// minutes).

import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../util.js';
import { writeGenesis } from './genesis.js';

const arg = (name: string, dflt: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1]! : dflt;
};
const SIZES = arg('sizes', '1000000').split(',').map(Number);
const DIR = arg('dir', '/work/.bench-genesis');
const log = (m: string) => process.stderr.write(`[import] ${m}\n`);

function peakRssMiB(pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Math.round(Number(m[1]) / 1024) : Number.NaN;
}

async function firstStart(genesis: string, datadir: string): Promise<{ seconds: number; peakRssMiB: number }> {
  const t0 = performance.now();
  const child = spawn(process.execPath, [join(ROOT, 'bin', 'preconf-node.cjs'), '--port', '0', '--quiet', '--genesis', genesis, '--datadir', datadir], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  let peak = 0;
  const sampler = setInterval(() => {
    try {
      peak = Math.max(peak, peakRssMiB(child.pid!));
    } catch {
      // exited
    }
  }, 1000);
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('Listening on')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`the node exited with ${code}: ${out.slice(-2000)}`)));
  });
  const seconds = (performance.now() - t0) / 1000;
  peak = Math.max(peak, peakRssMiB(child.pid!));
  clearInterval(sampler);
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  return { seconds, peakRssMiB: peak };
}

async function main() {
  mkdirSync(DIR, { recursive: true });
  const rows: string[] = [];
  for (const n of SIZES) {
    const genesis = join(DIR, `genesis-${n}.json`);
    if (!existsSync(genesis)) {
      log(`N=${n}: writing ${genesis}`);
      await writeGenesis(genesis, n);
    }
    const datadir = join(DIR, `data-${n}`);
    rmSync(datadir, { recursive: true, force: true });
    log(`N=${n}: first start`);
    const r = await firstStart(genesis, datadir);
    const store = statSync(join(datadir, 'chain.redb')).size;
    rmSync(datadir, { recursive: true, force: true });
    log(`N=${n}: ${r.seconds.toFixed(1)} s, peak RSS ${r.peakRssMiB} MiB, store ${(store / 2 ** 20).toFixed(0)} MiB`);
    rows.push(
      `| ${n.toLocaleString('en')} + ${n.toLocaleString('en')} | ${(statSync(genesis).size / 2 ** 20).toFixed(0)} MiB | ${r.seconds.toFixed(1)} s | ${r.peakRssMiB} MiB | ${(store / 2 ** 20).toFixed(0)} MiB |`,
    );
  }
  console.log('| accounts + slots | genesis file | first start (import) | peak RSS | store |');
  console.log('|---|---|---|---|---|');
  for (const r of rows) console.log(r);
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
