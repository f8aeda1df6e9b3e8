// eth_simulateV1 on `pending`: a 1-block, 1-call bundle and a 10-block, 100-call bundle,
// at this node and at anvil in one run. req/s and p50/p99 with the Rust load generator.
//
//   node --import tsx benches/simulate.ts [--duration 5] [--connections 4]

import { toHex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { DEV_KEYS } from '../test/helpers/node.js';
import { buildLoadgen, runLoad } from './loadgen.js';
import { measured, startAnvil, startPreconfNode, type Server } from './servers.js';
import { rpc } from './util.js';

const from = privateKeyToAccount(DEV_KEYS[0]!).address;

/** `blocks` simulated blocks of `perBlock` value transfers each, with transfer tracing. */
function bundle(blocks: number, perBlock: number, tag: string, variant: number): string {
  const blockStateCalls = Array.from({ length: blocks }, (_, b) => ({
    calls: Array.from({ length: perBlock }, (_, c) => ({
      from,
      to: toHex(0x10000 + variant * 1000 + b * perBlock + c, { size: 20 }),
      value: toHex(1000 + c),
    })),
  }));
  return JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_simulateV1', params: [{ blockStateCalls, traceTransfers: true }, tag] });
}

async function main(): Promise<void> {
  const arg = (name: string, d: number) => {
    const i = process.argv.indexOf(name);
    return i === -1 ? d : Number(process.argv[i + 1]);
  };
  const duration = arg('--duration', 5);
  const connections = arg('--connections', 4);
  buildLoadgen();
  const servers: Server[] = [await startPreconfNode([]), await startAnvil()];
  const rows: string[] = [];
  try {
    for (const [label, blocks, perBlock] of [
      ['1 block, 1 call', 1, 1],
      ['10 blocks, 100 calls', 10, 10],
    ] as const) {
      for (const s of servers) {
        // anvil has no pre-confirmations: its `pending` is its latest block.
        const tag = 'pending';
        const bodies = Array.from({ length: 16 }, (_, v) => bundle(blocks, perBlock, tag, v));
        const check = await rpc<unknown[]>(s.url, 'eth_simulateV1', JSON.parse(bodies[0]!).params).catch((e: Error) => e);
        if (check instanceof Error) {
          rows.push(`| ${label} | ${s.name} | error: ${check.message.slice(0, 60)} | | | | |`);
          continue;
        }
        const { result, proc } = await measured(s.pid, () => runLoad({ url: s.url, bodies, connections, duration, warmup: 1, pipeline: 1 }));
        const l = result.latency_us;
        rows.push(
          `| ${label} | ${s.name} | ${Math.round(result.rps).toLocaleString('en-US')} | ${(l.p50 / 1000).toFixed(2)} / ${(l.p99 / 1000).toFixed(2)} | ${result.errors} | ${proc ? proc.cores.toFixed(2) : '-'} | ${proc ? proc.rssMiB.toFixed(0) : '-'} |`,
        );
      }
    }
  } finally {
    for (const s of servers) await s.stop();
  }
  console.log(`\n## eth_simulateV1 on pending (${connections} connections, ${duration} s each)\n`);
  console.log('| bundle | server | req/s | p50 / p99 ms | errors | server cores | RSS MiB |');
  console.log('|---|---|---|---|---|---|---|');
  for (const r of rows) console.log(r);
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
