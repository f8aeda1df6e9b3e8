// What bench:interval watches while the load runs: newFlashblocks on the leader and on a
// replica (the builder's stamp and the arrival here of each pre-confirmation), the hash
// stream (when each transaction became visible as pending), and the node's threads' CPU.

import { readdirSync, readFileSync } from 'node:fs';
import WebSocket from 'ws';

/** Wall-clock milliseconds (the loadgen reports unix microseconds; this compares with them). */
export const nowMs = (): number => performance.timeOrigin + performance.now();

export interface Preconf {
  key: string;
  /** When the builder published it (`preconfTimestampMs`). */
  stamped: number;
  /** When it reached this process. */
  arrived: number;
}

export interface Streams {
  preconfs: Preconf[];
  /** Transaction hash -> when its announcement reached this process. */
  pendingAt: Map<string, number>;
  close(): void;
}

// newFlashblocks messages carry the whole block; the three fields are read without parsing it.
const field = (text: string, name: string): string | undefined => new RegExp(`"${name}":"?([0-9a-fx]+)`).exec(text)?.[1];

/** Subscribes on `url`: newFlashblocks always, the hash stream when `hashes`. */
export async function watchStreams(url: string, hashes: boolean): Promise<Streams> {
  const socket = new WebSocket(url.replace('http', 'ws'));
  const preconfs: Preconf[] = [];
  const pendingAt = new Map<string, number>();
  const ids = new Map<string, 'blocks' | 'hashes'>();
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.once('open', () => {
      socket.send('{"jsonrpc":"2.0","id":1,"method":"eth_subscribe","params":["newFlashblocks"]}');
      if (hashes) socket.send('{"jsonrpc":"2.0","id":2,"method":"eth_subscribe","params":["newFlashblockTransactions"]}');
    });
    socket.on('message', (data) => {
      const arrived = nowMs();
      const text = data.toString();
      if (text.startsWith('{"jsonrpc":"2.0","id":')) {
        const msg = JSON.parse(text) as { id: number; result: string };
        ids.set(msg.result, msg.id === 1 ? 'blocks' : 'hashes');
        if (ids.size === (hashes ? 2 : 1)) resolve();
        return;
      }
      const sub = /"subscription":"(0x[0-9a-f]+)"/.exec(text)?.[1] ?? '';
      if (ids.get(sub) === 'hashes') {
        const h = /"result":"(0x[0-9a-f]+)"/.exec(text)?.[1];
        if (h) pendingAt.set(h, arrived);
        return;
      }
      const [number, index, stamp] = [field(text, 'number'), field(text, 'preconfIndex'), field(text, 'preconfTimestampMs')];
      if (number && index && stamp) preconfs.push({ key: `${Number(number)}.${Number(index)}`, stamped: Number(stamp), arrived });
    });
  });
  return { preconfs, pendingAt, close: () => socket.terminate() };
}

/** CPU seconds (user + system) of each thread of `pid`, by thread name. */
export function threadCpu(pid: number): Map<string, number> {
  const tick = 100; // USER_HZ on Linux
  const out = new Map<string, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const seconds = (Number(fields[11]) + Number(fields[12])) / tick;
      // Worker threads share names: add them up per name.
      out.set(name, (out.get(name) ?? 0) + seconds);
    } catch {
      // a thread that ended meanwhile
    }
  }
  return out;
}

/** CPU seconds per thread name between two samples, largest first. */
export function cpuDelta(before: Map<string, number>, after: Map<string, number>): [string, number][] {
  return [...after]
    .map(([n, s]) => [n, s - (before.get(n) ?? 0)] as [string, number])
    .filter(([, s]) => s > 0)
    .sort((a, b) => b[1] - a[1]);
}

/** Sum and count of every histogram the node's /metrics shows, by name. */
export async function histogramMeans(url: string): Promise<Map<string, { sum: number; count: number }>> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const out = new Map<string, { sum: number; count: number }>();
  for (const m of text.matchAll(/^(\w+)_(sum|count) ([0-9.e+-]+)$/gm)) {
    const h = out.get(m[1]!) ?? { sum: 0, count: 0 };
    h[m[2] as 'sum' | 'count'] = Number(m[3]);
    out.set(m[1]!, h);
  }
  return out;
}

/** Consecutive differences of `xs` (already in order). */
export const gaps = (xs: number[]): number[] => xs.slice(1).map((x, i) => x - xs[i]!);
