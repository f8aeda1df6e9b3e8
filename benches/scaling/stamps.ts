// The pre-confirmation cadence on the builder's own clock: every newFlashblocks message
// carries `preconfTimestampMs`, stamped when the builder published it. The loadgen watcher
// (benches/cadence.ts) sees the cadence from outside, through an HTTP poll answered by the
// same busy core, so its intervals also hold the poll's delays; these do not.

import WebSocket from 'ws';
import { percentile } from '../util.js';

export interface Stamps {
  stop: () => { p50: number; p99: number; max: number; count: number };
}

export async function watchStamps(url: string): Promise<Stamps> {
  const socket = new WebSocket(url.replace('http', 'ws'));
  const stamps: number[] = [];
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.once('open', () => socket.send('{"jsonrpc":"2.0","id":1,"method":"eth_subscribe","params":["newFlashblocks"]}'));
    socket.on('message', (data) => {
      const msg = JSON.parse(data.toString()) as { id?: number; params?: { result: { preconfTimestampMs: number } } };
      if (msg.id === 1) return resolve();
      const at = msg.params?.result.preconfTimestampMs;
      if (typeof at === 'number') stamps.push(at);
    });
  });
  return {
    stop: () => {
      socket.close();
      const intervals = stamps.slice(1).map((t, i) => t - stamps[i]!);
      return { p50: percentile(intervals, 50), p99: percentile(intervals, 99), max: Math.max(...intervals), count: intervals.length };
    },
  };
}
