// The servers under test, started as child processes on free loopback ports, and what
// /proc says about them (RSS, peak RSS, CPU time).

import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { anvilBinary, freePort } from '../test/helpers/anvil.js';
import { assertPinned, pinnedCommand } from './pinning.js';
import { ROOT, sleep } from './util.js';

export type ServerKind = 'current' | 'baseline' | 'anvil' | 'external' | 'calibration' | 'floor';

export interface Server {
  name: string;
  kind: ServerKind;
  url: string;
  pid: number | null;
  /** Our node: has pre-confirmations, so the cadence scenario applies. */
  preconf: boolean;
  stop(): Promise<void>;
}

/** Where a server runs: its checkout (cwd) and, when pinned, its CPU cores. */
interface Placement {
  cwd: string;
  cores: number[] | null;
}

async function startProcess(name: string, cmd: string, args: string[], url: string, at: Placement): Promise<ChildProcess> {
  const [c, a] = at.cores ? pinnedCommand(at.cores, cmd, args) : [cmd, args];
  const child = spawn(c, a, { cwd: at.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${name} exited early:\n${out}`);
    if (Date.now() > deadline) {
      child.kill('SIGTERM');
      throw new Error(`${name} did not start:\n${out}`);
    }
    try {
      const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}' });
      if (r.ok) break;
    } catch {
      // not listening yet
    }
    await sleep(50);
  }
  if (at.cores && child.pid !== undefined) {
    try {
      assertPinned(name, child.pid, at.cores);
    } catch (e) {
      child.kill('SIGTERM');
      throw e;
    }
  }
  return child;
}

function stopper(child: ChildProcess): () => Promise<void> {
  return () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
}

export interface NodeTarget {
  name: string;
  kind: 'current' | 'baseline';
  /** The checkout whose bin/, dist/ and native/ run. */
  root: string;
}

const THIS_NODE: NodeTarget = { name: 'preconf-node', kind: 'current', root: ROOT };

/** Our node from `target.root` (this checkout by default), on a free loopback port. */
export async function startPreconfNode(extraArgs: string[], target: NodeTarget = THIS_NODE, cores: number[] | null = null): Promise<Server> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const args = [join(target.root, 'bin', 'preconf-node.cjs'), '--ephemeral', '--port', String(port), '--quiet', ...extraArgs];
  const child = await startProcess(target.name, process.execPath, args, url, { cwd: target.root, cores });
  return { name: target.name, kind: target.kind, url, pid: child.pid ?? null, preconf: true, stop: stopper(child) };
}

export async function startAnvil(cores: number[] | null = null): Promise<Server> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const args = ['--port', String(port), '--host', '127.0.0.1', '--hardfork', 'prague', '--silent'];
  const child = await startProcess('anvil', anvilBinary(), args, url, { cwd: ROOT, cores });
  return { name: 'anvil', kind: 'anvil', url, pid: child.pid ?? null, preconf: false, stop: stopper(child) };
}

export async function startCalibrationServer(cores: number[] | null = null): Promise<Server> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const args = ['--import', 'tsx', join(ROOT, 'benches', 'calibrate-server.ts'), String(port)];
  const child = await startProcess('calibration server', process.execPath, args, url, { cwd: ROOT, cores });
  return { name: 'uWS calibration', kind: 'calibration', url, pid: child.pid ?? null, preconf: false, stop: stopper(child) };
}

/** The floor (benches/floor-server.ts): parses each body and answers a fixed result. */
export async function startFloorServer(cores: number[] | null = null): Promise<Server> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const args = ['--import', 'tsx', join(ROOT, 'benches', 'floor-server.ts'), String(port)];
  const child = await startProcess('floor', process.execPath, args, url, { cwd: ROOT, cores });
  return { name: 'floor', kind: 'floor', url, pid: child.pid ?? null, preconf: false, stop: stopper(child) };
}

export interface ProcSnapshot {
  rssMiB: number;
  hwmMiB: number;
  cpuS: number; // user + system seconds since the process started
  threads: number;
}

/** /proc/PID/status and /proc/PID/stat of a server; null when unknown or gone. */
export function procSnapshot(pid: number | null): ProcSnapshot | null {
  if (pid === null) return null;
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 'NaN');
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]); // utime + stime, USER_HZ = 100
    return {
      rssMiB: kb('VmRSS') / 1024,
      hwmMiB: kb('VmHWM') / 1024,
      cpuS: ticks / 100,
      threads: Number(/^Threads:\s+(\d+)/m.exec(status)?.[1] ?? 'NaN'),
    };
  } catch {
    return null;
  }
}

/** Busy CPU seconds since boot (/proc/stat): all cores together, and each core. */
function busyS(): { all: number; perCore: number[] } {
  const busy = (line: string) => {
    const [user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number);
    return ((user ?? 0) + (nice ?? 0) + (system ?? 0) + (irq ?? 0) + (softirq ?? 0) + (steal ?? 0)) / 100;
  };
  const lines = readFileSync('/proc/stat', 'utf8').split('\n');
  const perCore: number[] = [];
  for (const l of lines) {
    const m = /^cpu(\d+)\s/.exec(l);
    if (m) perCore[Number(m[1])] = busy(l);
  }
  return { all: busy(lines[0]!), perCore };
}

/** Runs `work` and reports the server's RSS after it and the cores it used meanwhile. */
export async function measured<T>(pid: number | null, work: () => Promise<T>): Promise<{ result: T; proc: ProcUsage | null }> {
  const before = procSnapshot(pid);
  const machine0 = busyS();
  const driver0 = process.cpuUsage();
  const t0 = performance.now();
  const result = await work();
  const wall = (performance.now() - t0) / 1000;
  const after = procSnapshot(pid);
  const machine1 = busyS();
  const driver = process.cpuUsage(driver0);
  const proc =
    before && after
      ? {
          rssMiB: after.rssMiB,
          hwmMiB: after.hwmMiB,
          cores: (after.cpuS - before.cpuS) / wall,
          machineCores: (machine1.all - machine0.all) / wall,
          coreBusy: machine1.perCore.map((b, i) => (b - (machine0.perCore[i] ?? b)) / wall),
          driverCores: (driver.user + driver.system) / 1e6 / wall,
        }
      : null;
  return { result, proc };
}

export interface ProcUsage {
  rssMiB: number;
  hwmMiB: number;
  /** Server CPU seconds per wall second during the scenario (warm-up included). */
  cores: number;
  /** All CPUs' busy seconds per wall second, whoever used them. */
  machineCores: number;
  /** Each CPU's busy fraction (index = CPU number): shows whether the pinned cores saturated. */
  coreBusy?: number[];
  /** This driver process's CPU per wall second. */
  driverCores: number;
}
