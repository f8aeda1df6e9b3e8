// The history of a forked chain before (and at) its fork block is the upstream's: blocks,
// transactions, receipts and logs the node never executed are answered as the upstream
// (anvil on loopback, behind a counting proxy) answers them, once, then from the cache;
// eth_getLogs over a range spanning the fork block joins the upstream's part and the
// node's own; tracing an upstream transaction says why it cannot be done here.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPublicClient, createWalletClient, http, type Address, type Hex } from 'viem';
import { foundry } from 'viem/chains';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startAnvil, type Anvil } from '../helpers/anvil.js';
import { contract } from '../helpers/contracts.js';
import { devAccount, rpc } from '../helpers/node.js';
import { spawnNode, type NodeProcess } from '../helpers/process.js';
import { startUpstreamProxy, type UpstreamProxy } from '../helpers/upstream-proxy.js';

const erc20 = contract('Erc20');
const other = devAccount(1).address;
const stranger = '0x00000000000000000000000000000000000a11ce' as Address;
const hex = (n: bigint) => `0x${n.toString(16)}`;

let anvil: Anvil;
let proxy: UpstreamProxy;
let token: Address;
let forkBlock: bigint;
let early: Hex; // a transfer in the block before the fork block
let atFork: Hex; // a transfer in the fork block
let late: Hex; // a transfer upstream after the fork block: not this chain's
let datadir: string;
let t: NodeProcess;

const upstream = async (method: string, params: unknown[]) => (await rpc(anvil.url, method, params)).result;
const forked = async (method: string, params: unknown[]) => {
  const answer = await rpc(t.url, method, params);
  expect(answer.error, `${method} ${JSON.stringify(params)}`).toBeUndefined();
  return answer.result;
};

// The real command, so that a restart reopens the store a stopped process released.
function startFork(): Promise<NodeProcess> {
  const args = ['--fork-url', proxy.url, '--fork-block-number', String(forkBlock), '--datadir', datadir];
  return spawnNode([...args, '--preconf-interval-ms', '50', '--block-time-ms', '200']);
}

beforeAll(async () => {
  anvil = await startAnvil();
  const wallet = createWalletClient({ chain: foundry, transport: http(anvil.url), account: devAccount(0) });
  const pub = createPublicClient({ chain: foundry, transport: http(anvil.url) });
  const deployed = await wallet.deployContract({ abi: erc20.abi, bytecode: erc20.bytecode, args: [1_000_000n] });
  token = (await pub.waitForTransactionReceipt({ hash: deployed })).contractAddress!;
  const transfer = async (value: bigint) => {
    const hash = await wallet.writeContract({ address: token, abi: erc20.abi, functionName: 'transfer', args: [other, value] });
    return { hash, block: (await pub.waitForTransactionReceipt({ hash })).blockNumber };
  };
  early = (await transfer(1n)).hash;
  const fork = await transfer(2n);
  atFork = fork.hash;
  forkBlock = fork.block;
  late = (await transfer(3n)).hash;
  proxy = await startUpstreamProxy(anvil.url);
  datadir = mkdtempSync(join(tmpdir(), 'preconf-fork-history-'));
  t = await startFork();
}, 120_000);

afterAll(async () => {
  await t?.kill('SIGTERM');
  await proxy?.stop();
  await anvil?.stop();
  if (datadir) rmSync(datadir, { recursive: true, force: true });
});

