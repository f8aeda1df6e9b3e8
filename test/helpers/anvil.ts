// Foundry's anvil from npm, as the reference node in differential tests.

import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { freePort, killChild } from './child.js';
import { waitFor } from './wait.js';

const require = createRequire(import.meta.url);

export function anvilBinary(): string {
  const pkg = require.resolve('@foundry-rs/anvil-linux-amd64/package.json');
  return join(dirname(pkg), 'bin', 'anvil');
}

export { freePort } from './child.js';

export interface Anvil {
  url: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

export async function startAnvil(args: string[] = []): Promise<Anvil> {
  const port = await freePort();
  const child = spawn(anvilBinary(), ['--port', String(port), '--host', '127.0.0.1', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  const url = `http://127.0.0.1:${port}`;
  const answers = async (): Promise<boolean> => {
    if (child.exitCode !== null) throw new Error(`anvil exited: ${output}`);
    try {
      const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}' });
      return r.ok;
    } catch {
      return false; // not listening yet
    }
  };
  try {
    await waitFor(answers, 20_000, 'anvil to answer eth_chainId', 100);
  } catch (e) {
    await killChild(child, exited, 'SIGKILL');
    throw new Error(`anvil did not start: ${(e as Error).message}\n${output}`);
  }
  return {
    url,
    process: child,
    // SIGTERM, and SIGKILL if it has not exited within 5 s.
    stop: async () => {
      const timer = setTimeout(() => void killChild(child, exited, 'SIGKILL'), 5_000);
      await killChild(child, exited, 'SIGTERM');
      clearTimeout(timer);
    },
  };
}
