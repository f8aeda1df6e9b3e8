// Tracing the block being built: debug_traceTransaction of a pre-confirmed transaction
// before its block is sealed (the block's earlier transactions replayed first),
// debug_traceCall against `pending` seeing it, debug_traceBlockByNumber("pending"), and the
// same traces once the block is sealed.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeFunctionData, getContractAddress, pad, toHex, type Address, type Hex } from 'viem';
import { contract } from '../helpers/contracts.js';
import { balanceSlot } from '../helpers/genesis.js';
import { devAccount, startTestNode, type TestNode } from '../helpers/node.js';
import { call, freshBlock, preconfirmed, sealedReceipt } from '../helpers/trace.js';

const probe = contract('Probe');
const bump = encodeFunctionData({ abi: probe.abi, functionName: 'bump' });
const counter = encodeFunctionData({ abi: probe.abi, functionName: 'counter' });
/** Long enough that a test finishes inside one block once it starts right after a seal. */
const BLOCK_TIME_MS = 3000;

describe('tracing pre-confirmed transactions', () => {
  let t: TestNode;
  let url: string;
  let probeAddr: Address;

  beforeAll(async () => {
    t = await startTestNode({
      configure: (c) => {
        c.chain.preconfIntervalMs = 50;
        c.chain.blockTimeMs = BLOCK_TIME_MS;
      },
    });
    url = t.node.url;
    const hash = await t.wallet(0).deployContract({ abi: probe.abi, bytecode: probe.bytecode, chain: t.chain, account: devAccount(0) });
    probeAddr = (await sealedReceipt(url, hash)).contractAddress;
  });
  afterAll(() => t?.stop());

  const sendBump = (from: number): Promise<Hex> =>
    t.wallet(from).sendTransaction({ chain: t.chain, account: devAccount(from), to: probeAddr, data: bump, gas: 100_000n } as never);
  const counterAt = async (block: string, options: Record<string, unknown> = {}): Promise<bigint> =>
    BigInt((await call(url, 'debug_traceCall', [{ to: probeAddr, data: counter }, block, { tracer: 'callTracer', ...options }])).output);

  it('traces pre-confirmed transactions in the block being built, and calls on top of them', async () => {
    const before = await counterAt('latest');
    await freshBlock(url);
    const first = await sendBump(1);
    await preconfirmed(url, first);
    const second = await sendBump(2);
    await preconfirmed(url, second);

    // The second one runs after the first, replayed on the parent state with the block's
    // system calls: it sees the first one's bump.
    const traced = await call(url, 'debug_traceTransaction', [second, { tracer: 'callTracer', tracerConfig: { withLog: true } }]);
    expect(BigInt(traced.output)).toBe(before + 2n);
    expect(traced.logs).toHaveLength(1);
    expect(traced.logs[0].topics[1]).toBe(pad(devAccount(2).address.toLowerCase() as Hex));
    const firstTrace = await call(url, 'debug_traceTransaction', [first, { tracer: 'callTracer' }]);
    expect(BigInt(firstTrace.output)).toBe(before + 1n);

    // A call against pending sees both; against latest neither; with txIndex the state
    // between them.
    expect(await counterAt('pending')).toBe(before + 2n);
    expect(await counterAt('latest')).toBe(before);
    expect(await counterAt('pending', { txIndex: '0x1' })).toBe(before + 1n);

    // The whole block being built, in order.
    const block = await call(url, 'debug_traceBlockByNumber', ['pending', { tracer: 'callTracer' }]);
    expect(block.map((r: any) => r.txHash)).toEqual([first, second]);
    expect(block[1].result).toEqual({ ...traced, logs: undefined });
    const structLogs = await call(url, 'debug_traceTransaction', [second]);
    expect(structLogs.failed).toBe(false);

    // All of that happened before the block was sealed: receipts wait for the seal.
    expect(await call(url, 'eth_getTransactionReceipt', [second])).toBeNull();

    // Once sealed, the same transactions trace the same.
    const receipt = await sealedReceipt(url, second);
    expect(await call(url, 'debug_traceTransaction', [second, { tracer: 'callTracer', tracerConfig: { withLog: true } }])).toEqual(traced);
    expect(await call(url, 'debug_traceTransaction', [second])).toEqual(structLogs);
    expect(await call(url, 'debug_traceBlockByHash', [receipt.blockHash, { tracer: 'callTracer' }])).toEqual(block);
    expect(await counterAt('latest')).toBe(before + 2n);
  });

  it('a prestate diff of a pre-confirmed transaction starts where the one before it left off', async () => {
    await freshBlock(url);
    const first = await sendBump(3);
    const second = await sendBump(4);
    await preconfirmed(url, first);
    await preconfirmed(url, second);
    const diff = await call(url, 'debug_traceTransaction', [second, { tracer: 'prestateTracer', tracerConfig: { diffMode: true } }]);
    const slot0 = pad('0x0');
    const pre = BigInt(diff.pre[probeAddr.toLowerCase()].storage[slot0]);
    expect(BigInt(diff.post[probeAddr.toLowerCase()].storage[slot0])).toBe(pre + 1n);
    expect(toHex(pre)).toBe(toHex(BigInt(await call(url, 'eth_getStorageAt', [probeAddr, slot0, 'latest'])) + 1n));
  });

  it('eth_createAccessList defaults to pending: a contract only pre-confirmed is already there', async () => {
    const token = contract('Token');
    const deployer = devAccount(5);
    const carol = '0x000000000000000000000000000000000000ca01' as Address;
    await freshBlock(url);
    const hash = (await t
      .wallet(5)
      .deployContract({ abi: token.abi, bytecode: token.bytecode, args: [100n], chain: t.chain, account: deployer } as never)) as Hex;
    const sent = await call(url, 'eth_getTransactionByHash', [hash]);
    const created = getContractAddress({ from: deployer.address, nonce: BigInt(sent.nonce) });
    await preconfirmed(url, hash);
    const req = { from: deployer.address, to: created, data: encodeFunctionData({ abi: token.abi, functionName: 'transfer', args: [carol, 1n] }) };
    const pending = await call(url, 'eth_createAccessList', [req]);
    expect(pending.error).toBeUndefined();
    expect(pending.accessList).toEqual([{ address: created.toLowerCase(), storageKeys: [balanceSlot(deployer.address), balanceSlot(carol)].sort() }]);
    // At latest the contract does not exist yet: nothing to touch, and the gas is Prague's
    // calldata floor (EIP-7623: 10 per token, 4 tokens per non-zero byte).
    let tokens = 0n;
    for (let i = 2; i < req.data.length; i += 2) tokens += req.data.slice(i, i + 2) === '00' ? 1n : 4n;
    expect(await call(url, 'eth_createAccessList', [req, 'latest'])).toEqual({ accessList: [], gasUsed: toHex(21000n + 10n * tokens) });
    expect(await call(url, 'eth_getTransactionReceipt', [hash])).toBeNull();
  });
});
