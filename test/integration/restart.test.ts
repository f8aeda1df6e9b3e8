// Start-up does not grow with the state. redb treats a store that was not closed
// as crashed and walks the whole file on the next open; the process exits without dropping
// the database (JavaScript owns the node), so a clean stop must leave the store in a state
// that opens without that walk. A kill -9 still gets the full check, which is what the
// second half proves (the message appears, so its absence after a clean stop means something).

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { rpc } from '../helpers/node.js';
import { spawnNode, type NodeProcess } from '../helpers/process.js';
import { waitFor } from '../helpers/wait.js';

const CHECKED = 'not closed cleanly';

describe('restart', () => {
  const datadir = mkdtempSync(join(tmpdir(), 'preconf-restart-'));
  let node: NodeProcess | undefined;
  afterAll(async () => {
    await node?.kill('SIGKILL');
    rmSync(datadir, { recursive: true, force: true });
  });

  const head = async (url: string) => Number(BigInt((await rpc(url, 'eth_blockNumber')).result));
  const safe = async (url: string) => Number(BigInt((await rpc(url, 'eth_getBlockByNumber', ['safe', false])).result.number));
  const start = () => spawnNode(['--datadir', datadir, '--block-time-ms', '100', '--preconf-interval-ms', '50']);

  it('after a clean stop opens the store without checking all of it; after kill -9 it checks it', async () => {
    node = await start();
    expect(node.output()).not.toContain(CHECKED);
    await waitFor(async () => (await head(node!.url)) >= 3, 10_000, 'block 3');
    expect(await node.kill('SIGTERM')).toBe(0);

    node = await start();
    expect(node.output()).not.toContain(CHECKED);
    const reopened = await head(node.url);
    expect(reopened).toBeGreaterThanOrEqual(3);
    // Durable, not only sealed: a kill -9 may take back the blocks still waiting for the disk
    // (their transactions come back from the journal; docs/storage.md "Durability").
    await waitFor(async () => (await safe(node!.url)) >= reopened + 3, 10_000, 'three more durable blocks');
    await node.kill('SIGKILL');

    node = await start();
    // Logged by the store as it opens, through the logger (it may follow the listening line).
    await waitFor(() => node!.output().includes(CHECKED), 5_000, 'the full check to be logged');
    expect(await head(node.url)).toBeGreaterThanOrEqual(reopened + 3);
  }, 60_000);
});