describe('history before the fork block', () => {
  it('blocks, transactions and receipts at or before the fork block are the upstream’s', async () => {
    for (const n of [forkBlock - 1n, forkBlock]) {
      const block = await upstream('eth_getBlockByNumber', [hex(n), true]);
      expect(block.transactions.length).toBe(1);
      expect(await forked('eth_getBlockByNumber', [hex(n), true])).toEqual(block);
      expect(await forked('eth_getBlockByNumber', [hex(n), false])).toEqual(await upstream('eth_getBlockByNumber', [hex(n), false]));
      expect(await forked('eth_getBlockByHash', [block.hash, true])).toEqual(block);
      expect(await forked('eth_getBlockTransactionCountByNumber', [hex(n)])).toBe('0x1');
      expect(await forked('eth_getBlockTransactionCountByHash', [block.hash])).toBe('0x1');
      expect(await forked('eth_getTransactionByBlockNumberAndIndex', [hex(n), '0x0'])).toEqual(block.transactions[0]);
      expect(await forked('eth_getTransactionByBlockHashAndIndex', [block.hash, '0x0'])).toEqual(block.transactions[0]);
      expect(await forked('eth_getBlockReceipts', [hex(n)])).toEqual(await upstream('eth_getBlockReceipts', [hex(n)]));
    }
    for (const hash of [early, atFork]) {
      expect(await forked('eth_getTransactionByHash', [hash])).toEqual(await upstream('eth_getTransactionByHash', [hash]));
      expect(await forked('eth_getTransactionReceipt', [hash])).toEqual(await upstream('eth_getTransactionReceipt', [hash]));
    }
    // The upstream went on after the fork block: none of that is this chain's.
    expect(await upstream('eth_getTransactionReceipt', [late])).not.toBeNull();
    expect(await forked('eth_getTransactionByHash', [late])).toBeNull();
    expect(await forked('eth_getTransactionReceipt', [late])).toBeNull();
    const upstreamNext = await upstream('eth_getBlockByNumber', [hex(forkBlock + 1n), false]);
    expect(await forked('eth_getBlockByHash', [upstreamNext.hash, false])).toBeNull();
    expect(await forked('eth_getTransactionByHash', [`0x${'ab'.repeat(32)}`])).toBeNull();

    // Asked again, nothing goes to the upstream.
    await proxy.reset();
    expect(await forked('eth_getBlockByNumber', [hex(forkBlock), true])).toEqual(await upstream('eth_getBlockByNumber', [hex(forkBlock), true]));
    expect(await forked('eth_getTransactionReceipt', [early])).toEqual(await upstream('eth_getTransactionReceipt', [early]));
    expect(await forked('eth_getTransactionReceipt', [late])).toBeNull();
    expect((await proxy.stats()).requests).toBe(0);
  }, 60_000);

  it('eth_getLogs over a range spanning the fork block joins the upstream’s logs and the node’s', async () => {
    const wallet = createWalletClient({ chain: foundry, transport: http(t.url), account: devAccount(0) });
    const pub = createPublicClient({ chain: foundry, transport: http(t.url), pollingInterval: 50 });
    const hash = await wallet.writeContract({ address: token, abi: erc20.abi, functionName: 'transfer', args: [stranger, 7n] });
    const local = await pub.waitForTransactionReceipt({ hash });
    expect(local.blockNumber).toBeGreaterThan(forkBlock);

    const before = await upstream('eth_getLogs', [{ fromBlock: '0x0', toBlock: hex(forkBlock), address: token }]);
    expect(before.length).toBe(3); // the mint and two transfers; the late transfer is after the fork
    const all = await forked('eth_getLogs', [{ fromBlock: '0x0', toBlock: 'latest', address: token }]);
    expect(all.slice(0, 3)).toEqual(before);
    expect(all.length).toBe(4);
    expect(all[3].transactionHash).toBe(hash);
    expect(BigInt(all[3].blockNumber)).toBe(local.blockNumber);
    // viem's getLogs over the same span, decoded.
    const events = await pub.getContractEvents({ address: token, abi: erc20.abi, eventName: 'Transfer', fromBlock: 0n, toBlock: 'latest' });
    expect(events.map((e) => (e as unknown as { args: { value: bigint } }).args.value)).toEqual([1_000_000n, 1n, 2n, 7n]);
    // Only the node's part, and only the upstream's.
    expect(await forked('eth_getLogs', [{ fromBlock: hex(forkBlock + 1n), toBlock: 'latest', address: token }])).toEqual([all[3]]);
    expect(await forked('eth_getLogs', [{ fromBlock: hex(forkBlock - 1n), toBlock: hex(forkBlock), address: token }])).toEqual(before.slice(1));
    // By the hash of a block before the fork.
    const blockHash = before[1].blockHash;
    expect(await forked('eth_getLogs', [{ blockHash }])).toEqual(await upstream('eth_getLogs', [{ blockHash }]));
  }, 60_000);

  it('tracing a transaction or block of the upstream says it is not available here', async () => {
    for (const hash of [early, atFork]) {
      const answer = await rpc(t.url, 'debug_traceTransaction', [hash]);
      expect(answer.error.code).toBe(-32000);
      expect(answer.error.message).toContain('before the fork block');
      expect(answer.error.message).toContain('cannot be traced on this node');
    }
    const block = await rpc(t.url, 'debug_traceBlockByNumber', [hex(forkBlock), {}]);
    expect(block.error.message).toContain('before the fork block');
    // A transaction unknown everywhere is still "not found".
    const unknown = await rpc(t.url, 'debug_traceTransaction', [`0x${'cd'.repeat(32)}`]);
    expect(unknown.error.message).not.toContain('fork');
  }, 30_000);

  it('a restart on the same datadir answers the history it fetched from its cache', async () => {
    await t.kill('SIGTERM');
    await proxy.reset();
    t = await startFork();
    expect(await forked('eth_getBlockByNumber', [hex(forkBlock - 1n), true])).toEqual(await upstream('eth_getBlockByNumber', [hex(forkBlock - 1n), true]));
    expect(await forked('eth_getTransactionReceipt', [atFork])).toEqual(await upstream('eth_getTransactionReceipt', [atFork]));
    expect(await forked('eth_getLogs', [{ fromBlock: '0x0', toBlock: hex(forkBlock), address: token }])).toEqual(
      await upstream('eth_getLogs', [{ fromBlock: '0x0', toBlock: hex(forkBlock), address: token }]),
    );
    expect((await proxy.stats()).requests).toBe(0);
  }, 60_000);
});
