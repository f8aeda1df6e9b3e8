// An elected node that cannot produce gives the lease up. Three real nodes on a
// three-server NATS cluster, each with its store on a tmpfs of its own (mounted here; CI runs
// as root). The leader's disk fills up under load: it stops sealing, and once it has sealed
// nothing for a lease and two block times it releases the lease; a node that can build takes
// over and the chain goes on. The full node does not campaign while its store cannot write;
// once space is freed it writes the blocks it had sealed, follows the new leader and its
// store verifies. Nothing is forked, lost, duplicated or taken back.

import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkChain, Watchers } from '../helpers/cluster-check.js';
import { Senders } from '../helpers/traffic.js';
import { ClusterNodes } from '../helpers/cluster-nodes.js';
import { call, health } from '../helpers/replicas.js';
import { waitFor } from '../helpers/wait.js';

const bin = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'bin', 'preconf-node.cjs');
const isRoot = process.getuid?.() === 0;
const MIN_FREE_MB = 16;
const LEASE_MS = 1000;

describe.skipIf(!isRoot)('a cluster leader whose disk fills up (tmpfs, as root)', () => {
  const mounts = [0, 1, 2].map(() => mkdtempSync(join(tmpdir(), 'preconf-ha-disk-')));
  const mounted: string[] = [];
  let c: ClusterNodes | undefined;
  let senders: Senders | undefined;
  let watchers: Watchers | undefined;
  const urls = (): string[] => c!.running().map((i) => c!.url(i));
  const accepting = async (n: number): Promise<void> => {
    const from = senders!.accepted.size;
    await waitFor(() => senders!.accepted.size >= from + n, 30_000, `${n} more accepted transactions`, 50);
  };
  const metric = async (i: number, name: string): Promise<number> => {
    const text = await (await fetch(`${c!.url(i)}/metrics`)).text();
    const line = text.split('\n').find((l) => l.startsWith(`${name} `));
    return line === undefined ? Number.NaN : Number(line.split(' ')[1]);
  };

  beforeAll(async () => {
    for (const m of mounts) {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64m', 'tmpfs', m]);
      mounted.push(m);
      mkdirSync(join(m, 'data'));
    }
    c = await ClusterNodes.start({
      nodes: 3,
      leaseMs: LEASE_MS,
      args: ['--block-time-ms', '500', '--preconf-interval-ms', '100', '--min-free-disk-mb', String(MIN_FREE_MB)],
      datadir: (i) => join(mounts[i]!, 'data'),
    });
    await c.leader(30_000);
    senders = new Senders(urls, [0, 1, 2, 3, 4, 5], 100);
    watchers = new Watchers(urls);
    await accepting(30);
  }, 120_000);

  afterAll(async () => {
    await senders?.stop();
    await watchers?.stop();
    await c?.stop();
    for (const m of mounted) execFileSync('umount', [m]);
    for (const m of mounts) rmSync(m, { recursive: true, force: true });
  });

  it('releases the lease, another node leads, and the full node follows once it can write (twice)', async () => {
    for (let round = 0; round < 2; round++) {
      const full = await c!.leader(30_000);
      const others = [0, 1, 2].filter((i) => i !== full);
      const stalled = await metric(full, 'preconf_cluster_stalled_total');
      const mnt = mounts[full]!;
      const free = (): number => {
        const s = statfsSync(mnt);
        return s.bavail * s.bsize;
      };
      const filler = join(mnt, 'filler');
      writeFileSync(filler, Buffer.alloc(Math.max(0, free() - 4 * 1024 * 1024)));
      expect(free()).toBeLessThan(MIN_FREE_MB * 1024 * 1024);

      // Another node leads, and the full node names it and says why it is degraded.
      const next = await c!.leader(30_000, others);
      await waitFor(
        async () => {
          const h = (await health(c!.url(full))).body;
          return h.role === 'replica' && h.leader === `n${next}` && /disk full/.test(h.reason ?? '');
        },
        15_000,
        'the full node to follow the new leader and say its disk is full',
        50,
      );
      expect(await metric(full, 'preconf_cluster_stalled_total')).toBe(stalled + 1);
      // The chain goes on without it: transactions sent to every node are sealed.
      await accepting(50);
      expect((await health(c!.url(full))).body.role).toBe('replica');

      // Room again: it writes what it sealed, follows to the head, and is ready to lead.
      rmSync(filler);
      await waitFor(async () => (await health(c!.url(full))).status === 200, 30_000, 'the full node healthy again', 50);
      await accepting(30);
    }
    await senders!.stop();
    const report = await checkChain(urls(), new Set(senders!.accepted), watchers!);
    expect(report.forks, 'forks').toEqual([]);
    expect(report.lost, 'accepted transactions never sealed').toEqual([]);
    expect(report.duplicated, 'transactions sealed twice').toEqual([]);
    expect(report.reversed, 'pre-confirmations not sealed as shown').toEqual([]);
    expect(watchers!.backwards, 'pending went back').toEqual([]);

    // Every store holds every block its node showed: each verifies after a clean stop.
    for (const i of [0, 1, 2]) {
      expect(Number(await call<string>(c!.url(i), 'eth_blockNumber'))).toBeGreaterThan(0);
      expect(await c!.node(i).kill('SIGTERM')).toBe(0);
      const verify = spawnSync(process.execPath, [bin, 'verify', '--datadir', c!.dirs[i]!], { encoding: 'utf8' });
      expect(verify.stdout + verify.stderr, `node ${i}`).toContain('state root matches');
    }
  }, 180_000);
});
