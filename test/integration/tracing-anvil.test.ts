// Differential test: the same signed transactions on anvil (Prague rules, the same funded
// dev accounts) and on this node trace the same with callTracer (with and without logs),
// prestateTracer (with and without diffMode), 4byteTracer and the struct logger; so do the
// same calls with debug_traceCall, and eth_createAccessList gives the same list and gas.
// This node's traces are taken twice, while the transaction is only pre-confirmed (when
// the test gets there before the seal) and once sealed, and must agree.
//
// What legitimately differs, and is taken out before comparing:
// - the block's fee recipient in prestate traces: each chain pays its own coinbase the
//   priority fee over its own base fee (the chains' base fees differ), so its balances do;
// - the struct logger is compared on pc, op, gas, gasCost, depth and stack (and the
//   frame's gas, failed and returnValue): geth's other per-step members (memory, storage,
//   refund) are options or bookkeeping anvil renders its own way;
// - the callTracer's top frame `gas`: geth reports the transaction's gas limit there (its
//   callTracer sets the top frame's gas from the transaction), anvil the gas left after the
//   intrinsic cost. Ours is checked to be geth's, then the member is left out;
// - accounts that did not exist before the transaction, in the (non-diff) prestateTracer:
//   anvil lists them (a fresh recipient with balance 0, a created contract with the zero
//   values of the slots its constructor wrote), geth leaves them out. Ours is checked to
//   have none, then they are dropped from anvil's;
// - 4byteTracer in debug_traceCall: anvil refuses it ("unsupported tracer type");
// - the order of eth_createAccessList's entries: geth sorts them by address (so do we),
//   anvil's come in its hash map's order; anvil's are sorted before comparing.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeDeployData, encodeFunctionData, getContractAddress, parseGwei, type Address, type Hex } from 'viem';
import { contract } from '../helpers/contracts.js';
import { startAnvil, type Anvil } from '../helpers/anvil.js';
import { devAccount, rpc, startTestNode, type TestNode } from '../helpers/node.js';
import { call, until } from '../helpers/trace.js';

const token = contract('Token');
const probe = contract('Probe');
const relay = contract('Relay');
const carol = '0x000000000000000000000000000000000000ca01' as Address;
const dave = '0x000000000000000000000000000000000000da7e' as Address;

const TRACERS: Record<string, unknown> = {
  call: { tracer: 'callTracer' },
  callWithLog: { tracer: 'callTracer', tracerConfig: { withLog: true } },
  prestate: { tracer: 'prestateTracer' },
  prestateDiff: { tracer: 'prestateTracer', tracerConfig: { diffMode: true } },
  fourByte: { tracer: '4byteTracer' },
  structLogs: {},
};

/** An account as the prestate lists it that did not exist before the transaction. */
const wasEmpty = (a: any): boolean => BigInt(a.balance ?? 0) === 0n && !a.nonce && !a.code;

/** A (non-diff) prestate without the accounts that did not exist before (see the header). */
const withoutEmpty = (frame: Record<string, any>) => Object.fromEntries(Object.entries(frame).filter(([, a]) => !wasEmpty(a)));

/** Prestate frames without the fee recipient (see the header). */
function withoutCoinbase(frame: any, coinbase: string): any {
  const drop = (accounts: Record<string, unknown> | undefined) =>
    accounts && Object.fromEntries(Object.entries(accounts).filter(([a]) => a.toLowerCase() !== coinbase));
  return 'pre' in frame && 'post' in frame ? { pre: drop(frame.pre), post: drop(frame.post) } : drop(frame);
}

function comparable(kind: string, trace: any, coinbase: string): any {
  if (kind.startsWith('prestate')) return withoutCoinbase(trace, coinbase);
  if (kind.startsWith('call')) return { ...trace, gas: undefined };
  if (kind === 'structLogs') {
    return {
      gas: trace.gas,
      failed: trace.failed,
      returnValue: trace.returnValue,
      structLogs: trace.structLogs.map((l: any) => ({ pc: l.pc, op: l.op, gas: l.gas, gasCost: l.gasCost, depth: l.depth, stack: l.stack })),
    };
  }
  return trace;
}

