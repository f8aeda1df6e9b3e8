// The addon boundary alone: eth_call / eth_estimateGas requests handed to the addon's
// `Chain` in-process, without HTTP or JSON-RPC parsing, to an address without code (so the
// EVM's share is as small as it gets and the request's crossing is most of the work).
// Compares the builds of several checkouts (each DIR needs dist/ and native/*.node):
// every measurement is a fresh process pinned to one core, and the checkouts alternate
// (A B, B A, ...), so drift on a shared machine hits both.
//
//   node --import tsx benches/boundary.ts --dirs /work/w23,/tmp/base [--rounds 6] [--seconds 4] [--core 0]

import { execFileSync } from 'node:child_process';
import { parseArgs } from 'node:util';
import { loadavg } from 'node:os';
import { percentile } from './util.js';

const REQUEST = {
  tx: {
    from: '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266',
    to: '0x00000000000000000000000000000000000c0de0',
    input: '0x70a08231000000000000000000000000f39fd6e51aad88f6f4ce6ab8827279cfffb92266',
  },
  block: 'latest',
};

interface BoundaryChain {
  call(request: object): Promise<string>;
  estimateGas(request: object): Promise<string>;
  close(): void;
}

/** Child mode: open an in-memory node from DIR's build and keep `inflight` requests going. */
async function measure(dir: string, method: 'call' | 'estimateGas', seconds: number, inflight: number): Promise<void> {
  const native = (await import(`${dir}/dist/native.js`)) as {
    Chain: { open(o: object): BoundaryChain };
    defaultChainOptions(): object;
  };
  const chain = native.Chain.open({ ...native.defaultChainOptions(), dev: true });
  let done = 0;
  const run = async (until: number, count: boolean) => {
    const worker = async () => {
      while (performance.now() < until) {
        await chain[method](REQUEST);
        if (count) done++;
      }
    };
    await Promise.all(Array.from({ length: inflight }, worker));
  };
  await run(performance.now() + 1000, false);
  const start = performance.now();
  await run(start + seconds * 1000, true);
  const rate = done / ((performance.now() - start) / 1000);
  chain.close();
  process.stdout.write(JSON.stringify({ rate }));
}

const { values } = parseArgs({
  options: {
    dirs: { type: 'string' },
    child: { type: 'string' },
    method: { type: 'string', default: 'call' },
    rounds: { type: 'string', default: '6' },
    seconds: { type: 'string', default: '4' },
    inflight: { type: 'string', default: '64' },
    core: { type: 'string', default: '0' },
  },
});

const method = values.method === 'estimate' || values.method === 'estimateGas' ? 'estimateGas' : 'call';
if (values.child) {
  await measure(values.child, method, Number(values.seconds), Number(values.inflight));
} else {
  const dirs = (values.dirs ?? '').split(',').filter(Boolean);
  if (dirs.length === 0) throw new Error('--dirs DIR[,DIR...] is required');
  const rates = new Map<string, number[]>(dirs.map((d) => [d, []]));
  const load = [loadavg()[0]!];
  for (let r = 0; r < Number(values.rounds); r++) {
    const order = r % 2 === 0 ? dirs : [...dirs].reverse();
    for (const dir of order) {
      const args = ['-c', values.core!, process.execPath, '--import', 'tsx', 'benches/boundary.ts', '--child', dir];
      args.push('--method', method, '--seconds', values.seconds!, '--inflight', values.inflight!);
      const out = execFileSync('taskset', args, { encoding: 'utf8' });
      rates.get(dir)!.push((JSON.parse(out) as { rate: number }).rate);
    }
    load.push(loadavg()[0]!);
  }
  const med = (d: string) => percentile(rates.get(d)!, 50);
  console.log(
    `${method}, ${values.rounds} rounds × ${values.seconds} s, ${values.inflight} in flight, pinned to core ${values.core}; load average (1 min) ${Math.min(...load).toFixed(1)}–${Math.max(...load).toFixed(1)}`,
  );
  console.log('| build | req/s median (min–max) | ÷ first |');
  console.log('|---|---|---|');
  for (const d of dirs) {
    const v = rates.get(d)!;
    console.log(`| ${d} | ${Math.round(med(d))} (${Math.round(Math.min(...v))}–${Math.round(Math.max(...v))}) | ${(med(d) / med(dirs[0]!)).toFixed(2)} |`);
  }
}
