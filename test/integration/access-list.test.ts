// eth_createAccessList against the real server, with viem and raw JSON-RPC: the list a
// call touches, the gas it uses with that list (checked by sending the transaction with
// it), `error` when the call fails and state overrides. The default block (pending) is
// tested in tracing-pending.test.ts, where blocks are long enough to tell it from latest.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeFunctionData, pad, toHex, type Address, type Hex } from 'viem';
import { contract } from '../helpers/contracts.js';
import { balanceSlot } from '../helpers/genesis.js';
import { devAccount, rpc, startTestNode, type TestNode } from '../helpers/node.js';
import { call, sealedReceipt } from '../helpers/trace.js';

const token = contract('Token');
const relay = contract('Relay');
const carol = '0x000000000000000000000000000000000000ca01' as Address;
const dave = '0x000000000000000000000000000000000000da7e' as Address;
const lower = (a: string) => a.toLowerCase() as Address;

describe('eth_createAccessList', () => {
  let t: TestNode;
  let url: string;
  const alice = devAccount(0);
  const bob = devAccount(1);
  let tokenAddr: Address;
  let relayAddr: Address;
  const transfer = (to: Address, value: bigint) => encodeFunctionData({ abi: token.abi, functionName: 'transfer', args: [to, value] });

  beforeAll(async () => {
    t = await startTestNode({
      configure: (c) => {
        c.chain.preconfIntervalMs = 50;
        c.chain.blockTimeMs = 300;
      },
    });
    url = t.node.url;
    const deploy = async (abi: any, bytecode: Hex, args?: unknown[]) => {
      const hash = await t.wallet(0).deployContract({ abi, bytecode, args, chain: t.chain, account: alice } as never);
      return (await sealedReceipt(url, hash)).contractAddress as Address;
    };
    tokenAddr = await deploy(token.abi, token.bytecode, [10n ** 24n]);
    relayAddr = await deploy(relay.abi, relay.bytecode);
  });
  afterAll(() => t?.stop());

  it('lists the contract and the slots a call touches; the transaction sent with it uses the gas reported', async () => {
    const data = transfer(bob.address, 1000n);
    const r = await call(url, 'eth_createAccessList', [{ from: alice.address, to: tokenAddr, data }]);
    expect(r.error).toBeUndefined();
    expect(r.accessList).toEqual([{ address: lower(tokenAddr), storageKeys: [balanceSlot(alice.address), balanceSlot(bob.address)].sort() }]);

    // viem's action gives the same.
    const viaViem = await t.publicClient.createAccessList({ account: alice.address, to: tokenAddr, data });
    expect(viaViem.gasUsed).toBe(BigInt(r.gasUsed));
    expect(viaViem.accessList.map((e) => ({ address: lower(e.address), storageKeys: e.storageKeys }))).toEqual(r.accessList);

    const hash = (await t.wallet(0).sendTransaction({
      chain: t.chain,
      account: alice,
      to: tokenAddr,
      data,
      gas: 100_000n,
      accessList: r.accessList,
    } as never)) as Hex;
    const receipt = await sealedReceipt(url, hash);
    expect(receipt.status).toBe('0x1');
    expect(receipt.gasUsed).toBe(r.gasUsed);
  });

  it('names the accounts a call reaches, without sender, recipient and precompiles', async () => {
    const data = encodeFunctionData({ abi: relay.abi, functionName: 'relay', args: [[carol, dave, '0x0000000000000000000000000000000000000004']] });
    const r = await call(url, 'eth_createAccessList', [{ from: alice.address, to: relayAddr, data, value: '0x9' }]);
    expect(r.accessList).toEqual([
      { address: carol, storageKeys: [] },
      { address: dave, storageKeys: [] },
    ]);
    // A list given with the request is kept, less the accounts that never belong in it.
    const given = [
      { address: relayAddr, storageKeys: [] },
      { address: carol, storageKeys: [pad('0x5')] },
    ];
    const seeded = await call(url, 'eth_createAccessList', [{ from: alice.address, to: relayAddr, data, value: '0x9', accessList: given }]);
    expect(seeded.accessList).toEqual([
      { address: carol, storageKeys: [pad('0x5')] },
      { address: dave, storageKeys: [] },
    ]);
    expect(BigInt(seeded.gasUsed)).toBe(BigInt(r.gasUsed) + 1900n); // one more warm slot: 1900
  });

  it('a failing call still gets its list, and the reason in `error`', async () => {
    const r = await call(url, 'eth_createAccessList', [{ from: carol, to: tokenAddr, data: transfer(bob.address, 1n) }]);
    expect(r.error).toBe('execution reverted: insufficient balance');
    expect(r.accessList).toEqual([{ address: lower(tokenAddr), storageKeys: [balanceSlot(carol)] }]);
    expect(BigInt(r.gasUsed)).toBeGreaterThan(21000n);
    // With a state override the same call succeeds.
    const overridden = await call(url, 'eth_createAccessList', [
      { from: carol, to: tokenAddr, data: transfer(bob.address, 1n) },
      'latest',
      { [tokenAddr]: { stateDiff: { [balanceSlot(carol)]: pad(toHex(5n)) } } },
    ]);
    expect(overridden.error).toBeUndefined();
    expect(overridden.accessList[0].storageKeys).toHaveLength(2);
  });

  it('refusals before execution are errors, as geth words them', async () => {
    const r = await rpc(url, 'eth_createAccessList', [{ from: carol, to: tokenAddr, value: '0x1' }]);
    expect(r.error.code).toBe(-32000);
    expect(r.error.message).toMatch(/^failed to apply transaction: 0x[0-9a-f]{64} err: insufficient funds for gas \* price \+ value/);
  });
});
