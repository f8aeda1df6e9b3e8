// anvil_dealERC20 and anvil_setERC20Allowance, on anvil and on this node, compared: a real
// ERC-20 is deployed on each, the methods called as Foundry users call them (anvil's order:
// the account, or owner and spender, then the token), and what viem reads back compared.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPublicClient, createWalletClient, http, type Address, type Hex } from 'viem';
import { foundry } from 'viem/chains';
import { startAnvil, type Anvil } from '../helpers/anvil.js';
import { contract } from '../helpers/contracts.js';
import { devAccount, rpc, startTestNode, type TestNode } from '../helpers/node.js';

const ALICE = '0x00000000000000000000000000000000000a11ce' as Address;
const BOB = '0x0000000000000000000000000000000000000b0b' as Address;
const NO_CODE = '0x000000000000000000000000000000000000dead' as Address;

/** A JSON-RPC answer as plain data: the result, or the error's code and message. */
async function answer(url: string, method: string, params: unknown[] = []): Promise<unknown> {
  const r = await rpc(url, method, params);
  return r.error === undefined ? { result: r.result } : { code: r.error.code, message: r.error.message };
}

async function observe(url: string): Promise<Record<string, unknown>> {
  const chain = { ...foundry, rpcUrls: { default: { http: [url] } } };
  const transport = http(url, { retryCount: 0 });
  const pub = createPublicClient({ chain, transport, pollingInterval: 50 });
  const wallet = (i: number) => createWalletClient({ chain, transport, account: devAccount(i) });
  const { abi, bytecode } = contract('Erc20');
  const hash = await wallet(0).deployContract({ abi, bytecode, args: [1_000n] });
  const token = (await pub.waitForTransactionReceipt({ hash })).contractAddress as Address;
  const read = (fn: 'balanceOf' | 'allowance' | 'totalSupply', args: Address[]) =>
    pub.readContract({ address: token, abi, functionName: fn, args, blockTag: 'pending' } as never) as Promise<bigint>;

  const seen: Record<string, unknown> = {};
  seen.deal = await answer(url, 'anvil_dealERC20', [ALICE, token, '0x2a']);
  seen.balance = await read('balanceOf', [ALICE]);
  seen.dealNumber = await answer(url, 'hardhat_dealERC20', [BOB, token, 7]);
  seen.bobBalance = await read('balanceOf', [BOB]);
  seen.dealAlias = await answer(url, 'anvil_setERC20Balance', [ALICE, token, '0x64']);
  seen.balanceAgain = await read('balanceOf', [ALICE]);
  seen.totalSupply = await read('totalSupply', []); // a deal writes the balance only
  seen.allowance = await answer(url, 'anvil_setERC20Allowance', [ALICE, BOB, token, '0x1234']);
  seen.allowed = await read('allowance', [ALICE, BOB]);
  seen.reverseUntouched = await read('allowance', [BOB, ALICE]);

  // What was dealt is real: account 1 spends it, and account 2 spends what it was allowed.
  const [one, two] = [devAccount(1).address, devAccount(2).address];
  await answer(url, 'anvil_dealERC20', [one, token, '0x3e8']);
  await answer(url, 'anvil_setERC20Allowance', [one, two, token, '0x64']);
  const sent = await wallet(1).writeContract({ address: token, abi, functionName: 'transfer', args: [ALICE, 300n], chain } as never);
  seen.transfer = (await pub.waitForTransactionReceipt({ hash: sent })).status;
  const taken = await wallet(2).writeContract({ address: token, abi, functionName: 'transferFrom', args: [one, BOB, 100n], chain } as never);
  seen.transferFrom = (await pub.waitForTransactionReceipt({ hash: taken })).status;
  seen.after = {
    one: await read('balanceOf', [one]),
    alice: await read('balanceOf', [ALICE]),
    bob: await read('balanceOf', [BOB]),
    left: await read('allowance', [one, two]),
  };

  seen.noCode = await answer(url, 'anvil_dealERC20', [ALICE, NO_CODE, '0x1']);
  seen.noCodeAllowance = await answer(url, 'anvil_setERC20Allowance', [ALICE, BOB, NO_CODE, '0x1']);
  seen.eoaToken = await answer(url, 'anvil_dealERC20', [ALICE, devAccount(3).address, '0x1']);
  seen.missingAmount = ((await rpc(url, 'anvil_dealERC20', [ALICE, token])).error as { code: number }).code;
  seen.badToken = ((await rpc(url, 'anvil_setERC20Allowance', [ALICE, BOB, '0x12', '0x1'])).error as { code: number }).code;
  return seen;
}

describe('anvil_dealERC20 and anvil_setERC20Allowance, here as on anvil', () => {
  let anvil: Anvil;
  let t: TestNode;
  beforeAll(async () => {
    anvil = await startAnvil();
    t = await startTestNode();
  });
  afterAll(async () => {
    await t?.stop();
    await anvil?.stop();
  });

  it('set the balance and the allowance where the token reads them, and refuse a token with no such slot', async () => {
    const onAnvil = await observe(anvil.url);
    const onNode = await observe(t.node.url);
    expect(onNode).toEqual(onAnvil);
    const noSlot = (what: string) => ({ code: -32603, message: `Unable to set ERC20 ${what}, no slot found` });
    expect(onNode).toEqual({
      deal: { result: null },
      balance: 42n,
      dealNumber: { result: null },
      bobBalance: 7n,
      dealAlias: { result: null },
      balanceAgain: 100n,
      totalSupply: 1_000n,
      allowance: { result: null },
      allowed: 0x1234n,
      reverseUntouched: 0n,
      transfer: 'success',
      transferFrom: 'success',
      after: { one: 600n, alice: 400n, bob: 107n, left: 0n },
      noCode: noSlot('balance'),
      noCodeAllowance: noSlot('allowance'),
      eoaToken: noSlot('balance'),
      missingAmount: -32602,
      badToken: -32602,
    });
  });

  it('write the slot as anvil_setStorageAt does: latest shows it once the block is sealed', async () => {
    const url = t.node.url;
    const { abi, bytecode } = contract('Erc20');
    const hash = await t.wallet(0).deployContract({ abi, bytecode, args: [5n], chain: t.chain } as never);
    const token = (await t.publicClient.waitForTransactionReceipt({ hash })).contractAddress as Address;
    // balances is the token's mapping at slot 3 (after name, symbol, totalSupply).
    const slot = (await import('viem')).keccak256(`0x${ALICE.slice(2).padStart(64, '0')}${'3'.padStart(64, '0')}` as Hex);
    expect(await answer(url, 'anvil_dealERC20', [ALICE, token, '0xbeef'])).toEqual({ result: null });
    expect(await t.publicClient.getStorageAt({ address: token, slot, blockTag: 'pending' })).toBe(`0x${'beef'.padStart(64, '0')}`);
    await rpc(url, 'anvil_mine', []);
    const latest = await t.publicClient.readContract({ address: token, abi, functionName: 'balanceOf', args: [ALICE] } as never);
    expect(latest).toBe(0xbeefn);
  });
});
