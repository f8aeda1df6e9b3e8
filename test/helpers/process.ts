// Runs the real `preconf-node` command as a child process (for crash and restart tests).

import { spawn, type ChildProcess } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './anvil.js';

const bin = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'bin', 'preconf-node.cjs');

export interface NodeProcess {
  url: string;
  port: number;
  child: ChildProcess;
  output(): string;
  /** Resolves with the exit code (or signal name). */
  exited: Promise<number | string>;
}

export async function spawnNode(args: string[], port?: number): Promise<NodeProcess> {
  const p = port ?? (await freePort());
  const child = spawn(process.execPath, [bin, '--port', String(p), '--quiet', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  const url = `http://127.0.0.1:${p}`;
  const deadline = Date.now() + 30_000;
  while (!out.includes('Listening on')) {
    if (child.exitCode !== null) throw new Error(`node exited early:\n${out}`);
    if (Date.now() > deadline) throw new Error(`node did not start:\n${out}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return { url, port: p, child, output: () => out, exited };
}
