// debug_traceTransaction, debug_traceBlockByNumber/ByHash and debug_traceCall against the
// real server: each tracer and option on a transfer and on contract calls (Token, Relay,
// Probe from test/contracts), the outputs checked against what the chain itself says
// (receipts, storage before and after), and the bounds (timeout, output size) and errors.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeAbiParameters, encodeFunctionData, keccak256, pad, toHex, type Address, type Hex } from 'viem';
import { contract } from '../helpers/contracts.js';
import { balanceSlot } from '../helpers/genesis.js';
import { devAccount, rpc, startTestNode, type TestNode } from '../helpers/node.js';
import { call, sealedReceipt } from '../helpers/trace.js';

const token = contract('Token');
const probe = contract('Probe');
const relay = contract('Relay');
const SUPPLY = 10n ** 24n;
const MAX_BYTES = 4 * 1024 * 1024;
const carol = '0x000000000000000000000000000000000000ca01' as Address;
const dave = '0x000000000000000000000000000000000000da7e' as Address;
const lower = (a: string) => a.toLowerCase();

/** Intrinsic gas of a call (no access list): what the first struct log's `gas` is short of the limit. */
function intrinsic(data: Hex): bigint {
  let gas = 21000n;
  for (let i = 2; i < data.length; i += 2) gas += data.slice(i, i + 2) === '00' ? 4n : 16n;
  return gas;
}

