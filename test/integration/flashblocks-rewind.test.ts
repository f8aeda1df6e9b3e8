// Flashblocks of a block the test methods rewind: after evm_revert the block open on the
// restored head is published again from index 0 with its base, under a payload id never
// used before (the rewound block has the same parent and number, often the same timestamp),
// and that payload's messages put together are the block as sealed.

import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { keccak256, type Hex } from 'viem';
import WebSocket from 'ws';
import { parseArgs } from '../../src/cli/index.js';
import { devAccount, rpc, startTestNode, type TestNode } from '../helpers/node.js';

interface Flashblock {
  payload_id: Hex;
  index: number;
  base?: { parent_hash: Hex; block_number: Hex };
  diff: { block_hash: Hex; transactions: Hex[] };
  metadata: { block_number: number };
}

const TO = '0x000000000000000000000000000000000000bEEF';

async function ok(url: string, method: string, params: unknown[] = []): Promise<any> {
  const r = await rpc(url, method, params);
  expect(r.error, `${method}: ${JSON.stringify(r.error)}`).toBeUndefined();
  return r.result;
}

describe('flashblocks of a rewound block', () => {
  let t: TestNode;
  let socket: WebSocket;
  const messages: Flashblock[] = [];

  beforeAll(async () => {
    const flags = parseArgs(['--optimism', '--flashblocks.port', '0']);
    if (flags === 'help') throw new Error('help');
    t = await startTestNode({
      configure: (c) => {
        // Long blocks: the rewound block must still be open when the revert comes.
        Object.assign(c.chain, { ...flags.chain, datadir: undefined, preconfIntervalMs: 50, blockTimeMs: 5000 });
        c.flashblocks = flags.flashblocks;
      },
    });
    socket = new WebSocket(`${t.node.flashblocksUrl}/`);
    socket.on('message', (data: Buffer) => messages.push(JSON.parse(data.toString('utf8')) as Flashblock));
    await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
  });
  afterAll(async () => {
    socket?.close();
    await t?.stop();
  });

  it('publishes the block open after evm_revert from index 0 under a new payload id', async () => {
    const url = t.node.url;
    const id = await ok(url, 'evm_snapshot');
    const head = await t.publicClient.getBlock({ blockTag: 'latest' });
    const number = head.number + 1n;
    const of = (n: bigint) => messages.filter((m) => BigInt(m.metadata.block_number) === n);
    const sender = devAccount(1);
    const rewound = await t.wallet(1).sendTransaction({ chain: t.chain, account: sender, to: TO, value: 1n });
    // Pre-confirmed in block `number` and published under its payload.
    await vi.waitFor(
      () =>
        expect(
          of(number)
            .flatMap((m) => m.diff.transactions)
            .map((tx) => keccak256(tx)),
        ).toContain(rewound),
      { timeout: 10_000, interval: 20 },
    );
    const before = of(number).find((m) => m.diff.transactions.some((tx) => keccak256(tx) === rewound))!.payload_id;
    const seen = messages.length;

    expect(await ok(url, 'evm_revert', [id])).toBe(true);
    // The block open on the restored head, published again: index 0 with its base.
    await vi.waitFor(() => expect(messages.slice(seen).some((m) => m.index === 0 && BigInt(m.metadata.block_number) === number)).toBe(true), {
      timeout: 10_000,
      interval: 20,
    });
    const again = messages.slice(seen).find((m) => m.index === 0 && BigInt(m.metadata.block_number) === number)!;
    expect(again.base?.parent_hash).toBe(head.hash);
    expect(again.payload_id).not.toBe(before);
    expect(again.diff.transactions.map((tx) => keccak256(tx))).not.toContain(rewound);

    // What goes in after the revert is that payload's, and it adds up to the sealed block.
    const kept = await t.wallet(2).sendTransaction({ chain: t.chain, account: devAccount(2), to: TO, value: 2n });
    await ok(url, 'evm_mine');
    const receipt = await t.publicClient.waitForTransactionReceipt({ hash: kept, pollingInterval: 50, timeout: 20_000 });
    expect(receipt.blockNumber).toBe(number);
    const block = await t.publicClient.getBlock({ blockNumber: number });
    await vi.waitFor(() => expect(of(number).at(-1)?.diff.block_hash).toBe(block.hash), { timeout: 10_000, interval: 20 });
    const payload = of(number).filter((m) => m.payload_id === of(number).at(-1)!.payload_id);
    expect(payload.map((m) => m.index)).toEqual(payload.map((_, i) => i));
    expect(payload.flatMap((m) => m.diff.transactions).map((tx) => keccak256(tx))).toEqual(block.transactions);
    expect(block.transactions).not.toContain(rewound);
  });
});
