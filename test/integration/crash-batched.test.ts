// When the disk falls behind the block time, the committer writes the sealed
// blocks that queued up in one transaction. A real slow disk here: the node's writes are
// throttled to a few IOPS (a cgroup v1 blkio limit, as root), so each fsync takes 100 ms or
// more while blocks seal every 50 ms. kill -9 lands while several blocks are in flight; every
// time the store verifies, keeps every block the node called safe, and no transaction the
// node accepted is lost (it is in a block, or back in the pool from the journal).

import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Hex } from 'viem';
import { afterAll, describe, expect, it } from 'vitest';
import { devAccount, rpc } from '../helpers/node.js';
import { spawnNode, type NodeProcess } from '../helpers/process.js';
import { scrape, valueOf } from '../helpers/prometheus.js';
import { waitFor } from '../helpers/wait.js';
import { sendUntilStopped } from '../helpers/transfer.js';

const bin = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'bin', 'preconf-node.cjs');
const BLKIO = '/sys/fs/cgroup/blkio';
const canThrottle = process.getuid?.() === 0 && existsSync(join(BLKIO, 'blkio.throttle.write_iops_device'));

describe.skipIf(!canThrottle)('kill -9 with several sealed blocks waiting for a slow disk', () => {
  const datadir = mkdtempSync(join(tmpdir(), 'preconf-crash-batched-'));
  const group = join(BLKIO, `preconf-test-${process.pid}`);
  let node: NodeProcess | undefined;
  afterAll(async () => {
    await node?.kill('SIGKILL');
    if (existsSync(group)) rmdirSync(group);
    rmSync(datadir, { recursive: true, force: true });
  });

  it('batched commits: the store verifies, safe blocks stay, accepted transactions survive', async () => {
    // The block device under the datadir, throttled for the processes put in the group.
    const dev = statSync(datadir).dev;
    const device = `${Math.floor(dev / 256) & 0xfff}:${(dev & 0xff) | ((dev >> 12) & 0xfff00)}`;
    mkdirSync(group, { recursive: true });
    writeFileSync(join(group, 'blkio.throttle.write_iops_device'), `${device} 20`);
    const senders = [1, 2, 3].map(devAccount);
    const accepted: Hex[] = [];
    for (let round = 0; round < 3; round++) {
      node = await spawnNode(['--datadir', datadir, '--block-time-ms', '50', '--preconf-interval-ms', '25']);
      writeFileSync(join(group, 'cgroup.procs'), String(node.child.pid));
      const url = node.url;
      const nonces = await Promise.all(senders.map(async (s) => Number(BigInt((await rpc(url, 'eth_getTransactionCount', [s.address, 'pending'])).result))));
      const load = sendUntilStopped(url, senders, nonces, (h) => accepted.push(h));
      // Wait until commits hold several blocks and several sealed blocks are not durable yet.
      const state = async () => {
        const f = (await scrape(url)).families;
        const batched = valueOf(f, 'preconf_store_commit_blocks_count') - valueOf(f, 'preconf_store_commit_blocks_bucket', { le: '1' });
        return { batched, inFlight: valueOf(f, 'preconf_head_block') - valueOf(f, 'preconf_durable_block') };
      };
      const seen = await waitFor(
        async () => {
          const s = await state();
          return s.batched > 0 && s.inFlight >= 2 ? s : null;
        },
        30_000,
        'a commit of several blocks and two or more blocks in flight',
      );
      expect(seen.batched).toBeGreaterThan(0);
      const durable = BigInt((await rpc(url, 'eth_getBlockByNumber', ['safe', false])).result.number);
      await node.kill('SIGKILL');
      await load.stop();

      const verify = spawnSync(process.execPath, [bin, 'verify', '--datadir', datadir], { encoding: 'utf8' });
      expect(verify.stdout + verify.stderr, `round ${round}`).toContain('state root matches');
      const head = BigInt(/head block (\d+)/.exec(verify.stdout)![1]!);
      expect(head, `round ${round}: every block reported safe was kept`).toBeGreaterThanOrEqual(durable);
    }
    // Unthrottled now: every accepted transaction is sealed after the restart (journal replay).
    node = await spawnNode(['--datadir', datadir, '--block-time-ms', '50', '--preconf-interval-ms', '25']);
    const url = node.url;
    for (const hash of accepted) {
      await waitFor(async () => (await rpc(url, 'eth_getTransactionReceipt', [hash])).result, 10_000, `receipt of ${hash}`);
    }
    expect(accepted.length).toBeGreaterThan(3);
  }, 120_000);
});
