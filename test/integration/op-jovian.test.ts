// The OP dev chain under Jovian (`--optimism --hardfork jovian`), through viem with its OP
// Stack actions: the builder writes Jovian's L1-info deposit, each block's extraData names
// the minimum base fee and its `blobGasUsed` is the DA footprint of its transactions, which
// the gas limit bounds as it bounds their gas; receipts carry op-geth's Jovian members
// (`daFootprintGasScalar`, the transaction's DA footprint as `blobGasUsed`); viem's fee
// estimates through the Jovian GasPriceOracle are what op-revm charges.

import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createPublicClient, createWalletClient, defineChain, http, type Hex } from 'viem';
import { chainConfig, publicActionsL2 } from 'viem/op-stack';
import { parseArgs } from '../../src/cli/index.js';
import { devAccount, rpc, startTestNode, type TestNode } from '../helpers/node.js';

const MIN_BASE_FEE = 2_000_000_000n;
// Large enough that a few transfers fill the block's gas limit with their DA footprint.
const DA_SCALAR = 65_535n;
const OPERATOR_SCALAR = 5n;
const OPERATOR_CONSTANT = 1_000_000n;
const TO = '0x000000000000000000000000000000000000bEEF';
// A transfer's size estimate is Fjord's 100-byte minimum.
const TRANSFER_FOOTPRINT = 100n * DA_SCALAR;

