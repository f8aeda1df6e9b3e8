// WebSocket fan-out: S subscribers to newFlashblocks while transactions flow. Reports the
// delay from publish (the pre-confirmation's `preconfTimestampMs`, stamped by the builder
// when it became visible) to delivery at each subscriber, p50/p99, ordering gaps, and the
// server's CPU next to the same transaction flow without subscribers.
//
//   node --import tsx benches/ws-fanout.ts [--subscribers 1000] [--duration 10] [--tx-rate 50]

import WebSocket from 'ws';
import { parseGwei, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { DEV_KEYS } from '../test/helpers/node.js';
import { measured, startPreconfNode, type Server } from './servers.js';
import { percentile, rpcRaw, sleep } from './util.js';

interface Options {
  subscribers: number;
  durationS: number;
  txRate: number;
}

function options(argv: string[]): Options {
  const o: Options = { subscribers: 1000, durationS: 10, txRate: 50 };
  for (let i = 0; i < argv.length; i++) {
    const v = Number(argv[i + 1]);
    if (argv[i] === '--subscribers') o.subscribers = v;
    else if (argv[i] === '--duration') o.durationS = v;
    else if (argv[i] === '--tx-rate') o.txRate = v;
    else continue;
    i++;
  }
  return o;
}

/** Sends pre-signed transfers at `rate` per second for `seconds`. */
async function flow(server: Server, raws: Hex[], rate: number, seconds: number): Promise<number> {
  const start = performance.now();
  let sent = 0;
  while (performance.now() - start < seconds * 1000 && sent < raws.length) {
    const due = Math.floor(((performance.now() - start) / 1000) * rate);
    const batch = [];
    while (sent < due && sent < raws.length) {
      batch.push({ jsonrpc: '2.0', id: sent, method: 'eth_sendRawTransaction', params: [raws[sent]] });
      sent++;
    }
    if (batch.length > 0) await rpcRaw(server.url, JSON.stringify(batch));
    await sleep(5);
  }
  return sent;
}

async function signTransfers(count: number, from: number): Promise<Hex[]> {
  const acct = privateKeyToAccount(DEV_KEYS[from]!);
  const out: Hex[] = [];
  for (let n = 0; n < count; n++) {
    out.push(
      await acct.signTransaction({
        chainId: 31337,
        type: 'eip1559',
        to: acct.address,
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

interface Delivery {
  delays: number[];
  gaps: number;
  messages: number;
}

async function subscribe(wsUrl: string, n: number, stats: Delivery): Promise<WebSocket[]> {
  const sockets: WebSocket[] = [];
  for (let i = 0; i < n; i++) {
    const ws = new WebSocket(wsUrl);
    let last: [bigint, bigint] | null = null;
    await new Promise<void>((resolve, reject) => {
      ws.once('error', reject);
      ws.once('open', () => {
        ws.send('{"jsonrpc":"2.0","id":1,"method":"eth_subscribe","params":["newFlashblocks"]}');
      });
      ws.on('message', (data) => {
        const msg = JSON.parse(data.toString()) as { id?: number; params?: { result: { number: string; preconfIndex: string; preconfTimestampMs: number } } };
        if (msg.id === 1) return resolve();
        const b = msg.params?.result;
        if (!b) return;
        stats.messages++;
        stats.delays.push(Date.now() - b.preconfTimestampMs);
        const cur: [bigint, bigint] = [BigInt(b.number), BigInt(b.preconfIndex)];
        if (last) {
          const next = (cur[0] === last[0] && cur[1] === last[1] + 1n) || (cur[0] === last[0] + 1n && cur[1] === 1n);
          if (!next) stats.gaps++;
        }
        last = cur;
      });
    });
    sockets.push(ws);
  }
  return sockets;
}

async function main(): Promise<void> {
  const o = options(process.argv.slice(2));
  const server = await startPreconfNode([]);
  const wsUrl = server.url.replace('http', 'ws');
  try {
    const perPhase = Math.ceil(o.txRate * o.durationS) + 10;
    const [rawsA, rawsB] = await Promise.all([signTransfers(perPhase, 8), signTransfers(perPhase, 9)]);
    const baseline = await measured(server.pid, () => flow(server, rawsA, o.txRate, o.durationS));

    const stats: Delivery = { delays: [], gaps: 0, messages: 0 };
    const sockets = await subscribe(wsUrl, o.subscribers, stats);
    stats.delays.length = 0;
    stats.messages = 0;
    stats.gaps = 0;
    const clientBefore = process.cpuUsage();
    const t0 = performance.now();
    const loaded = await measured(server.pid, () => flow(server, rawsB, o.txRate, o.durationS));
    const wall = (performance.now() - t0) / 1000;
    const client = process.cpuUsage(clientBefore);
    for (const s of sockets) s.terminate();

    const fmt = (x: number) => (Number.isFinite(x) ? x.toFixed(2) : '-');
    console.log(`\n## WebSocket fan-out: ${o.subscribers} newFlashblocks subscribers, ${o.txRate} tx/s for ${o.durationS} s\n`);
    console.log('| phase | tx sent | server CPU (cores) | server RSS MiB | deliveries | delay p50 ms | delay p99 ms | delay max ms | gaps |');
    console.log('|---|---|---|---|---|---|---|---|---|');
    console.log(`| no subscribers | ${baseline.result} | ${fmt(baseline.proc?.cores ?? NaN)} | ${fmt(baseline.proc?.rssMiB ?? NaN)} | - | - | - | - | - |`);
    console.log(
      `| ${o.subscribers} subscribers | ${loaded.result} | ${fmt(loaded.proc?.cores ?? NaN)} | ${fmt(loaded.proc?.rssMiB ?? NaN)} | ${stats.messages} | ${percentile(stats.delays, 50)} | ${percentile(stats.delays, 99)} | ${Math.max(...stats.delays)} | ${stats.gaps} |`,
    );
    console.log(
      `\nClient (all ${o.subscribers} sockets in this one process) used ${((client.user + client.system) / 1e6 / wall).toFixed(2)} cores; delays include its queueing.`,
    );
  } finally {
    await server.stop();
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
