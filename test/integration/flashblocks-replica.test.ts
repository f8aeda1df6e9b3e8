// The flashblocks endpoint on a replica (--follow): it publishes the leader's
// pre-confirmations as it applies them, the same messages the leader's endpoint sends (same
// payload ids, indices, diffs and block hashes), so a flashblocks proxy can follow any
// replica instead of the leader. A leader and a replica, each the real command, on a real
// nats-server. On the Ethereum dev chain: an OP dev chain's replica currently stops at
// block 1 (receipts root mismatch in replication, not in the flashblocks renderer).

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPublicClient, createWalletClient, defineChain, http, keccak256, type Hex } from 'viem';
import { freePort } from '../helpers/child.js';
import { Listener } from '../helpers/flashblocks.js';
import { devAccount } from '../helpers/node.js';
import { call, Cluster } from '../helpers/replicas.js';
import { waitFor } from '../helpers/wait.js';

describe('flashblocks on a replica', () => {
  let c: Cluster;
  let leader: Listener;
  let replica: Listener;

  beforeAll(async () => {
    const [lp, rp] = [await freePort(), await freePort()];
    c = await Cluster.start({
      replicas: 1,
      chainArgs: ['--preconf-interval-ms', '100', '--block-time-ms', '1000'],
      leaderArgs: ['--flashblocks.port', String(lp)],
      replicaArgs: ['--flashblocks.port', String(rp)],
    });
    [leader, replica] = await Promise.all([Listener.open(`ws://127.0.0.1:${lp}/`), Listener.open(`ws://127.0.0.1:${rp}/`)]);
  }, 120_000);
  afterAll(async () => {
    leader?.socket.close();
    replica?.socket.close();
    await c?.stop();
  });

  it("publishes the leader's flashblocks, message for message", async () => {
    const url = c.leader.url;
    const chain = defineChain({
      id: Number(await call(url, 'eth_chainId')),
      name: 'op-dev',
      nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
      rpcUrls: { default: { http: [url] } },
    });
    const wallet = createWalletClient({ chain, transport: http(url), account: devAccount(1) });
    const client = createPublicClient({ chain, transport: http(url) });
    // Compare blocks both listeners saw open (they connected mid-block).
    await waitFor(() => leader.messages.some((m) => m.index === 0) && replica.messages.some((m) => m.index === 0), 10_000, 'a block opened on both');
    const hashes: Hex[] = [];
    for (let i = 0; i < 4; i++) {
      hashes.push(await wallet.sendTransaction({ to: '0x000000000000000000000000000000000000bEEF', value: BigInt(i + 1) }));
      await new Promise((r) => setTimeout(r, 150));
    }
    const receipts = await Promise.all(hashes.map((hash) => client.waitForTransactionReceipt({ hash, pollingInterval: 50, timeout: 20_000 })));
    for (const number of new Set(receipts.map((r) => r.blockNumber))) {
      const block = await client.getBlock({ blockNumber: number });
      await waitFor(() => replica.of(number).at(-1)?.diff.block_hash === block.hash, 10_000, `the replica's last flashblock of block ${number}`, 20);
      await waitFor(() => leader.of(number).at(-1)?.diff.block_hash === block.hash, 10_000, `the leader's last flashblock of block ${number}`, 20);
      // Both were connected before the block opened: the same messages, index 0 on.
      expect(replica.of(number)).toEqual(leader.of(number));
      expect(replica.of(number)[0]!.index).toBe(0);
      expect(
        replica
          .of(number)
          .flatMap((m) => m.diff.transactions)
          .map((tx) => keccak256(tx)),
      ).toEqual(block.transactions);
    }
  });
});
