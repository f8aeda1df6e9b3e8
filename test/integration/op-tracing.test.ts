// Tracing an OP chain's blocks: debug_traceTransaction and debug_traceBlockByNumber replay the
// block on the OP EVM, as it was built. The L1-info deposit (type 0x7E) traces like any
// transaction; a transfer's prestate diff shows the sender paying exactly what its receipt
// says it paid: value, L2 gas, the L1 data fee and the operator fee (which the Ethereum EVM
// would not charge); struct logs and the call tracer agree with the receipts.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseGwei, type Hex } from 'viem';
import { parseArgs } from '../../src/cli/index.js';
import { devAccount, rpc, startTestNode, type TestNode } from '../helpers/node.js';

const L1_BLOCK = '0x4200000000000000000000000000000000000015';
const DEPOSITOR = '0xdeaddeaddeaddeaddeaddeaddeaddeaddead0001';
const TO = '0x000000000000000000000000000000000000beef';
const CONSTANT = 123_456_789n;

describe('debug_trace* on the OP dev chain', () => {
  let t: TestNode;
  let url: string;
  let transfer: Hex;
  let receipt: any;
  let block: any;

  beforeAll(async () => {
    const flags = parseArgs(['--optimism', '--l1-operator-fee-constant', String(CONSTANT)]);
    if (flags === 'help') throw new Error('help');
    t = await startTestNode({ configure: (c) => void Object.assign(c.chain, { ...flags.chain, datadir: undefined }) });
    url = t.node.url;
    expect((await rpc(url, 'evm_setIntervalMining', [0])).error).toBeUndefined();
    const sender = devAccount(4);
    const raw = await sender.signTransaction({
      chainId: t.node.chainId,
      type: 'eip1559',
      nonce: 0,
      to: TO,
      value: 12345n,
      gas: 21000n,
      maxFeePerGas: parseGwei('10'),
      maxPriorityFeePerGas: 1n,
    });
    const sent = await rpc(url, 'eth_sendRawTransaction', [raw]);
    expect(sent.error).toBeUndefined();
    transfer = sent.result;
    expect((await rpc(url, 'evm_mine', [])).error).toBeUndefined();
    receipt = (await rpc(url, 'eth_getTransactionReceipt', [transfer])).result;
    expect(receipt.status).toBe('0x1');
    block = (await rpc(url, 'eth_getBlockByNumber', [receipt.blockNumber, true])).result;
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('traces the L1-info deposit (callTracer, struct logs)', async () => {
    const deposit = block.transactions[0];
    expect(deposit.type).toBe('0x7e');
    const depositReceipt = (await rpc(url, 'eth_getTransactionReceipt', [deposit.hash])).result;
    const call = await rpc(url, 'debug_traceTransaction', [deposit.hash, { tracer: 'callTracer' }]);
    expect(call.error).toBeUndefined();
    expect(call.result).toMatchObject({ type: 'CALL', from: DEPOSITOR, to: L1_BLOCK, input: deposit.input });
    expect(call.result.error).toBeUndefined();
    const steps = await rpc(url, 'debug_traceTransaction', [deposit.hash, {}]);
    expect(steps.error).toBeUndefined();
    expect(steps.result.failed).toBe(false);
    expect(steps.result.structLogs.length).toBeGreaterThan(10);
    expect(BigInt(steps.result.gas)).toBe(BigInt(depositReceipt.gasUsed));
  });

  it('replays a transfer with the L1 data and operator fees its block charged', async () => {
    const call = await rpc(url, 'debug_traceTransaction', [transfer, { tracer: 'callTracer' }]);
    expect(call.error).toBeUndefined();
    expect(call.result).toMatchObject({ type: 'CALL', to: TO, value: '0x3039', gasUsed: receipt.gasUsed });

    const diff = await rpc(url, 'debug_traceTransaction', [transfer, { tracer: 'prestateTracer', tracerConfig: { diffMode: true } }]);
    expect(diff.error).toBeUndefined();
    const from = receipt.from.toLowerCase();
    const paid = BigInt(diff.result.pre[from].balance) - BigInt(diff.result.post[from].balance);
    const l2 = BigInt(receipt.gasUsed) * BigInt(receipt.effectiveGasPrice);
    expect(BigInt(receipt.l1Fee)).toBeGreaterThan(0n);
    expect(receipt.operatorFeeConstant).toBe(`0x${CONSTANT.toString(16)}`);
    expect(paid).toBe(12345n + l2 + BigInt(receipt.l1Fee) + CONSTANT);
  });

  it('traces the whole block, deposit first', async () => {
    const traces = await rpc(url, 'debug_traceBlockByNumber', [receipt.blockNumber, { tracer: 'prestateTracer' }]);
    expect(traces.error).toBeUndefined();
    expect(traces.result.map((r: any) => r.txHash)).toEqual(block.transactions.map((tx: any) => tx.hash));
    expect(traces.result[0].result[L1_BLOCK]).toBeDefined();
    const calls = await rpc(url, 'debug_traceBlockByNumber', [receipt.blockNumber, { tracer: 'callTracer' }]);
    expect(calls.result.map((r: any) => r.result.gasUsed)).toEqual(
      await Promise.all(block.transactions.map(async (tx: any) => (await rpc(url, 'eth_getTransactionReceipt', [tx.hash])).result.gasUsed)),
    );
  });
});
