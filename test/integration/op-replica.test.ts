// Replicas of an OP chain: a leader on the `--optimism` dev chain and a replica, each the real
// command, on a real nats-server. Every block starts with the L1-info deposit, so a replica
// checks deposit receipts (depositNonce, the receipt version) against the leader's header.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { devAccount } from '../helpers/node.js';
import { call, caughtUp, Cluster, head, sameChain } from '../helpers/replicas.js';
import { waitFor } from '../helpers/wait.js';
import { signTransfer } from '../helpers/transfer.js';

describe('replicas of an OP chain', () => {
  let c: Cluster;
  beforeAll(async () => {
    c = await Cluster.start({ replicas: 1, chainArgs: ['--optimism', '--preconf-interval-ms', '100', '--block-time-ms', '500'] });
  }, 120_000);
  afterAll(async () => {
    await c?.stop();
  });

  it("follow the leader's blocks, deposits and L1 fees included", async () => {
    const leader = c.leader.url;
    const chainId = Number(await call<string>(leader, 'eth_chainId'));
    const sender = devAccount(1);
    const nonce = Number(await call<string>(leader, 'eth_getTransactionCount', [sender.address, 'pending']));
    const hash = await call<string>(leader, 'eth_sendRawTransaction', [await signTransfer(sender, { to: devAccount(2).address, nonce, chainId })]);

    // Sealed on the leader, and at least one block after the transfer's.
    const mined = await waitFor(async () => (await call(leader, 'eth_getTransactionReceipt', [hash]))?.blockNumber ?? null, 30_000, 'the transfer sealed');
    await waitFor(async () => (await head(leader)) > Number(mined), 30_000, 'a block after the transfer');
    const to = await caughtUp(leader, c.replica(0).url, 30_000);
    await sameChain(leader, c.replica(0).url, to);
    expect(to).toBeGreaterThanOrEqual(2);
    const [onLeader, onReplica] = await Promise.all([leader, c.replica(0).url].map((u) => call(u, 'eth_getTransactionReceipt', [hash])));
    expect(onReplica).toEqual(onLeader);
    expect(BigInt(onReplica.l1Fee)).toBeGreaterThan(0n);
    const block = await call(c.replica(0).url, 'eth_getBlockByNumber', ['0x1', true]);
    expect(block.transactions[0].type).toBe('0x7e');
  });
});
