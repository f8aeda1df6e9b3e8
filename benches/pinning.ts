// CPU pinning with taskset (util-linux): every server under test runs on one core, the load
// generator and this driver on the others, so that servers compete with neither the load
// nor each other's scheduling luck. The benchmark refuses to run unpinned.

import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

export class PinningError extends Error {
  override name = 'PinningError';
}

export interface Pinning {
  serverCore: number;
  loadCores: number[];
}

/** "0-2,4" → [0, 1, 2, 4] (the kernel's list format, as taskset -c and /proc print it). */
export function parseCpuList(text: string): number[] {
  const out = new Set<number>();
  for (const part of text.trim().split(',').filter(Boolean)) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part.trim());
    if (!m) throw new PinningError(`not a CPU list: "${text}" (expected e.g. 1 or 1-3 or 1,3)`);
    const [lo, hi] = [Number(m[1]), Number(m[2] ?? m[1])];
    if (hi < lo) throw new PinningError(`not a CPU list: "${text}" (${lo}-${hi} is empty)`);
    for (let c = lo; c <= hi; c++) out.add(c);
  }
  if (out.size === 0) throw new PinningError(`empty CPU list: "${text}"`);
  return [...out].sort((a, b) => a - b);
}

export const cpuList = (cores: number[]): string => cores.join(',');

/** The CPUs a thread may run on, from /proc/PID[/task/TID]/status. */
function allowedList(statusPath: string): number[] {
  const m = /^Cpus_allowed_list:\s*(\S+)/m.exec(readFileSync(statusPath, 'utf8'));
  if (!m) throw new PinningError(`no Cpus_allowed_list in ${statusPath}`);
  return parseCpuList(m[1]!);
}

/** Every distinct CPU set among a process's threads (one entry when all agree). */
export function threadAffinities(pid: number | 'self'): number[][] {
  const seen = new Map<string, number[]>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const cpus = allowedList(`/proc/${pid}/task/${tid}/status`);
      seen.set(cpuList(cpus), cpus);
    } catch (e) {
      if (e instanceof PinningError) throw e; // a thread that ended meanwhile is fine
    }
  }
  return [...seen.values()];
}

/** Fails unless taskset runs and the cores exist for this process and do not overlap. */
export function checkPinning(p: Pinning): void {
  try {
    execFileSync('taskset', ['--version'], { stdio: 'ignore' });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new PinningError(
      code === 'ENOENT'
        ? 'taskset not found: install util-linux (Debian: apt-get install util-linux). The benchmark pins ' +
            'servers and load to separate cores and does not run unpinned.'
        : `taskset --version failed: ${(e as Error).message}`,
    );
  }
  const allowed = new Set(allowedList('/proc/self/status'));
  for (const c of [p.serverCore, ...p.loadCores]) {
    if (!allowed.has(c)) throw new PinningError(`core ${c} is not available here (allowed: ${cpuList([...allowed])})`);
  }
  if (p.loadCores.includes(p.serverCore)) {
    throw new PinningError(`--server-core ${p.serverCore} is also in --load-cores ${cpuList(p.loadCores)}: they must differ`);
  }
}

/** Pins every thread of this process (the driver); threads and children started later inherit it. */
export function pinSelf(cores: number[]): void {
  execFileSync('taskset', ['-a', '-p', '-c', cpuList(cores), String(process.pid)], { stdio: 'ignore' });
  const now = threadAffinities('self');
  if (now.length !== 1 || cpuList(now[0]!) !== cpuList(cores)) {
    throw new PinningError(`pinning the driver to ${cpuList(cores)} did not hold: ${now.map(cpuList).join(' | ')}`);
  }
}

/** The command line that runs `cmd` on `cores` (taskset execs it: same pid). */
export function pinnedCommand(cores: number[], cmd: string, args: string[]): [string, string[]] {
  return ['taskset', ['-c', cpuList(cores), cmd, ...args]];
}

/** Fails unless every thread of `pid` is confined to exactly `cores`. */
export function assertPinned(name: string, pid: number, cores: number[]): void {
  const sets = threadAffinities(pid);
  const want = cpuList(cores);
  if (sets.length !== 1 || cpuList(sets[0]!) !== want) {
    throw new PinningError(`${name} (pid ${pid}) runs on ${sets.map(cpuList).join(' | ')}, expected ${want}`);
  }
}

/** What a process may run on, for the report; null when it is gone or unknown. */
export function describeAffinity(pid: number | null): string | null {
  if (pid === null) return null;
  try {
    return threadAffinities(pid).map(cpuList).join(' | ');
  } catch {
    return null;
  }
}