describe('tracing against anvil', () => {
  let anvil: Anvil;
  let t: TestNode;
  const alice = devAccount(0);
  const bob = devAccount(1);
  const tokenAddr = getContractAddress({ from: alice.address, nonce: 0n });
  const probeAddr = getContractAddress({ from: alice.address, nonce: 1n });
  const relayAddr = getContractAddress({ from: alice.address, nonce: 2n });
  const hashes: Hex[] = [];
  /** This node's traces taken while pre-confirmed, by tracer and transaction. */
  const early: Record<string, Record<Hex, unknown>> = {};
  const coinbases: string[] = [];

  beforeAll(async () => {
    // --steps-tracing: without it anvil's debug_traceTransaction logs no struct-logger steps.
    anvil = await startAnvil(['--hardfork', 'prague', '--steps-tracing']);
    t = await startTestNode({
      configure: (c) => {
        c.chain.preconfIntervalMs = 50;
        c.chain.blockTimeMs = 500;
      },
    });
    const price = parseGwei('3');
    const legacy = { chainId: 31337, type: 'legacy' as const, gasPrice: price };
    const dynamic = { chainId: 31337, type: 'eip1559' as const, maxFeePerGas: price, maxPriorityFeePerGas: price };
    const fn = (abi: any, functionName: string, args: unknown[] = []) => encodeFunctionData({ abi, functionName, args } as never);
    const raws: Hex[] = [
      await alice.signTransaction({
        ...legacy,
        nonce: 0,
        gas: 1_000_000n,
        data: encodeDeployData({ abi: token.abi, bytecode: token.bytecode, args: [10n ** 24n] }),
      }),
      await alice.signTransaction({ ...dynamic, nonce: 1, gas: 1_000_000n, data: probe.bytecode }),
      await alice.signTransaction({ ...dynamic, nonce: 2, gas: 1_000_000n, data: relay.bytecode }),
      await alice.signTransaction({ ...dynamic, nonce: 3, gas: 100_000n, to: tokenAddr, data: fn(token.abi, 'transfer', [bob.address, 5000n]) }),
      await bob.signTransaction({ ...legacy, nonce: 0, gas: 21_000n, to: carol, value: 123456789n }),
      // Reverts: bob holds 5000.
      await bob.signTransaction({ ...dynamic, nonce: 1, gas: 100_000n, to: tokenAddr, data: fn(token.abi, 'transfer', [carol, 7000n]) }),
      await bob.signTransaction({ ...dynamic, nonce: 2, gas: 100_000n, to: probeAddr, data: fn(probe.abi, 'bump') }),
      await alice.signTransaction({ ...dynamic, nonce: 4, gas: 200_000n, to: relayAddr, value: 1000n, data: fn(relay.abi, 'relay', [[carol, dave]]) }),
      // Forwards to a contract that refuses ETH: the inner call fails, the outer reverts.
      await alice.signTransaction({ ...dynamic, nonce: 5, gas: 100_000n, to: probeAddr, value: 5n, data: fn(probe.abi, 'forward', [tokenAddr]) }),
      // Runs out of gas (an exceptional halt).
      await alice.signTransaction({ ...dynamic, nonce: 6, gas: 60_000n, to: probeAddr, data: fn(probe.abi, 'burn') }),
      await alice.signTransaction({
        chainId: 31337,
        type: 'eip2930',
        gasPrice: price,
        nonce: 7,
        gas: 60_000n,
        to: probeAddr,
        data: fn(probe.abi, 'bump'),
        accessList: [{ address: probeAddr, storageKeys: [`0x${'00'.repeat(32)}`] }],
      }),
    ];
    for (const kind of Object.keys(TRACERS)) early[kind] = {};
    for (const raw of raws) {
      const hash = await call(anvil.url, 'eth_sendRawTransaction', [raw]);
      expect(await call(t.node.url, 'eth_sendRawTransaction', [raw])).toBe(hash);
      hashes.push(hash);
      await until(() => call(anvil.url, 'eth_getTransactionReceipt', [hash]), 10_000, 'anvil receipt');
      await until(async () => (await call(t.node.url, 'preconf_transactionStatus', [hash])).status !== 'pending', 10_000, 'pre-confirmation');
      for (const [kind, options] of Object.entries(TRACERS)) early[kind]![hash] = await call(t.node.url, 'debug_traceTransaction', [hash, options]);
    }
    await until(() => call(t.node.url, 'eth_getTransactionReceipt', [hashes.at(-1)]), 10_000, 'the last seal');
    for (const url of [anvil.url, t.node.url]) {
      const block = await call(url, 'eth_getBlockByNumber', ['latest', false]);
      coinbases.push(block.miner.toLowerCase());
    }
  });
  afterAll(async () => {
    await t?.stop();
    await anvil?.stop();
  });

  it('the transactions had the same outcomes on both', async () => {
    const status = async (url: string) => Promise.all(hashes.map(async (h) => (await call(url, 'eth_getTransactionReceipt', [h])).status));
    expect(await status(t.node.url)).toEqual(await status(anvil.url));
    expect(await status(t.node.url)).toEqual(['0x1', '0x1', '0x1', '0x1', '0x1', '0x0', '0x1', '0x1', '0x0', '0x0', '0x1']);
  });

  for (const [kind, options] of Object.entries(TRACERS)) {
    it(`debug_traceTransaction with ${JSON.stringify(options)} traces as anvil does`, async () => {
      for (const hash of hashes) {
        const theirs = await call(anvil.url, 'debug_traceTransaction', [hash, options]);
        const ours = await call(t.node.url, 'debug_traceTransaction', [hash, options]);
        // Traced while pre-confirmed or once sealed, the trace is the same.
        expect(early[kind]![hash], `${kind} ${hash}: pre-confirmed vs sealed`).toEqual(ours);
        const tx = await call(t.node.url, 'eth_getTransactionByHash', [hash]);
        if (kind.startsWith('call')) expect(ours.gas).toBe(tx.gas);
        if (kind === 'prestate') {
          expect(withoutEmpty(ours)).toEqual(ours);
          expect(comparable(kind, ours, coinbases[1]!), `${kind} ${hash}`).toEqual(comparable(kind, withoutEmpty(theirs), coinbases[0]!));
          continue;
        }
        expect(comparable(kind, ours, coinbases[1]!), `${kind} ${hash}`).toEqual(comparable(kind, theirs, coinbases[0]!));
      }
    });
  }

  describe('debug_traceCall and eth_createAccessList', () => {
    const fn = (abi: any, functionName: string, args: unknown[] = []) => encodeFunctionData({ abi, functionName, args } as never);
    const calls = () => [
      { from: alice.address, to: tokenAddr, gas: '0x30000', data: fn(token.abi, 'transfer', [dave, 1234n]) },
      { from: bob.address, to: tokenAddr, gas: '0x30000', data: fn(token.abi, 'transfer', [dave, 10n ** 9n]) },
      { from: alice.address, to: relayAddr, gas: '0x40000', value: '0x64', data: fn(relay.abi, 'relay', [[carol, dave, bob.address]]) },
      { from: alice.address, to: probeAddr, gas: '0x30000', data: fn(probe.abi, 'bump') },
    ];

    for (const [kind, options] of Object.entries(TRACERS).filter(([k]) => k !== 'fourByte')) {
      it(`debug_traceCall with ${JSON.stringify(options)} at latest`, async () => {
        for (const c of calls()) {
          const theirs = await call(anvil.url, 'debug_traceCall', [c, 'latest', options]);
          const ours = await call(t.node.url, 'debug_traceCall', [c, 'latest', options]);
          if (kind.startsWith('call')) expect(ours.gas).toBe(c.gas);
          expect(comparable(kind, ours, coinbases[1]!), `${kind} ${JSON.stringify(c)}`).toEqual(comparable(kind, theirs, coinbases[0]!));
        }
      });
    }

    it('eth_createAccessList gives the same list and gas for successful calls', async () => {
      for (const c of calls()) {
        const ours = await rpc(t.node.url, 'eth_createAccessList', [c, 'latest']);
        const theirs = await rpc(anvil.url, 'eth_createAccessList', [c, 'latest']);
        if (ours.result.error) {
          // anvil answers a failing call with an error instead of a list (see docs/compat.md).
          expect(theirs.error, JSON.stringify(c)).toBeDefined();
          continue;
        }
        const sorted = [...theirs.result.accessList].sort((a: any, b: any) => (BigInt(a.address) < BigInt(b.address) ? -1 : 1));
        expect(ours.result, JSON.stringify(c)).toEqual({ ...theirs.result, accessList: sorted });
      }
    });
  });
});
