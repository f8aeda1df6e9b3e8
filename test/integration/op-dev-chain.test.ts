// The OP dev chain (`--optimism`, as anvil's) through viem with its OP Stack formatters: every
// block opens with the L1-info deposit (type 0x7E), a signed transfer is pre-confirmed and
// sealed and pays the L1 data fee beyond value + gas, receipts and transactions carry
// op-geth's members, and eth_call at `pending` reads the L1 values the deposit wrote.

import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createPublicClient, createWalletClient, defineChain, http, parseAbi, parseEther, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { chainConfig, publicActionsL2 } from 'viem/op-stack';
import { parseArgs } from '../../src/cli/index.js';
import { devAccount, rpc, startTestNode, type TestNode } from '../helpers/node.js';

const L1_BLOCK = '0x4200000000000000000000000000000000000015';
const DEPOSITOR = '0xdeaddeaddeaddeaddeaddeaddeaddeaddead0001';
const L1_BASE_FEE = 2_000_000_000n;
const TO = '0x000000000000000000000000000000000000bEEF';

describe('the OP dev chain (--optimism)', () => {
  let t: TestNode;
  let client: ReturnType<typeof opClients>['client'];
  let wallet: ReturnType<typeof opClients>['wallet'];

  function opClients(url: string, id: number) {
    const chain = defineChain({
      ...chainConfig,
      id,
      name: 'preconf-op-dev',
      nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
      rpcUrls: { default: { http: [url] } },
    });
    const transport = http(url, { retryCount: 0 });
    return {
      client: createPublicClient({ chain, transport, pollingInterval: 50 }),
      wallet: createWalletClient({ chain, transport, account: devAccount(1) }),
    };
  }

  beforeAll(async () => {
    const flags = parseArgs(['--optimism', '--l1-base-fee', String(L1_BASE_FEE)]);
    if (flags === 'help') throw new Error('help');
    t = await startTestNode({ configure: (c) => void Object.assign(c.chain, { ...flags.chain, datadir: undefined }) });
    ({ client, wallet } = opClients(t.node.url, t.node.chainId));
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('pre-confirms and seals a transfer that pays the L1 fee its receipt reports', async () => {
    const sender = devAccount(1).address;
    const value = parseEther('0.25');
    // Blocks sealed on demand only, so the pre-confirmed block is seen before its seal.
    expect((await rpc(t.node.url, 'evm_setIntervalMining', [0])).error).toBeUndefined();
    const hash = await wallet.sendTransaction({ to: TO, value });

    // Pre-confirmed: in the pending block, after the block's L1-info deposit.
    await vi.waitFor(
      async () => {
        const pending = await client.getBlock({ blockTag: 'pending', includeTransactions: true });
        expect(pending.transactions.map((tx) => tx.hash)).toContain(hash);
        expect(pending.transactions[0]!.type).toBe('deposit');
      },
      { timeout: 10_000, interval: 50 },
    );

    expect((await rpc(t.node.url, 'evm_mine', [])).error).toBeUndefined();
    const receipt = await client.waitForTransactionReceipt({ hash, pollingInterval: 50, timeout: 15_000 });
    expect(receipt.status).toBe('success');
    expect(receipt.l1Fee).toBeGreaterThan(0n);
    expect(receipt.l1GasPrice).toBe(L1_BASE_FEE);
    expect(receipt.l1GasUsed).toBeGreaterThan(0n);

    // What the sender paid beyond the value and the L2 gas is exactly the L1 fee.
    const before = await client.getBalance({ address: sender, blockNumber: receipt.blockNumber - 1n });
    const after = await client.getBalance({ address: sender, blockNumber: receipt.blockNumber });
    const l2Gas = receipt.gasUsed * receipt.effectiveGasPrice;
    expect(before - after - value - l2Gas).toBe(receipt.l1Fee);

    // The raw receipt has op-geth's Ecotone members, as hex quantities.
    const raw = (await rpc(t.node.url, 'eth_getTransactionReceipt', [hash])).result;
    expect(raw).toMatchObject({ l1BaseFeeScalar: expect.stringMatching(/^0x[0-9a-f]+$/), l1BlobBaseFee: '0x1' });
    expect(raw).toHaveProperty('l1BlobBaseFeeScalar');
  });

  it("opens every block with the L1-info deposit, with op-geth's deposit members", async () => {
    const head = await client.getBlockNumber();
    const block = await client.getBlock({ blockNumber: head, includeTransactions: true });
    const deposit = block.transactions[0]!;
    expect(deposit.type).toBe('deposit');
    expect(deposit.typeHex).toBe('0x7e');
    expect(deposit.from).toBe(DEPOSITOR);
    expect(deposit.to).toBe(L1_BLOCK);
    expect(deposit.sourceHash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(deposit.isSystemTx).toBe(false);
    expect(deposit.mint).toBe(0n);

    const byHash = (await rpc(t.node.url, 'eth_getTransactionByHash', [deposit.hash])).result;
    expect(byHash).toMatchObject({ type: '0x7e', sourceHash: deposit.sourceHash, isSystemTx: false, mint: '0x0' });

    // Receipts of the sealed block: the deposit's with its nonce (Canyon), then the rest.
    const receipts: Array<Record<string, Hex>> = (await rpc(t.node.url, 'eth_getBlockReceipts', [`0x${head.toString(16)}`])).result;
    expect(receipts[0]).toMatchObject({
      type: '0x7e',
      transactionHash: deposit.hash,
      depositNonce: expect.stringMatching(/^0x[0-9a-f]+$/),
      depositReceiptVersion: '0x1',
    });
    expect(receipts[0]).not.toHaveProperty('l1Fee');
    // The depositor's nonce before the deposit: one deposit per block since block 1.
    expect(BigInt(receipts[0]!.depositNonce!)).toBe(head - 1n);
  });

  it("serves the pending block's receipts and eth_call at pending", async () => {
    const pending: Array<Record<string, Hex>> = (await rpc(t.node.url, 'eth_getBlockReceipts', ['pending'])).result;
    expect(pending[0]).toMatchObject({ type: '0x7e', depositReceiptVersion: '0x1' });
    expect(pending[0]).toHaveProperty('depositNonce');

    // L1Block holds what the pending block's deposit wrote.
    const abi = parseAbi(['function basefee() view returns (uint256)', 'function number() view returns (uint64)']);
    const basefee = await client.readContract({ address: L1_BLOCK, abi, functionName: 'basefee', blockTag: 'pending' });
    expect(basefee).toBe(L1_BASE_FEE);
  });

  it("answers viem's publicActionsL2 from the GasPriceOracle as the chain then charges", async () => {
    const l2 = client.extend(publicActionsL2());
    expect(await l2.getL1BaseFee()).toBe(L1_BASE_FEE);

    // A transfer's L1 fee as the oracle estimates it, then as the chain charges it.
    const account = devAccount(2);
    const request = { account, to: TO, value: parseEther('0.01') } as const;
    const estimated = await l2.estimateL1Fee(request);
    expect(estimated).toBeGreaterThan(0n);
    // The total: L1 fee + operator fee (Isthmus's oracle, zero without the flags) + L2 gas.
    expect(await l2.estimateOperatorFee(request)).toBe(0n);
    const gasPrice = await client.getGasPrice();
    expect(await l2.estimateTotalFee(request)).toBe(estimated + 21_000n * gasPrice);

    const sender = createWalletClient({ chain: client.chain, transport: http(t.node.url, { retryCount: 0 }), account });
    const hash = await sender.sendTransaction(request);
    expect((await rpc(t.node.url, 'evm_mine', [])).error).toBeUndefined();
    const receipt = await client.waitForTransactionReceipt({ hash, pollingInterval: 50, timeout: 15_000 });
    // A transfer compresses below the 100-byte floor of Fjord's size estimate, signed or not,
    // so the oracle's figure is exactly what was charged.
    expect(receipt.l1Fee).toBe(estimated);
  });

  it('admits a transaction to the pool only when the balance also covers its L1 fee', async () => {
    const account = privateKeyToAccount(generatePrivateKey());
    const value = parseEther('0.01');
    const gas = 21_000n;
    const block = await client.getBlock({ blockTag: 'pending' });
    const maxFeePerGas = block.baseFeePerGas! * 2n + 1_000_000_000n;
    const raw = await account.signTransaction({
      chainId: t.node.chainId,
      type: 'eip1559',
      nonce: 0,
      to: TO,
      value,
      gas,
      maxFeePerGas,
      maxPriorityFeePerGas: 1_000_000_000n,
    });
    const l2Cost = value + gas * maxFeePerGas;
    const fund = async (wei: bigint) => expect((await rpc(t.node.url, 'anvil_setBalance', [account.address, `0x${wei.toString(16)}`])).error).toBeUndefined();

    // Value + gas × fee cap alone: refused at the door, in op-geth's pool words; the
    // overshoot is the L1 fee op-revm would charge.
    await fund(l2Cost);
    const refused = await rpc(t.node.url, 'eth_sendRawTransaction', [raw]);
    expect(refused.error?.code).toBe(-32000);
    const words = /^insufficient funds for gas \* price \+ value: balance (\d+), tx cost (\d+), overshot (\d+)$/;
    expect(refused.error?.message).toMatch(words);
    const [balance, cost, overshot] = words
      .exec(refused.error.message)!
      .slice(1)
      .map((x) => BigInt(x));
    expect(balance).toBe(l2Cost);
    const l1Fee = overshot!;
    expect(l1Fee).toBeGreaterThan(0n);
    expect(cost).toBe(l2Cost + l1Fee);

    // One wei short of the L1 fee is still refused; the whole of it is admitted.
    await fund(l2Cost + l1Fee - 1n);
    expect((await rpc(t.node.url, 'eth_sendRawTransaction', [raw])).error?.message).toMatch(/overshot 1$/);
    await fund(l2Cost + l1Fee);
    const sent = await rpc(t.node.url, 'eth_sendRawTransaction', [raw]);
    expect(sent.error).toBeUndefined();

    // Included, and the receipt's L1 fee is the one the pool counted.
    expect((await rpc(t.node.url, 'evm_mine', [])).error).toBeUndefined();
    const receipt = await client.waitForTransactionReceipt({ hash: sent.result, pollingInterval: 50, timeout: 15_000 });
    expect(receipt.status).toBe('success');
    expect(receipt.l1Fee).toBe(l1Fee);
  });

  it('refuses --optimism beside --genesis or --fork-url, and L1 values out of range', () => {
    expect(() => parseArgs(['--optimism', '--l1-operator-fee-scalar', '4294967296'])).toThrow(/--l1-operator-fee-scalar must be/);
    expect(() => parseArgs(['--optimism', '--l1-operator-fee-constant', '-1'])).toThrow(/--l1-operator-fee-constant must be/);
    expect(() => parseArgs(['--optimism', '--genesis', 'package.json'])).toThrow(/--optimism excludes --genesis/);
    expect(() => parseArgs(['--optimism', '--fork-url', 'http://127.0.0.1:1'])).toThrow(/--optimism excludes/);
    expect(() => parseArgs(['--optimism', '--l1-base-fee-scalar', '4294967296'])).toThrow(/--l1-base-fee-scalar must be/);
    expect(() => parseArgs(['--optimism', '--l1-blob-base-fee', '-1'])).toThrow(/--l1-blob-base-fee must be/);
  });
});

// Isthmus on the dev chain (its default, as op-geth's and anvil's): the operator fee the
// flags set is charged as op-revm computes it and estimated by viem through the Isthmus
// GasPriceOracle; each header carries the L2ToL1MessagePasser's storage root and the empty
// requests' hash; EIP-2935 keeps the parent hash.
describe('the OP dev chain under Isthmus, with an operator fee', () => {
  const SCALAR = 2_000_000n; // gas used x 2 wei
  const CONSTANT = 1_000_000_000_000n;
  const MESSAGE_PASSER = '0x4200000000000000000000000000000000000016';
  const HISTORY = '0x0000F90827F1C53a10cb7A02335B175320002935';
  let t: TestNode;

  beforeAll(async () => {
    const flags = parseArgs(['--optimism', '--l1-operator-fee-scalar', String(SCALAR), '--l1-operator-fee-constant', String(CONSTANT)]);
    if (flags === 'help') throw new Error('help');
    t = await startTestNode({ configure: (c) => void Object.assign(c.chain, { ...flags.chain, datadir: undefined }) });
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('charges the operator fee viem estimates, beside the L1 fee', async () => {
    const url = t.node.url;
    const chain = defineChain({
      ...chainConfig,
      id: t.node.chainId,
      name: 'preconf-op-isthmus',
      nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
      rpcUrls: { default: { http: [url] } },
    });
    const transport = http(url, { retryCount: 0 });
    const client = createPublicClient({ chain, transport, pollingInterval: 50 }).extend(publicActionsL2());
    // viem reads the oracle at `latest`: a sealed block whose deposit set the fee values.
    expect((await rpc(url, 'evm_mine', [])).error).toBeUndefined();
    const account = devAccount(3);
    const request = { account, to: TO, value: 1000n } as const;
    const operatorFee = await client.estimateOperatorFee(request);
    expect(operatorFee).toBe((21_000n * SCALAR) / 1_000_000n + CONSTANT);
    const l1Fee = await client.estimateL1Fee(request);
    const gasPrice = await client.getGasPrice();
    expect(await client.estimateTotalFee(request)).toBe(l1Fee + operatorFee + 21_000n * gasPrice);

    const wallet = createWalletClient({ chain, transport, account });
    const hash = await wallet.sendTransaction(request);
    expect((await rpc(url, 'evm_mine', [])).error).toBeUndefined();
    const receipt = await client.waitForTransactionReceipt({ hash, pollingInterval: 50, timeout: 15_000 });
    expect(receipt.status).toBe('success');
    const raw = (await rpc(url, 'eth_getTransactionReceipt', [hash])).result;
    expect(raw).toMatchObject({ operatorFeeScalar: `0x${SCALAR.toString(16)}`, operatorFeeConstant: `0x${CONSTANT.toString(16)}` });
    // What the sender paid beyond value and L2 gas: the L1 fee and the operator fee, exactly.
    const before = await client.getBalance({ address: account.address, blockNumber: receipt.blockNumber - 1n });
    const after = await client.getBalance({ address: account.address, blockNumber: receipt.blockNumber });
    expect(before - after - 1000n - receipt.gasUsed * receipt.effectiveGasPrice).toBe(receipt.l1Fee! + operatorFee);
    expect(receipt.l1Fee).toBe(l1Fee);
  });

  it("carries Isthmus's header fields and keeps the parent hash (EIP-2935)", async () => {
    const url = t.node.url;
    // A withdrawal's slot in the passer, so its storage root is not the empty trie's.
    const word = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;
    expect((await rpc(url, 'anvil_setStorageAt', [MESSAGE_PASSER, word(1), word(5)])).error).toBeUndefined();
    expect((await rpc(url, 'evm_mine', [])).error).toBeUndefined();
    const head = BigInt((await rpc(url, 'eth_blockNumber')).result);
    const tag = `0x${head.toString(16)}`;
    const block = (await rpc(url, 'eth_getBlockByNumber', [tag, false])).result;
    expect(block.requestsHash).toBe('0xe3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    const proof = (await rpc(url, 'eth_getProof', [MESSAGE_PASSER, [], tag])).result;
    expect(proof.storageHash).not.toBe('0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421');
    expect(block.withdrawalsRoot).toBe(proof.storageHash);
    const parent = (await rpc(url, 'eth_getBlockByNumber', [`0x${(head - 1n).toString(16)}`, false])).result;
    const kept = await rpc(url, 'eth_call', [{ to: HISTORY, data: `0x${(head - 1n).toString(16).padStart(64, '0')}` }, tag]);
    expect(kept.result).toBe(parent.hash);
  });
});