describe('the OP dev chain under Jovian', () => {
  let t: TestNode;
  let url: string;

  function clients(account = devAccount(2)) {
    const chain = defineChain({
      ...chainConfig,
      id: t.node.chainId,
      name: 'preconf-op-jovian',
      nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
      rpcUrls: { default: { http: [url] } },
    });
    const transport = http(url, { retryCount: 0 });
    return {
      client: createPublicClient({ chain, transport, pollingInterval: 50 }).extend(publicActionsL2()),
      wallet: createWalletClient({ chain, transport, account }),
    };
  }

  beforeAll(async () => {
    const flags = parseArgs([
      '--optimism',
      '--hardfork',
      'jovian',
      '--min-base-fee',
      String(MIN_BASE_FEE),
      '--l1-da-footprint-gas-scalar',
      String(DA_SCALAR),
      '--l1-operator-fee-scalar',
      String(OPERATOR_SCALAR),
      '--l1-operator-fee-constant',
      String(OPERATOR_CONSTANT),
    ]);
    if (flags === 'help') throw new Error('help');
    t = await startTestNode({ configure: (c) => void Object.assign(c.chain, { ...flags.chain, datadir: undefined }) });
    url = t.node.url;
    expect((await rpc(url, 'evm_setIntervalMining', [0])).error).toBeUndefined();
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('holds the base fee at the minimum and names it in extraData', async () => {
    expect((await rpc(url, 'evm_mine', [])).error).toBeUndefined();
    const block = (await rpc(url, 'eth_getBlockByNumber', ['latest', false])).result;
    // Version 1, denominator 250, elasticity 6, the minimum (u64 big-endian).
    expect(block.extraData).toBe(`0x01000000fa00000006${MIN_BASE_FEE.toString(16).padStart(16, '0')}`);
    // Block 1 follows an empty genesis at 1 gwei: EIP-1559 alone would lower it.
    expect(BigInt(block.baseFeePerGas)).toBe(MIN_BASE_FEE);
    // The L1-info deposit is Jovian's (selector 0x3db6be2b, 178 bytes) and ends with the scalar.
    const deposit = (await rpc(url, 'eth_getTransactionByBlockHashAndIndex', [block.hash, '0x0'])).result;
    expect(deposit.input.slice(0, 10)).toBe('0x3db6be2b');
    expect((deposit.input.length - 2) / 2).toBe(178);
    expect(deposit.input.endsWith(DA_SCALAR.toString(16).padStart(4, '0'))).toBe(true);
  });

  it("estimates the fees viem's OP actions price through the Jovian oracle, and charges them", async () => {
    const account = devAccount(3);
    const { client, wallet } = clients(account);
    const request = { account, to: TO, value: 1000n } as const;
    // Jovian's operator fee: gas x scalar x 100 + constant (Isthmus divided by 1e6).
    const operatorFee = await client.estimateOperatorFee(request);
    expect(operatorFee).toBe(21_000n * OPERATOR_SCALAR * 100n + OPERATOR_CONSTANT);
    const l1Fee = await client.estimateL1Fee(request);
    expect(l1Fee).toBeGreaterThan(0n);
    expect(await client.getL1BaseFee()).toBe(1_000_000_000n);

    const hash = await wallet.sendTransaction(request);
    expect((await rpc(url, 'evm_mine', [])).error).toBeUndefined();
    const receipt = await client.waitForTransactionReceipt({ hash, pollingInterval: 50, timeout: 15_000 });
    expect(receipt.status).toBe('success');
    expect(receipt.l1Fee).toBe(l1Fee);
    const before = await client.getBalance({ address: account.address, blockNumber: receipt.blockNumber - 1n });
    const after = await client.getBalance({ address: account.address, blockNumber: receipt.blockNumber });
    expect(before - after - 1000n - receipt.gasUsed * receipt.effectiveGasPrice).toBe(l1Fee + operatorFee);

    const raw = (await rpc(url, 'eth_getTransactionReceipt', [hash])).result;
    expect(raw).toMatchObject({ daFootprintGasScalar: `0x${DA_SCALAR.toString(16)}`, blobGasUsed: `0x${TRANSFER_FOOTPRINT.toString(16)}` });
    const block = (await rpc(url, 'eth_getBlockByHash', [receipt.blockHash, false])).result;
    expect(BigInt(block.blobGasUsed)).toBe(TRANSFER_FOOTPRINT);
    // The deposit's receipt has no DA footprint.
    const deposits = (await rpc(url, 'eth_getBlockReceipts', [receipt.blockHash])).result.filter((r: { type: string }) => r.type === '0x7e');
    expect(deposits[0].daFootprintGasScalar).toBeUndefined();
    expect(deposits[0].blobGasUsed).toBeUndefined();
  });

  it('bounds the DA footprint by the gas limit; the pending block and its receipts carry it', async () => {
    const { client, wallet } = clients();
    const gasLimit = (await client.getBlock({ blockTag: 'latest' })).gasLimit;
    const fit = Number(gasLimit / TRANSFER_FOOTPRINT);
    expect(fit).toBeGreaterThan(0);
    const hashes: Hex[] = [];
    for (let i = 0; i <= fit; i++) hashes.push(await wallet.sendTransaction({ to: TO, value: BigInt(i + 1) }));

    // Pre-confirmed: as many as the footprint lets in, the last one waits for the next block.
    let pending: any;
    await vi.waitFor(
      async () => {
        pending = (await rpc(url, 'eth_getBlockByNumber', ['pending', false])).result;
        expect(pending.transactions.length).toBe(fit + 1); // the deposit and `fit` transfers
      },
      { timeout: 10_000, interval: 50 },
    );
    expect(BigInt(pending.blobGasUsed)).toBe(BigInt(fit) * TRANSFER_FOOTPRINT);
    expect(pending.transactions).not.toContain(hashes[fit]);
    const pendingReceipts = (await rpc(url, 'eth_getBlockReceipts', ['pending'])).result;
    const footprints = pendingReceipts.filter((r: { type: string }) => r.type !== '0x7e').map((r: { blobGasUsed: string }) => BigInt(r.blobGasUsed));
    expect(footprints.reduce((a: bigint, b: bigint) => a + b, 0n)).toBe(BigInt(pending.blobGasUsed));

    expect((await rpc(url, 'evm_mine', [])).error).toBeUndefined();
    const sealed = (await rpc(url, 'eth_getBlockByNumber', ['latest', false])).result;
    expect(BigInt(sealed.blobGasUsed)).toBe(BigInt(fit) * TRANSFER_FOOTPRINT);
    // The DA footprint above the gas target raises the next base fee (the metered gas is
    // max(gasUsed, blobGasUsed)), where the transfers' gas alone would lower it.
    expect(BigInt(sealed.gasUsed)).toBeLessThan(gasLimit / 6n);
    expect((await rpc(url, 'evm_mine', [])).error).toBeUndefined();
    const next = (await rpc(url, 'eth_getBlockByNumber', ['latest', false])).result;
    expect(BigInt(next.baseFeePerGas)).toBeGreaterThan(BigInt(sealed.baseFeePerGas));
    const last = await client.getTransactionReceipt({ hash: hashes[fit]! });
    expect(last.blockNumber).toBe(BigInt(next.number));
  });

  it('refuses --hardfork without --optimism, an unknown fork and a minimum before Jovian', () => {
    expect(() => parseArgs(['--hardfork', 'jovian'])).toThrow(/needs --optimism/);
    expect(() => parseArgs(['--optimism', '--hardfork', 'karst'])).toThrow(/--hardfork must be isthmus or jovian/);
    expect(() => parseArgs(['--optimism', '--min-base-fee', '1'])).toThrow(/--min-base-fee is Jovian's/);
  });
});
