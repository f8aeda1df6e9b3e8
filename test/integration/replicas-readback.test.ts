// A static leader streams each sealed block as soon as it seals it, before the block is
// durable in its store (replicas show it a commit earlier). A leader that dies in between
// comes back without the block while the stream and the replicas have it: before it builds,
// it reads the stream back. Here the gap is made real and held open: the leader runs with a
// free-disk floor above any disk's size, so every commit fails ("disk full") while sealing
// and streaming go on; it is killed (-9) once a replica shows a block the leader could not
// write, and restarted with room. The replica must never stop on a block that does not
// match, and both must end with one chain, block for block.

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { DEV_KEYS } from '../helpers/node.js';
import { call, caughtUp, Cluster, head, health, sameChain } from '../helpers/replicas.js';
import { waitFor } from '../helpers/wait.js';
import { signTransfer } from '../helpers/transfer.js';

const FAST = ['--preconf-interval-ms', '50', '--block-time-ms', '250'];
/** MiB: more free space than any disk has, so each commit is refused as "disk full"; the
 *  first block is sealed late enough for the first transaction to be in it (once a commit
 *  failed, transactions are refused). */
const NO_ROOM = ['--min-free-disk-mb', '4000000000', '--block-time-ms', '2000'];
const MARKER = 'publishing.unclean';

describe('a static leader reads its stream back', () => {
  let cluster: Cluster | undefined;
  afterEach(async () => {
    await cluster?.stop();
    cluster = undefined;
  });

  const account = privateKeyToAccount(DEV_KEYS[5]!);
  let nonce = 0;
  async function send(url: string): Promise<Hex> {
    const raw = await signTransfer(account, { to: `0x${'ab'.repeat(20)}`, nonce: nonce++ });
    return call<Hex>(url, 'eth_sendRawTransaction', [raw]);
  }

  it('after kill -9 with streamed blocks it never stored, it continues the stream instead of forking it', async () => {
    const c = (cluster = await Cluster.start({ replicas: 0, chainArgs: FAST, leaderArgs: NO_ROOM }));
    const first = await send(c.leader.url);
    await c.startReplica(0);
    expect(existsSync(join(c.leaderDir, MARKER))).toBe(true);
    // The replica holds a block the leader sealed and streamed but could not write.
    const streamed = await waitFor(
      async () => {
        const r = await call<any>(c.replica(0).url, 'eth_getTransactionReceipt', [first]);
        return r ? Number(r.blockNumber) : undefined;
      },
      15_000,
      'the replica to show the first transaction sealed',
    );
    await waitFor(async () => (await health(c.leader.url)).status === 503, 10_000, 'the leader to say its disk is full');
    const safe = Number((await call<any>(c.leader.url, 'eth_getBlockByNumber', ['safe', false])).number);
    expect(safe).toBeLessThan(streamed);
    const receipt = await call<any>(c.replica(0).url, 'eth_getTransactionReceipt', [first]);

    await c.leader.kill('SIGKILL');
    c.opts.leaderArgs = [];
    await c.startLeader();

    // The restarted leader has the streamed block as the replica shows it, and goes on.
    const again = await waitFor(() => call<any>(c.leader.url, 'eth_getTransactionReceipt', [first]), 15_000, 'the first transaction on the restarted leader');
    expect(again.blockHash).toBe(receipt.blockHash);
    const later: Hex[] = [];
    for (let i = 0; i < 5; i++) later.push(await send(c.leader.url));
    await waitFor(async () => (await call<any>(c.leader.url, 'eth_getTransactionReceipt', [later.at(-1)])) !== null, 15_000, 'the last transaction sealed');
    const top = await caughtUp(c.leader.url, c.replica(0).url, 30_000);
    await sameChain(c.leader.url, c.replica(0).url, top);
    expect(c.replica(0).output()).not.toContain('REPLICA STOPPED');
    for (const h of later) expect((await call<any>(c.replica(0).url, 'eth_getTransactionReceipt', [h]))?.status).toBe('0x1');
    expect((await health(c.replica(0).url)).status).toBe(200);
    expect(c.leader.output()).toContain('read 1 sealed blocks back from the stream before building');

    // A clean stop leaves every streamed block durable: no read-back is owed.
    await c.leader.kill('SIGTERM');
    expect(existsSync(join(c.leaderDir, MARKER))).toBe(false);
    await c.startLeader();
    expect(c.leader.output()).not.toContain('sealed blocks back from the stream');
    await send(c.leader.url);
    await waitFor(async () => (await head(c.leader.url)) > top, 15_000, 'the leader to seal on');
    await caughtUp(c.leader.url, c.replica(0).url, 30_000);
  }, 120_000);
});
