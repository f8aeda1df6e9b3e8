// Starts test/helpers/upstream-proxy.mjs (a counting, fault-injecting proxy in front of a
// fork's upstream) as a child process, and drives it.

import { spawn, type ChildProcess } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

export interface ProxyStats {
  requests: number;
  calls: number;
  methods: Record<string, number>;
}

export interface UpstreamProxy {
  url: string;
  /** The same proxy over WebSocket. */
  wsUrl: string;
  port: number;
  stats(): Promise<ProxyStats>;
  reset(): Promise<void>;
  control(c: { mode?: 'pass' | 'stall' | '429' | 'drop'; delayMs?: number; fail?: number; hide?: string[] }): Promise<void>;
  stop(): Promise<void>;
}

/** `port`: listen there (a proxy started again where a stopped one was); default, a free one. */
export async function startUpstreamProxy(upstream: string, delayMs = 0, port = 0): Promise<UpstreamProxy> {
  const child: ChildProcess = spawn(process.execPath, [join(here, 'upstream-proxy.mjs'), upstream, String(delayMs), String(port)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const listening = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening (\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`proxy exited ${code}: ${out}`)));
  });
  const url = `http://127.0.0.1:${listening}`;
  const post = async (path: string, body = '{}') => (await fetch(url + path, { method: 'POST', body })).text();
  return {
    url,
    wsUrl: `ws://127.0.0.1:${listening}`,
    port: listening,
    stats: async () => JSON.parse(await post('/__stats')) as ProxyStats,
    reset: async () => void (await post('/__reset')),
    control: async (c) => void (await post('/__control', JSON.stringify(c))),
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGKILL');
      await exited;
    },
  };
}
