// Differential test: the same signed transactions on anvil (Prague rules, the same funded
// dev accounts) and on this node give the same receipts (status, gas used, logs, created
// addresses) and the same resulting balances, nonces, code and storage.
//
// Fees are chosen so every transaction pays the same price on both chains whatever the
// base fee (legacy gas price, or EIP-1559 with tip == fee cap); only the coinbase differs.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeDeployData, encodeFunctionData, getContractAddress, pad, parseGwei, toHex, type Address, type Hex } from 'viem';
import { contract } from '../helpers/contracts.js';
import { startAnvil, type Anvil } from '../helpers/anvil.js';
import { balanceSlot } from '../helpers/genesis.js';
import { devAccount, rpc, startTestNode, type TestNode } from '../helpers/node.js';
import { waitFor } from '../helpers/wait.js';

describe('replaying signed transactions against anvil', () => {
  let anvil: Anvil;
  let t: TestNode;
  beforeAll(async () => {
    anvil = await startAnvil(['--hardfork', 'prague']);
    t = await startTestNode({
      configure: (c) => {
        c.chain.preconfIntervalMs = 50;
        c.chain.blockTimeMs = 250;
      },
    });
  });
  afterAll(async () => {
    await t?.stop();
    await anvil?.stop();
  });

  it('gives the same receipts and the same resulting state', async () => {
    const token = contract('Token');
    const probe = contract('Probe');
    const alice = devAccount(0);
    const bob = devAccount(1);
    const carol = '0x000000000000000000000000000000000000ca01' as Address;
    const price = parseGwei('3');
    const tokenAddr = getContractAddress({ from: alice.address, nonce: 0n });
    const probeAddr = getContractAddress({ from: alice.address, nonce: 1n });
    const legacy = { chainId: 31337, type: 'legacy' as const, gasPrice: price };
    const dynamic = { chainId: 31337, type: 'eip1559' as const, maxFeePerGas: price, maxPriorityFeePerGas: price };
    const raws: Hex[] = [
      await alice.signTransaction({
        ...legacy,
        nonce: 0,
        gas: 1_000_000n,
        data: encodeDeployData({ abi: token.abi, bytecode: token.bytecode, args: [10n ** 24n] }),
      }),
      await alice.signTransaction({ ...dynamic, nonce: 1, gas: 1_000_000n, data: probe.bytecode }),
      await alice.signTransaction({
        ...dynamic,
        nonce: 2,
        gas: 100_000n,
        to: tokenAddr,
        data: encodeFunctionData({ abi: token.abi, functionName: 'transfer', args: [bob.address, 5000n] }),
      }),
      await bob.signTransaction({ ...legacy, nonce: 0, gas: 21_000n, to: carol, value: 123456789n }),
      await bob.signTransaction({
        ...dynamic,
        nonce: 1,
        gas: 100_000n,
        to: tokenAddr,
        data: encodeFunctionData({ abi: token.abi, functionName: 'transfer', args: [carol, 7000n] }),
      }), // reverts: bob holds 5000
      await bob.signTransaction({ ...dynamic, nonce: 2, gas: 100_000n, to: probeAddr, data: encodeFunctionData({ abi: probe.abi, functionName: 'bump' }) }),
      await alice.signTransaction({
        ...dynamic,
        nonce: 3,
        gas: 100_000n,
        to: probeAddr,
        value: 999n,
        data: encodeFunctionData({ abi: probe.abi, functionName: 'forward', args: [carol] }),
      }),
      await alice.signTransaction({
        chainId: 31337,
        type: 'eip2930',
        gasPrice: price,
        nonce: 4,
        gas: 60_000n,
        to: probeAddr,
        data: encodeFunctionData({ abi: probe.abi, functionName: 'bump' }),
        accessList: [{ address: probeAddr, storageKeys: [pad('0x0')] }],
      }),
    ];

    const receipts: Record<string, unknown>[][] = [];
    for (const url of [anvil.url, t.node.url]) {
      const hashes: Hex[] = [];
      for (const raw of raws) {
        const r = await rpc(url, 'eth_sendRawTransaction', [raw]);
        expect(r.error, `${url}: ${JSON.stringify(r.error)}`).toBeUndefined();
        hashes.push(r.result);
      }
      const got: Record<string, unknown>[] = [];
      for (const h of hashes) {
        got.push(await waitFor(async () => (await rpc(url, 'eth_getTransactionReceipt', [h])).result, 4_000, `${url}: receipt of ${h}`));
      }
      receipts.push(got);
    }
    const comparable = (r: Record<string, any>) => ({
      status: r.status,
      gasUsed: r.gasUsed,
      type: r.type,
      contractAddress: r.contractAddress,
      from: r.from,
      to: r.to,
      effectiveGasPrice: r.effectiveGasPrice,
      logs: r.logs.map((l: Record<string, unknown>) => ({ address: l.address, topics: l.topics, data: l.data })),
    });
    expect(receipts[1]!.map(comparable)).toEqual(receipts[0]!.map(comparable));
    expect(receipts[0]!.map((r) => r.status)).toEqual(['0x1', '0x1', '0x1', '0x1', '0x0', '0x1', '0x1', '0x1']);

    // Wait for our node to seal every block the receipts name, then compare state at latest.
    const last = receipts[1]!.reduce((n, r) => (BigInt(r.blockNumber as Hex) > n ? BigInt(r.blockNumber as Hex) : n), 0n);
    await waitFor(async () => BigInt((await rpc(t.node.url, 'eth_blockNumber')).result) >= last, 5_000, `block ${last} to be sealed`);
    const accounts = [alice.address, bob.address, carol, tokenAddr, probeAddr];
    for (const a of accounts) {
      for (const method of ['eth_getBalance', 'eth_getTransactionCount', 'eth_getCode']) {
        const x = (await rpc(anvil.url, method, [a, 'latest'])).result;
        const y = (await rpc(t.node.url, method, [a, 'latest'])).result;
        expect(y, `${method} ${a}`).toBe(x);
      }
    }
    const slots: [Address, Hex][] = [
      [tokenAddr, balanceSlot(alice.address)],
      [tokenAddr, balanceSlot(bob.address)],
      [tokenAddr, balanceSlot(carol)],
      [tokenAddr, pad('0x1')],
      [probeAddr, pad('0x0')],
    ];
    for (const [a, slot] of slots) {
      const x = (await rpc(anvil.url, 'eth_getStorageAt', [a, slot, 'latest'])).result;
      const y = (await rpc(t.node.url, 'eth_getStorageAt', [a, slot, 'latest'])).result;
      expect(y, `storage ${a} ${slot}`).toBe(x);
    }
    expect(BigInt((await rpc(t.node.url, 'eth_getStorageAt', [probeAddr, pad('0x0'), 'latest'])).result)).toBe(2n);
    expect((await rpc(t.node.url, 'eth_getBalance', [carol, 'latest'])).result).toBe(toHex(123456789n + 999n));
  });
});