describe('debug_trace*', () => {
  let t: TestNode;
  let url: string;
  const alice = devAccount(0);
  const bob = devAccount(1);
  let tokenAddr: Address;
  let probeAddr: Address;
  let relayAddr: Address;
  const tx: Record<'transfer' | 'token' | 'relay' | 'revert', Hex> = {} as never;
  const receipts: Record<string, any> = {};
  const transferData = encodeFunctionData({ abi: token.abi, functionName: 'transfer', args: [bob.address, 5000n] });

  const trace = (hash: Hex, options?: unknown) => call(url, 'debug_traceTransaction', options === undefined ? [hash] : [hash, options]);

  beforeAll(async () => {
    t = await startTestNode({
      configure: (c) => {
        c.chain.preconfIntervalMs = 50;
        c.chain.blockTimeMs = 300;
        c.chain.traceMaxBytes = MAX_BYTES;
        c.chain.traceMaxTimeoutMs = 10_000;
      },
    });
    url = t.node.url;
    const wallet = t.wallet(0);
    const deploy = async (abi: any, bytecode: Hex, args?: unknown[]) => {
      const hash = await wallet.deployContract({ abi, bytecode, args, chain: t.chain, account: alice } as never);
      return (await sealedReceipt(url, hash)).contractAddress as Address;
    };
    tokenAddr = await deploy(token.abi, token.bytecode, [SUPPLY]);
    probeAddr = await deploy(probe.abi, probe.bytecode);
    relayAddr = await deploy(relay.abi, relay.bytecode);
    const send = (from: number, req: Record<string, unknown>) =>
      t.wallet(from).sendTransaction({ chain: t.chain, account: devAccount(from), ...req } as never) as Promise<Hex>;
    tx.transfer = await send(0, { to: carol, value: 12345n, gas: 21000n });
    tx.token = await send(0, { to: tokenAddr, data: transferData, gas: 100_000n });
    tx.relay = await send(0, {
      to: relayAddr,
      value: 10n,
      gas: 200_000n,
      data: encodeFunctionData({ abi: relay.abi, functionName: 'relay', args: [[carol, dave]] }),
    });
    for (const [k, h] of Object.entries(tx)) if (k !== 'revert') receipts[k] = await sealedReceipt(url, h);
    // Bob holds 5000 now: moving more reverts with the Token's reason.
    tx.revert = await send(1, {
      to: tokenAddr,
      gas: 100_000n,
      data: encodeFunctionData({ abi: token.abi, functionName: 'transfer', args: [carol, 10n ** 9n] }),
    });
    receipts.revert = await sealedReceipt(url, tx.revert);
    expect(receipts.revert.status).toBe('0x0');
  });
  afterAll(() => t?.stop());

  describe('callTracer', () => {
    it('a plain transfer is one CALL frame with the value and 21000 gas', async () => {
      expect(await trace(tx.transfer, { tracer: 'callTracer' })).toEqual({
        from: lower(alice.address),
        to: carol,
        value: toHex(12345n),
        gas: '0x5208',
        gasUsed: '0x5208',
        input: '0x',
        type: 'CALL',
      });
    });

    it('a contract call nests its inner calls; withLog adds the logs; onlyTopCall drops the inner calls', async () => {
      const full = await trace(tx.relay, { tracer: 'callTracer' });
      expect(full).toMatchObject({ from: lower(alice.address), to: lower(relayAddr), value: '0xa', type: 'CALL', gas: toHex(200_000n) });
      expect(BigInt(full.gasUsed)).toBe(BigInt(receipts.relay.gasUsed));
      expect(full.calls.map((c: any) => [c.type, c.from, c.to, c.value])).toEqual([
        ['CALL', lower(relayAddr), carol, '0x5'],
        ['CALL', lower(relayAddr), dave, '0x5'],
      ]);
      expect(full.logs).toBeUndefined();

      const withLog = await trace(tx.relay, { tracer: 'callTracer', tracerConfig: { withLog: true } });
      const relayed = keccak256(toHex('Relayed(address,uint256)'));
      expect(withLog.logs.map((l: any) => [l.address, l.topics])).toEqual([
        [lower(relayAddr), [relayed, pad(carol)]],
        [lower(relayAddr), [relayed, pad(dave)]],
      ]);
      expect(withLog.logs.map((l: any) => l.data)).toEqual(receipts.relay.logs.map((l: any) => l.data));

      const top = await trace(tx.relay, { tracer: 'callTracer', tracerConfig: { onlyTopCall: true } });
      expect(top.calls).toBeUndefined();
      expect(top.gasUsed).toBe(full.gasUsed);
    });

    it('a reverted transaction carries the error, the revert reason and the revert data', async () => {
      const r = await trace(tx.revert, { tracer: 'callTracer' });
      expect(r.error).toBe('execution reverted');
      expect(r.revertReason).toBe('insufficient balance');
      expect(r.output.slice(0, 10)).toBe('0x08c379a0');
      expect(BigInt(r.gasUsed)).toBe(BigInt(receipts.revert.gasUsed));
    });
  });

  describe('prestateTracer', () => {
    it('reports the accounts and slots the transaction read, as they were before it', async () => {
      const block = BigInt(receipts.token.blockNumber);
      const pre = await trace(tx.token, { tracer: 'prestateTracer' });
      const before = (slot: Hex) => call(url, 'eth_getStorageAt', [tokenAddr, slot, toHex(block - 1n)]);
      expect(pre[lower(tokenAddr)].code).toBe(token.runtime);
      expect(pre[lower(tokenAddr)].storage[balanceSlot(alice.address)]).toBe(await before(balanceSlot(alice.address)));
      // Alice's earlier transactions may share the block: her state before this one is what
      // the transaction itself and the diff say.
      const sent = await call(url, 'eth_getTransactionByHash', [tx.token]);
      expect(pre[lower(alice.address)].nonce).toBe(Number(sent.nonce));
      const diff = await trace(tx.token, { tracer: 'prestateTracer', tracerConfig: { diffMode: true } });
      const paid = BigInt(receipts.token.gasUsed) * BigInt(receipts.token.effectiveGasPrice);
      expect(BigInt(pre[lower(alice.address)].balance)).toBe(BigInt(diff.post[lower(alice.address)].balance) + paid);
      expect(diff.pre[lower(alice.address)].balance).toBe(pre[lower(alice.address)].balance);
    });

    it('diffMode gives the changed fields before and after', async () => {
      const block = toHex(BigInt(receipts.token.blockNumber));
      const diff = await trace(tx.token, { tracer: 'prestateTracer', tracerConfig: { diffMode: true } });
      const post = diff.post[lower(tokenAddr)].storage;
      expect(post[balanceSlot(bob.address)]).toBe(pad(toHex(5000n)));
      expect(post[balanceSlot(alice.address)]).toBe(await call(url, 'eth_getStorageAt', [tokenAddr, balanceSlot(alice.address), block]));
      expect(diff.pre[lower(tokenAddr)].storage[balanceSlot(alice.address)]).toBe(pad(toHex(SUPPLY)));
      expect(diff.post[lower(alice.address)].nonce).toBe(diff.pre[lower(alice.address)].nonce + 1);
    });
  });

  describe('the struct logger', () => {
    it('logs every step: gas left, pc, op, depth, stack and storage; the total matches the receipt', async () => {
      const r = await trace(tx.token);
      expect(r.failed).toBe(false);
      expect(r.gas).toBe(Number(BigInt(receipts.token.gasUsed)));
      expect(r.returnValue).toBe(encodeAbiParameters([{ type: 'bool' }], [true]));
      const first = r.structLogs[0];
      expect(first).toMatchObject({ pc: 0, op: 'PUSH1', depth: 1, stack: [] });
      expect(BigInt(first.gas)).toBe(100_000n - intrinsic(transferData));
      for (const [i, log] of r.structLogs.entries()) {
        if (i > 0) expect(log.gas).toBe(r.structLogs[i - 1].gas - r.structLogs[i - 1].gasCost);
      }
      const sstores = r.structLogs.filter((l: any) => l.op === 'SSTORE');
      expect(sstores).toHaveLength(2);
      expect(sstores[1].storage).toMatchObject({ [balanceSlot(alice.address)]: pad(toHex(SUPPLY - 5000n)), [balanceSlot(bob.address)]: pad(toHex(5000n)) });
      expect(r.structLogs.at(-1).op).toBe('RETURN');
      // As geth writes them: no empty memory or return data, no zero refund counter.
      expect(Object.keys(first).sort()).toEqual(['depth', 'gas', 'gasCost', 'op', 'pc', 'stack']);
    });

    it('disableStack, disableStorage, enableMemory and limit shape the logs', async () => {
      const plain = await trace(tx.token, { disableStack: true, disableStorage: true });
      expect(plain.structLogs.some((l: any) => 'stack' in l || 'storage' in l || 'memory' in l)).toBe(false);
      const memory = await trace(tx.token, { enableMemory: true });
      expect(memory.structLogs.filter((l: any) => Array.isArray(l.memory) && l.memory.length > 0).length).toBeGreaterThan(10);
      const limited = await trace(tx.token, { limit: 5 });
      expect(limited.structLogs).toHaveLength(5);
      expect(limited.gas).toBe(memory.gas);
    });

    it('enableReturnData shows what the last call returned', async () => {
      // Stores 42, STATICCALLs the identity precompile with it, then stops.
      const code = '0x602a600052602060006020600060045afa5000';
      const at = '0x00000000000000000000000000000000000c0de0';
      const r = await call(url, 'debug_traceCall', [{ to: at, gas: '0x10000' }, 'latest', { enableReturnData: true, stateOverrides: { [at]: { code } } }]);
      const pop = r.structLogs.find((l: any) => l.op === 'POP');
      expect(pop.returnData).toBe(pad(toHex(42)));
      const without = await call(url, 'debug_traceCall', [{ to: at, gas: '0x10000' }, 'latest', { stateOverrides: { [at]: { code } } }]);
      expect(without.structLogs.some((l: any) => 'returnData' in l)).toBe(false);
    });

    it('a reverted transaction is failed, with the revert data as its return value', async () => {
      const r = await trace(tx.revert);
      expect(r.failed).toBe(true);
      expect(r.returnValue.slice(0, 10)).toBe('0x08c379a0');
      expect(r.structLogs.at(-1).op).toBe('REVERT');
    });
  });

  it('4byteTracer and noopTracer', async () => {
    expect(await trace(tx.token, { tracer: '4byteTracer' })).toEqual({ [`${transferData.slice(0, 10)}-64`]: 1 });
    expect(await trace(tx.token, { tracer: 'noopTracer' })).toEqual({});
  });

  it('debug_traceBlockByNumber and ByHash trace every transaction of the block, in order', async () => {
    const number = receipts.token.blockNumber;
    const block = await call(url, 'eth_getBlockByNumber', [number, false]);
    const byNumber = await call(url, 'debug_traceBlockByNumber', [number, { tracer: 'callTracer' }]);
    expect(byNumber.map((r: any) => r.txHash)).toEqual(block.transactions);
    const i = block.transactions.indexOf(tx.token);
    expect(byNumber[i].result).toEqual(await trace(tx.token, { tracer: 'callTracer' }));
    expect(await call(url, 'debug_traceBlockByHash', [block.hash, { tracer: 'callTracer' }])).toEqual(byNumber);
    // The struct logger too, without options.
    const logs = await call(url, 'debug_traceBlockByHash', [block.hash]);
    expect(logs[i].result).toEqual(await trace(tx.token));
  });

  describe('debug_traceCall', () => {
    const balanceOf = (who: Address) => encodeFunctionData({ abi: token.abi, functionName: 'balanceOf', args: [who] });

    it('traces a call at a block, with state overrides and block overrides', async () => {
      const r = await call(url, 'debug_traceCall', [{ to: tokenAddr, data: balanceOf(bob.address) }, 'latest', { tracer: 'callTracer' }]);
      expect(BigInt(r.output)).toBe(5000n);
      const overridden = await call(url, 'debug_traceCall', [
        { to: tokenAddr, data: balanceOf(bob.address) },
        'latest',
        { tracer: 'callTracer', stateOverrides: { [tokenAddr]: { stateDiff: { [balanceSlot(bob.address)]: pad(toHex(77n)) } } } },
      ]);
      expect(BigInt(overridden.output)).toBe(77n);
      const context = encodeFunctionData({ abi: probe.abi, functionName: 'context' });
      const atBlock = await call(url, 'debug_traceCall', [
        { to: probeAddr, data: context },
        'latest',
        { tracer: 'callTracer', blockOverrides: { number: '0x12345', time: '0x777' } },
      ]);
      expect(BigInt(atBlock.output.slice(0, 66))).toBe(0x12345n);
      expect(BigInt(`0x${atBlock.output.slice(66, 130)}`)).toBe(0x777n);
    });

    it('txIndex runs the call on the state before that transaction of the block', async () => {
      const block = await call(url, 'eth_getBlockByNumber', [receipts.token.blockNumber, false]);
      const index = block.transactions.indexOf(tx.token);
      const before = await call(url, 'debug_traceCall', [
        { to: tokenAddr, data: balanceOf(bob.address) },
        block.number,
        { tracer: 'callTracer', txIndex: toHex(index) },
      ]);
      expect(BigInt(before.output)).toBe(0n);
      const after = await call(url, 'debug_traceCall', [{ to: tokenAddr, data: balanceOf(bob.address) }, block.number, { tracer: 'callTracer' }]);
      expect(BigInt(after.output)).toBe(5000n);
      const out = await rpc(url, 'debug_traceCall', [{ to: tokenAddr }, block.number, { txIndex: toHex(block.transactions.length + 1) }]);
      expect(out.error.code).toBe(-32000);
      expect(out.error.message).toMatch(/^transaction index \d+ out of range for block 0x/);
    });

    it('a call the sender cannot pay for fails as geth says', async () => {
      const poor = '0x000000000000000000000000000000000000dead';
      const r = await rpc(url, 'debug_traceCall', [{ from: poor, to: carol, value: '0x1' }, 'latest']);
      expect(r.error.code).toBe(-32000);
      expect(r.error.message).toMatch(/^tracing failed: insufficient funds for gas \* price \+ value/);
    });
  });

  describe('bounds', () => {
    const burn = encodeFunctionData({ abi: probe.abi, functionName: 'burn' });

    it('a trace past its timeout stops with "execution timeout"; a timeout above the maximum is refused', async () => {
      const r = await rpc(url, 'debug_traceCall', [{ to: probeAddr, data: burn, gas: toHex(50_000_000n) }, 'latest', { tracer: 'callTracer', timeout: '1ms' }]);
      expect(r.error).toEqual({ code: -32000, message: 'execution timeout (1ms)' });
      const ok = await call(url, 'debug_traceCall', [{ to: probeAddr, data: burn, gas: toHex(1_000_000n) }, 'latest', { tracer: 'callTracer', timeout: '5s' }]);
      expect(ok.error).toBe('out of gas');
      const tooLong = await rpc(url, 'debug_traceCall', [{ to: probeAddr, data: burn }, 'latest', { timeout: '1m' }]);
      expect(tooLong.error.code).toBe(-32602);
      expect(tooLong.error.message).toMatch(/above this node's maximum of 10000ms/);
    });

    it('a trace whose output would pass the size limit is refused with -32005; limit keeps it small', async () => {
      const r = await rpc(url, 'debug_traceCall', [{ to: probeAddr, data: burn, gas: toHex(5_000_000n) }, 'latest']);
      expect(r.error.code).toBe(-32005);
      expect(r.error.message).toMatch(`trace output exceeds this node's limit of ${MAX_BYTES} bytes`);
      const limited = await call(url, 'debug_traceCall', [{ to: probeAddr, data: burn, gas: toHex(5_000_000n) }, 'latest', { limit: 100 }]);
      expect(limited.structLogs).toHaveLength(100);
      expect(limited.failed).toBe(true);
    });
  });

  describe('errors', () => {
    const code = async (method: string, params: unknown[]) => (await rpc(url, method, params)).error;

    it('unknown tracers, JavaScript tracers and malformed options are invalid params', async () => {
      const unknown = await code('debug_traceTransaction', [tx.token, { tracer: 'fooTracer' }]);
      expect(unknown.code).toBe(-32602);
      expect(unknown.message).toMatch(/^tracer not found: "fooTracer"/);
      const js = await code('debug_traceTransaction', [tx.token, { tracer: '{ result: function() { return 1 } }' }]);
      expect(js.code).toBe(-32602);
      expect(js.message).toMatch(/JavaScript tracers are not supported/);
      const flat = await code('debug_traceTransaction', [tx.token, { tracer: 'flatCallTracer' }]);
      expect(flat).toMatchObject({ code: -32602, message: expect.stringMatching(/^tracer not supported: flatCallTracer/) });
      expect((await code('debug_traceTransaction', [tx.token, { tracer: 7 }])).code).toBe(-32602);
      expect((await code('debug_traceTransaction', [tx.token, { tracer: 'callTracer', tracerConfig: { withLog: 'yes' } }])).code).toBe(-32602);
      expect((await code('debug_traceTransaction', [tx.token, { disableStack: 1 }])).code).toBe(-32602);
      expect((await code('debug_traceTransaction', [tx.token, { timeout: '5' }])).message).toMatch(/invalid timeout "5"/);
      expect((await code('debug_traceBlockByNumber', [`0x${'ab'.repeat(32)}`])).code).toBe(-32602);
    });

    it("what does not exist is -32000 with geth's words", async () => {
      expect(await code('debug_traceTransaction', [`0x${'12'.repeat(32)}`])).toEqual({ code: -32000, message: 'transaction not found' });
      expect(await code('debug_traceBlockByNumber', ['0x0'])).toEqual({ code: -32000, message: 'genesis is not traceable' });
      expect(await code('debug_traceBlockByNumber', ['0xffffff'])).toEqual({ code: -32000, message: `block #${0xffffff} not found` });
      const hash = `0x${'34'.repeat(32)}`;
      expect(await code('debug_traceBlockByHash', [hash])).toEqual({ code: -32000, message: `block ${hash} not found` });
    });
  });
});
