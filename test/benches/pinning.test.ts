// The benchmark's CPU pinning and baseline checks, against the real taskset and /proc.

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { assertPinned, checkPinning, parseCpuList, pinnedCommand, PinningError, threadAffinities } from '../../benches/pinning.js';
import { baselines, BaselineError } from '../../benches/targets.js';
import { ROOT } from '../../benches/util.js';
import { waitFor } from '../helpers/wait.js';

describe('CPU lists', () => {
  it('reads the kernel format', () => {
    expect(parseCpuList('1')).toEqual([1]);
    expect(parseCpuList('0-2,5')).toEqual([0, 1, 2, 5]);
    expect(parseCpuList('3,1,1-2')).toEqual([1, 2, 3]);
  });

  it('rejects what is not one', () => {
    for (const bad of ['', 'a', '2-1', '1;2', '-1']) expect(() => parseCpuList(bad)).toThrow(PinningError);
  });
});

describe('pinning', () => {
  it('refuses a server core inside the load cores, or a core that is not there', () => {
    expect(() => checkPinning({ serverCore: 0, loadCores: [0] })).toThrow(/must differ/);
    expect(() => checkPinning({ serverCore: 4096, loadCores: [0] })).toThrow(/not available/);
  });

  it('runs a command on the core asked for, every thread, and reads it back', async () => {
    const [cmd, args] = pinnedCommand([0], process.execPath, ['-e', 'setTimeout(() => {}, 30000)']);
    const child = spawn(cmd, args, { stdio: 'ignore' });
    try {
      // taskset execs the command: once the pid is node, the affinity is set.
      await waitFor(() => isNode(child.pid!), 10_000, 'node to start under taskset');
      expect(threadAffinities(child.pid!)).toEqual([[0]]);
      expect(() => assertPinned('probe', child.pid!, [0])).not.toThrow();
      expect(() => assertPinned('probe', child.pid!, [0, 1])).toThrow(PinningError);
    } finally {
      child.kill('SIGTERM');
      await once(child, 'exit');
    }
  });
});

/** Whether `pid` runs node yet (before taskset has exec'd it, it runs taskset). */
function isNode(pid: number): boolean {
  return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0] === process.execPath;
}

describe('baselines', () => {
  it('names a built checkout by its commit and tells two of the same apart', () => {
    const [a, b] = baselines([ROOT, ROOT]);
    expect(a!.name).toBe(`baseline (${a!.checkout.commit})`);
    expect(a!.checkout.commit).toMatch(/^[0-9a-f]{7,}$/);
    expect(b!.name).not.toBe(a!.name);
    expect(b!.root).toBe(ROOT);
  });

  it('refuses a directory without a built node', () => {
    expect(() => baselines([`${ROOT}/benches`])).toThrow(BaselineError);
  });
});
