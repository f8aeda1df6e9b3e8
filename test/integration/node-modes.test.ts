// Modes that change what the node serves: `--public` (no eth_getBlockReceipts over HTTP) and
// `--no-preconf` (pending is latest), each on a node of its own.

import { describe, expect, it } from 'vitest';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { devAccount, rawPost, rpc, withTestNode } from '../helpers/node.js';

describe('modes', () => {
  it('--public answers eth_getBlockReceipts with HTTP 403 and serves everything else', async () => {
    await withTestNode({ configure: (c) => void (c.server.publicEndpoint = true) }, async (t) => {
      const r = await rawPost(t.node.url, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_getBlockReceipts', params: ['latest'] }));
      expect(r.status).toBe(403);
      const batch = await rawPost(
        t.node.url,
        JSON.stringify([
          { jsonrpc: '2.0', id: 1, method: 'eth_chainId' },
          { jsonrpc: '2.0', id: 2, method: 'eth_getBlockReceipts', params: ['latest'] },
        ]),
      );
      expect(batch.status).toBe(403);
      expect((await rpc(t.node.url, 'eth_getBlockByNumber', ['latest', false])).result.number).toBeDefined();
    });
  });

  it('--no-preconf: pending equals latest, eth_simulateV1 does not exist, blocks still seal', async () => {
    await withTestNode(
      {
        configure: (c) => {
          c.chain.preconf = false;
          c.chain.blockTimeMs = 300;
          c.chain.preconfIntervalMs = 50;
        },
      },
      async (t) => {
        const sim = await rpc(t.node.url, 'eth_simulateV1', [{ blockStateCalls: [] }, 'pending']);
        expect(sim.error.code).toBe(-32601);
        const to = privateKeyToAccount(generatePrivateKey()).address;
        const hash = await t.wallet(0).sendTransaction({ to, value: 7n, chain: t.chain, account: devAccount(0) });
        const receipt = await t.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 });
        // Only ever seen sealed.
        expect(receipt.blockHash).not.toBe(`0x${'00'.repeat(32)}`);
        const pendingBlock = await t.publicClient.getBlock({ blockTag: 'pending' });
        const latestBlock = await t.publicClient.getBlock({ blockTag: 'latest' });
        expect(pendingBlock.number).toBe(latestBlock.number);
        expect(await t.publicClient.getBalance({ address: to, blockTag: 'pending' })).toBe(7n);
      },
    );
  });
});
