// anvil_mine_detailed / evm_mine_detailed on anvil and on this node, compared: they mine as
// evm_mine does and answer the blocks sealed, with full transactions and what each returned
// (`output`; `revertReason` for a revert with a reason).

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPublicClient, createWalletClient, encodeFunctionData, http, parseEther, type Address, type Hex } from 'viem';
import { foundry } from 'viem/chains';
import { startAnvil, type Anvil } from '../helpers/anvil.js';
import { contract } from '../helpers/contracts.js';
import { devAccount, rpc, startTestNode, type TestNode } from '../helpers/node.js';

const BOB = '0x0000000000000000000000000000000000000b0b' as Address;

const keys = (o: object): string[] => Object.keys(o).sort();

async function observe(url: string): Promise<Record<string, unknown>> {
  const chain = { ...foundry, rpcUrls: { default: { http: [url] } } };
  const transport = http(url, { retryCount: 0 });
  const pub = createPublicClient({ chain, transport, pollingInterval: 50 });
  const wallet = createWalletClient({ chain, transport, account: devAccount(0) });
  // Blocks are sealed only when asked.
  await rpc(url, 'evm_setAutomine', [false]);
  await rpc(url, 'evm_setIntervalMining', [0]);
  const { abi, bytecode } = contract('Erc20');
  let nonce = await pub.getTransactionCount({ address: devAccount(0).address });
  const deploy = await wallet.sendTransaction({ data: `${bytecode}${'0'.repeat(61)}3e8` as Hex, gas: 2_000_000n, nonce: nonce++ });
  await rpc(url, 'evm_mine', []);
  const token = (await pub.waitForTransactionReceipt({ hash: deploy })).contractAddress as Address;

  // A call that returns, one that reverts with a reason, a plain transfer, a creation.
  const call = (data: Hex) => wallet.sendTransaction({ to: token, data, gas: 200_000n, nonce: nonce++ });
  const sent = [
    await call(encodeFunctionData({ abi, functionName: 'transfer', args: [BOB, 10n] })),
    await call(encodeFunctionData({ abi, functionName: 'transfer', args: [BOB, 10_000n] })),
    await wallet.sendTransaction({ to: BOB, value: parseEther('1'), gas: 21_000n, nonce: nonce++ }),
    await wallet.sendTransaction({ data: `${bytecode}${'0'.repeat(63)}1` as Hex, gas: 2_000_000n, nonce: nonce++ }),
  ];
  const head = await pub.getBlockNumber();
  const r = await rpc(url, 'evm_mine_detailed', []);
  const [mined] = r.result as Record<string, any>[];
  const txs = mined!.transactions as Record<string, any>[];
  const latest = (await rpc(url, 'eth_getBlockByNumber', ['latest', true])).result as Record<string, any>;
  const seen: Record<string, unknown> = {
    blocks: (r.result as unknown[]).length,
    isTheNewHead: mined!.number === latest.number && mined!.hash === latest.hash && BigInt(mined!.number) === head + 1n,
    hashes: txs.map((t) => t.hash).join() === sent.join(),
    blockFields: keys(mined!).join() === keys(latest).join(),
    // What anvil adds to a block's transaction objects.
    added: txs.map((t, i) => keys(t).filter((k) => !(k in latest.transactions[i]))),
    outputs: txs.slice(0, 3).map((t) => t.output),
    createdCode: txs[3]!.output === (await pub.getCode({ address: (await pub.getTransactionReceipt({ hash: sent[3]! })).contractAddress! })),
    revertReason: txs.map((t) => t.revertReason ?? null),
  };

  // {blocks} mines that many, oldest first; a timestamp stamps the first. (anvil 1.7 wants
  // both fields of the options object named.)
  const two = (await rpc(url, 'anvil_mine_detailed', [{ blocks: 2, timestamp: null }])).result as Record<string, any>[];
  seen.two = two.map((b) => [Number(BigInt(b.number) - head), b.transactions.length]);
  const at = Number(BigInt(two[1]!.timestamp)) + 100;
  const stamped = (await rpc(url, 'evm_mine_detailed', [at])).result as Record<string, any>[];
  seen.stamped = stamped.map((b) => Number(BigInt(b.timestamp)) - at);
  seen.badParam = (await rpc(url, 'anvil_mine_detailed', ['soon'])).error?.code;
  return seen;
}

describe('anvil_mine_detailed, here as on anvil', () => {
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

  it('mines like evm_mine and answers the sealed blocks with their transactions and outputs', async () => {
    const onAnvil = await observe(anvil.url);
    const onNode = await observe(t.node.url);
    expect(onNode).toEqual(onAnvil);
    const word = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;
    // Error(string) "insufficient balance", as the token reverts with it.
    const reverted = `0x08c379a0${word(32).slice(2)}${word(20).slice(2)}${Buffer.from('insufficient balance').toString('hex').padEnd(64, '0')}`;
    expect(onNode).toEqual({
      blocks: 1,
      isTheNewHead: true,
      hashes: true,
      blockFields: true,
      added: [['output'], ['output', 'revertReason'], ['output'], ['output']],
      outputs: [word(1), reverted, '0x'],
      createdCode: true,
      revertReason: [null, 'insufficient balance', null, null],
      two: [
        [2, 0],
        [3, 0],
      ],
      stamped: [0],
      badParam: -32602,
    });
  });
});
