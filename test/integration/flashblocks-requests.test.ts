// Flashblocks on an Ethereum chain from Prague, where the seal's post-block system calls can
// change the block after its last pre-confirmation: a withdrawal request (EIP-7002) is
// dequeued at the seal, which changes the queue contract's storage (the state root) and
// brings a request (the requests hash). The payload then ends with one more message, without
// transactions, naming the sealed block's roots and hash.

import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { concat, type Hex, keccak256, pad } from 'viem';
import WebSocket from 'ws';
import { parseArgs } from '../../src/cli/index.js';
import { devAccount, rpc, startTestNode, type TestNode } from '../helpers/node.js';

interface Flashblock {
  payload_id: Hex;
  index: number;
  diff: { state_root: Hex; block_hash: Hex; transactions: Hex[] };
  metadata: { block_number: number };
}

const WITHDRAWAL_QUEUE = '0x00000961Ef480Eb55e80D19ad83579A64c007002';

describe('flashblocks of a block whose seal adds requests', () => {
  let t: TestNode;
  let socket: WebSocket;
  const messages: Flashblock[] = [];

  beforeAll(async () => {
    const flags = parseArgs(['--flashblocks.port', '0']);
    if (flags === 'help') throw new Error('help');
    t = await startTestNode({
      configure: (c) => {
        Object.assign(c.chain, { ...flags.chain, datadir: undefined, preconfIntervalMs: 100, blockTimeMs: 1000 });
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

  it('ends the payload with the sealed block when the seal changed it', async () => {
    await vi.waitFor(() => expect(messages.some((m) => m.index === 0)).toBe(true), { timeout: 10_000, interval: 20 });
    // The queue's fee (an empty call returns it), and a request: a 48-byte key, an amount.
    const fee = BigInt((await rpc(t.node.url, 'eth_call', [{ to: WITHDRAWAL_QUEUE, data: '0x' }, 'pending'])).result);
    const data = concat([pad('0x11', { size: 48 }), pad('0x00', { size: 8 })]);
    const hash = await t.wallet(1).sendTransaction({ chain: t.chain, account: devAccount(1), to: WITHDRAWAL_QUEUE, data, value: fee, gas: 300_000n });
    const receipt = await t.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 50, timeout: 20_000 });
    expect(receipt.status).toBe('success');
    const block = await t.publicClient.getBlock({ blockNumber: receipt.blockNumber });
    const of = () => messages.filter((m) => BigInt(m.metadata.block_number) === block.number);
    await vi.waitFor(() => expect(of().at(-1)?.diff.block_hash).toBe(block.hash), { timeout: 10_000, interval: 20 });
    const payload = of().filter((m) => m.payload_id === of().at(-1)!.payload_id);
    expect(payload.map((m) => m.index)).toEqual(payload.map((_, i) => i));
    expect(payload.flatMap((m) => m.diff.transactions).map((tx) => keccak256(tx))).toEqual(block.transactions);
    // The last pre-confirmation had every transaction but not what the seal added.
    const [preconf, seal] = payload.slice(-2) as [Flashblock, Flashblock];
    expect(seal.diff.transactions).toEqual([]);
    expect(seal.diff.state_root).toBe(block.stateRoot);
    expect(preconf.diff.block_hash).not.toBe(block.hash);
  });
});
