// Runs the real `preconf-node` command as a child process (for crash and restart tests).

import { spawn, type ChildProcess } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, killChild } from './child.js';

const bin = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'bin', 'preconf-node.cjs');

export interface NodeProcess {
  url: string;
  port: number;
  child: ChildProcess;
  output(): string;
  /** Resolves with the exit code (or signal name). */
  exited: Promise<number | string>;
  /** Sends `signal` unless the process already exited, and resolves once it has. */
  kill(signal?: NodeJS.Signals): Promise<number | string>;
}

/** How a one-shot command (`import`, `export`, `verify`) ended. */
export interface CommandExit {
  code: number | string;
  stdout: string;
  stderr: string;
}

/** Runs `preconf-node ARGS` to its end. */
export function runCommand(args: string[]): Promise<CommandExit> {
  return new Promise((ok) => {
    const child = spawn(process.execPath, [bin, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('exit', (code, signal) => ok({ code: code ?? signal ?? -1, stdout, stderr }));
  });
}

/** `startMs`: how long it may take to print its listening line (a large genesis takes minutes). */
export async function spawnNode(args: string[], port?: number, env?: Record<string, string>, startMs = 30_000): Promise<NodeProcess> {
  const p = port ?? (await freePort());
  const child = spawn(process.execPath, [bin, '--port', String(p), '--quiet', ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  let out = '';
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  // Started when it prints its listening line; failed when it exits or stays silent too long.
  const listening = new Promise<void>((resolve, reject) => {
    const onData = (d: Buffer): void => {
      out += d.toString();
      if (out.includes('Listening on')) resolve();
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    void exited.then((how) => reject(new Error(`node exited early (${how}):\n${out}`)));
  });
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`node did not start within ${startMs / 1000} s:\n${out}`)), startMs);
  });
  try {
    await Promise.race([listening, timeout]);
  } catch (e) {
    // Never leave a half-started node behind.
    await killChild(child, exited, 'SIGKILL');
    throw e;
  } finally {
    clearTimeout(timer);
  }
  const url = `http://127.0.0.1:${p}`;
  return { url, port: p, child, output: () => out, exited, kill: (signal = 'SIGKILL') => killChild(child, exited, signal) };
}
