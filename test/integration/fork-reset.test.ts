// anvil_reset with `forking` parameters on a fork, through viem's test client: another block
// of the same upstream, another upstream of the same chain, and what is refused (a bad URL,
// a block the upstream does not have, another chain) while the chain goes on as it was.

import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestClient, http, type Address } from 'viem';
import { foundry } from 'viem/chains';
import { startAnvil, type Anvil } from '../helpers/anvil.js';
import { startForkNode } from '../helpers/fork.js';
import { devAccount, rpc, type TestNode } from '../helpers/node.js';

const target = '0x00000000000000000000000000000000000f0e5e' as Address;
const funded = devAccount(0).address;
const DEV_BALANCE = '0x21e19e0c9bab2400000';

let upstream: Anvil;
let sibling: Anvil;
let otherChain: Anvil;
let t: TestNode;
let early: bigint;
let late: bigint;

const hex = (n: bigint) => `0x${n.toString(16)}`;
const blockNumber = async (url: string) => BigInt((await rpc(url, 'eth_blockNumber')).result);
const balance = async (url: string, block = 'latest') => (await rpc(url, 'eth_getBalance', [target, block])).result;

/** Sends `value` wei to `target` upstream (anvil mines it at once); the block it landed in. */
async function mineTransfer(url: string, value: string): Promise<bigint> {
  const sent = await rpc(url, 'eth_sendTransaction', [{ from: funded, to: target, value }]);
  expect(sent.error).toBeUndefined();
  let receipt: { blockNumber: string } | null = null;
  await vi.waitFor(async () => {
    receipt = (await rpc(url, 'eth_getTransactionReceipt', [sent.result])).result;
    expect(receipt).not.toBeNull();
  });
  return BigInt(receipt!.blockNumber);
}

beforeAll(async () => {
  [upstream, sibling, otherChain] = await Promise.all([startAnvil(), startAnvil(), startAnvil(['--chain-id', '5'])]);
  // anvil_setBalance would change the state of the block it is sent at: transfers make
  // each block's state its own. The balance of `target`: 0x111 at `early`, 0xaaa at `late`.
  early = await mineTransfer(upstream.url, '0x111');
  await mineTransfer(upstream.url, '0x888');
  late = await mineTransfer(upstream.url, '0x111');
  await mineTransfer(sibling.url, '0x333');
  t = await startForkNode(upstream.url, { blockNumber: late, retries: 1, onDisk: true });
}, 60_000);

afterAll(async () => {
  await t?.stop();
  await Promise.all([upstream?.stop(), sibling?.stop(), otherChain?.stop()]);
});

const testClient = () => createTestClient({ mode: 'anvil', chain: foundry, transport: http(t.node.url, { retryCount: 0 }) });

/** The chain still builds and takes writes: a new block is sealed, a local edit shows. */
async function stillWorks(): Promise<void> {
  const before = await blockNumber(t.node.url);
  await vi.waitFor(async () => expect(await blockNumber(t.node.url)).toBeGreaterThan(before), { timeout: 5_000, interval: 50 });
  expect((await rpc(t.node.url, 'anvil_setBalance', [funded, DEV_BALANCE])).error).toBeUndefined();
}

describe('anvil_reset with forking parameters', () => {
  it('forks another block of the same upstream, and a reset without parameters returns there', async () => {
    const url = t.node.url;
    expect(await balance(url)).toBe('0xaaa');
    await testClient().reset({ jsonRpcUrl: upstream.url, blockNumber: early });
    // At the new fork block (the builder may have sealed one block since), hash and all.
    expect(await blockNumber(url)).toBeLessThanOrEqual(early + 1n);
    const upBlock = (await rpc(upstream.url, 'eth_getBlockByNumber', [hex(early), false])).result;
    expect((await rpc(url, 'eth_getBlockByNumber', [hex(early), false])).result.hash).toBe(upBlock.hash);
    // The chain's first block is now that one (the node's info, as printed at start).
    expect(t.node.chain.info().genesisHash).toBe(upBlock.hash);
    expect(await balance(url)).toBe('0x111');
    expect(await balance(url, hex(early))).toBe('0x111');
    // The dev accounts are funded again on the new fork.
    expect((await rpc(url, 'eth_getBalance', [funded, 'latest'])).result).toBe(DEV_BALANCE);

    // A local write, then a reset without parameters: back to the new fork block, not the first.
    expect((await rpc(url, 'anvil_setBalance', [target, '0x5'])).error).toBeUndefined();
    expect(await balance(url, 'pending')).toBe('0x5');
    await testClient().reset();
    expect(await blockNumber(url)).toBeLessThanOrEqual(early + 1n);
    expect(await balance(url)).toBe('0x111');
    // The upstream never saw the local write.
    expect(await balance(upstream.url)).toBe('0xaaa');
    await stillWorks();
  });

  it('forks another upstream of the same chain at its latest block', async () => {
    const latest = await blockNumber(sibling.url);
    await testClient().reset({ jsonRpcUrl: sibling.url });
    expect(await blockNumber(t.node.url)).toBeGreaterThanOrEqual(latest);
    expect(await balance(t.node.url)).toBe('0x333');
    const upBlock = (await rpc(sibling.url, 'eth_getBlockByNumber', [hex(latest), false])).result;
    expect((await rpc(t.node.url, 'eth_getBlockByNumber', [hex(latest), false])).result.hash).toBe(upBlock.hash);
    expect(t.node.chain.info().genesisHash).toBe(upBlock.hash);
    // Only a block number: the same upstream (now the sibling) at that block.
    await testClient().reset({ blockNumber: latest - 1n });
    expect(await blockNumber(t.node.url)).toBeLessThanOrEqual(latest);
    expect(await balance(t.node.url)).toBe('0x0');
    await stillWorks();
  });

  it('a bad URL, a missing block or another chain fail the request and leave the chain as it was', async () => {
    const url = t.node.url;
    await testClient().reset({ jsonRpcUrl: upstream.url, blockNumber: late });
    expect(await balance(url)).toBe('0xaaa');

    const gone = await rpc(url, 'anvil_reset', [{ forking: { jsonRpcUrl: 'http://127.0.0.1:1/v2/KEY' } }]);
    expect(gone.error.code).toBe(-32000);
    expect(gone.error.message).toMatch(/^fork upstream http:\/\/127\.0\.0\.1:1 failed: .+ \(after 2 attempts\)$/);
    await expect(testClient().reset({ jsonRpcUrl: 'http://127.0.0.1:1' })).rejects.toThrow(/fork upstream http:\/\/127\.0\.0\.1:1 failed/);

    const missing = await rpc(url, 'anvil_reset', [{ forking: { blockNumber: 1_000_000 } }]);
    expect(missing.error.code).toBe(-32000);
    expect(missing.error.message).toContain('block 1000000 does not exist upstream');

    const chain5 = await rpc(url, 'anvil_reset', [{ forking: { jsonRpcUrl: otherChain.url } }]);
    expect(chain5.error.code).toBe(-32602);
    expect(chain5.error.message).toContain('anvil_reset cannot fork chain 5: this node runs chain 31337');

    const badUrl = await rpc(url, 'anvil_reset', [{ forking: { jsonRpcUrl: 42 } }]);
    expect(badUrl.error.code).toBe(-32602);

    // Still the fork of `late`, building blocks, with its state.
    expect(await balance(url)).toBe('0xaaa');
    await stillWorks();
    await testClient().reset();
    expect(await blockNumber(url)).toBeLessThanOrEqual(late + 1n);
    expect(await balance(url)).toBe('0xaaa');
  });
});
