// The flashblocks endpoint (--flashblocks.port) on the OP dev chain: clients on the plain
// path (JSON text) and on /brotli (compressed binary frames) receive, for each block, index 0
// with its base and then one diff per pre-confirmation; the transactions of the diffs put
// together are the sealed block's, and the last diff's roots and block hash are the sealed
// block's (the state root is computed per pre-confirmation). A client that connects mid-block
// gets that block's messages so far first.

import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { keccak256, parseEther, type Hex } from 'viem';
import { parseArgs } from '../../src/cli/index.js';
import { Listener } from '../helpers/flashblocks.js';
import { devAccount, startTestNode, type TestNode } from '../helpers/node.js';

describe('flashblocks on the wire (--flashblocks.port)', () => {
  let t: TestNode;
  let plain: Listener;
  let brotli: Listener;

  beforeAll(async () => {
    const flags = parseArgs(['--optimism', '--flashblocks.addr', '127.0.0.1', '--flashblocks.port', '0']);
    if (flags === 'help') throw new Error('help');
    t = await startTestNode({
      configure: (c) => {
        Object.assign(c.chain, { ...flags.chain, datadir: undefined, preconfIntervalMs: 100, blockTimeMs: 1000 });
        c.flashblocks = flags.flashblocks;
      },
    });
    const url = t.node.flashblocksUrl!;
    [plain, brotli] = await Promise.all([Listener.open(`${url}/`), Listener.open(`${url}/brotli`)]);
  });
  afterAll(async () => {
    plain?.socket.close();
    brotli?.socket.close();
    await t?.stop();
  });

  it('refuses other paths', async () => {
    await expect(Listener.open(`${t.node.flashblocksUrl}/other`)).rejects.toThrow(/404/);
  });

  it('streams index 0 and a diff per pre-confirmation that add up to the sealed block', async () => {
    // The stream starts at the first block opened after the endpoint: wait for its index 0.
    await vi.waitFor(() => expect(plain.messages.some((m) => m.index === 0)).toBe(true), { timeout: 10_000, interval: 20 });
    // Transfers from two senders, spread over several pre-confirmations.
    const hashes: Hex[] = [];
    for (let i = 0; i < 6; i++) {
      hashes.push(
        await t.wallet(1 + (i % 2)).sendTransaction({
          chain: t.chain,
          account: devAccount(1 + (i % 2)),
          to: '0x000000000000000000000000000000000000bEEF',
          value: parseEther('0.001') * BigInt(i + 1),
        }),
      );
      await new Promise((r) => setTimeout(r, 60));
    }
    const receipts = await Promise.all(hashes.map((hash) => t.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 50, timeout: 20_000 })));
    const numbers = [...new Set(receipts.map((r) => r.blockNumber))];

    for (const number of numbers) {
      const block = await t.publicClient.getBlock({ blockNumber: number });
      // The last pre-confirmation went out before the seal; its frame may still be on the way.
      await vi.waitFor(() => expect(plain.of(number).at(-1)?.diff.block_hash).toBe(block.hash), { timeout: 10_000, interval: 20 });
      await vi.waitFor(() => expect(brotli.of(number).length).toBe(plain.of(number).length), { timeout: 10_000, interval: 20 });
      const messages = plain.of(number);

      // Index 0 with the block's base, then every index in order under one payload id.
      expect(messages.map((m) => m.index)).toEqual(messages.map((_, i) => i));
      expect(new Set(messages.map((m) => m.payload_id)).size).toBe(1);
      expect(messages.filter((m) => m.base !== undefined).length).toBe(1);
      const base = messages[0]!.base!;
      expect(BigInt(base.block_number)).toBe(number);
      expect(base.parent_hash).toBe(block.parentHash);
      expect(base.fee_recipient.toLowerCase()).toBe(block.miner.toLowerCase());
      expect(BigInt(base.timestamp)).toBe(block.timestamp);
      expect(BigInt(base.gas_limit)).toBe(block.gasLimit);
      expect(BigInt(base.base_fee_per_gas)).toBe(block.baseFeePerGas);
      expect(base.extra_data).toBe(block.extraData);

      // The diffs' transactions, put together, are the block's (the L1-info deposit first).
      const raw = messages.flatMap((m) => m.diff.transactions);
      expect(raw.map((tx) => keccak256(tx))).toEqual(block.transactions);
      expect(raw[0]!.startsWith('0x7e')).toBe(true);
      for (const m of messages) {
        expect(Object.keys(m.metadata.receipts).sort()).toEqual(m.diff.transactions.map((tx) => keccak256(tx)).sort());
      }

      // The last diff is the block as sealed: roots, bloom, gas and hash.
      const last = messages.at(-1)!.diff;
      expect(last).toMatchObject({
        state_root: block.stateRoot,
        receipts_root: block.receiptsRoot,
        logs_bloom: block.logsBloom,
        block_hash: block.hash,
        withdrawals: [],
      });
      expect(BigInt(last.gas_used)).toBe(block.gasUsed);
      // Every earlier diff names a state root of its own (computed, not zero).
      for (const m of messages) expect(BigInt(m.diff.state_root)).not.toBe(0n);

      // The brotli client got the same messages in binary frames.
      expect(brotli.of(number)).toEqual(messages);
    }
    expect(plain.frames).toEqual(new Set(['text']));
    expect(brotli.frames).toEqual(new Set(['binary']));
    // The balance a block's diffs last report for an account is the one the node answers
    // for it at that block.
    let compared = 0;
    for (const number of numbers) {
      for (const i of [1, 2]) {
        const who = devAccount(i).address;
        const reported = plain
          .of(number)
          .flatMap((m) => Object.entries(m.metadata.new_account_balances).filter(([a]) => a.toLowerCase() === who.toLowerCase()));
        if (reported.length === 0) continue;
        expect(BigInt(reported.at(-1)![1])).toBe(await t.publicClient.getBalance({ address: who, blockNumber: number }));
        compared++;
      }
    }
    expect(compared).toBeGreaterThan(0);
  });

  it("a client that connects mid-block first gets the open block's flashblocks so far, on both paths", async () => {
    // A block with a few pre-confirmations out and not sealed yet (10 per block here).
    let open = 0n;
    await vi.waitFor(
      async () => {
        const last = plain.messages.at(-1)!;
        open = BigInt(last.metadata.block_number);
        expect(last.index).toBeGreaterThanOrEqual(2);
        expect(last.index).toBeLessThanOrEqual(6);
        expect(await t.publicClient.getBlockNumber()).toBe(open - 1n);
      },
      { timeout: 10_000, interval: 10 },
    );
    const [late, lateBrotli] = await Promise.all([Listener.open(`${t.node.flashblocksUrl}/`), Listener.open(`${t.node.flashblocksUrl}/brotli`)]);
    try {
      // At once, from index 0: what the client connected from the start had of the block.
      await vi.waitFor(() => expect(late.of(open).length).toBeGreaterThanOrEqual(3), { timeout: 2_000, interval: 10 });
      expect(late.of(open)[0]!.index).toBe(0);
      // Then the rest as it comes: the whole block, the same messages as the first client's.
      await vi.waitFor(async () => expect(await t.publicClient.getBlockNumber()).toBeGreaterThan(open), { timeout: 10_000, interval: 20 });
      await vi.waitFor(() => expect(late.of(open)).toEqual(plain.of(open)), { timeout: 5_000, interval: 20 });
      await vi.waitFor(() => expect(lateBrotli.of(open)).toEqual(plain.of(open)), { timeout: 5_000, interval: 20 });
      expect(lateBrotli.frames).toEqual(new Set(['binary']));
    } finally {
      late.close();
      lateBrotli.close();
    }
    // Nothing of a block sealed before the client connected is sent again.
    const sealed = await t.publicClient.getBlockNumber();
    const between = await Listener.open(`${t.node.flashblocksUrl}/`);
    try {
      await vi.waitFor(() => expect(between.messages.length).toBeGreaterThan(0), { timeout: 5_000, interval: 20 });
      expect(between.messages.every((m) => BigInt(m.metadata.block_number) > sealed)).toBe(true);
    } finally {
      between.close();
    }
  });
});
