// Base's real genesis (the superchain registry's, `config: null`, with the registry's chain
// TOML) built by the node on its own clock, no op-node: the clock is past every fork Base
// schedules after Regolith, so block 1 is the first block of all of them and opens as
// op-node's derivation opens such a block (the genesis L1Block's Bedrock L1-info deposit,
// then Ecotone's, Fjord's, Isthmus's and Jovian's upgrade transactions). The GasPriceOracle
// behind its proxy then answers as Jovian's through viem, and block 2 opens with Jovian's
// L1-info deposit.

import { mkdtempSync, rmSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createPublicClient, defineChain, http, parseAbi, parseEther } from 'viem';
import { chainConfig, publicActionsL2 } from 'viem/op-stack';
import { startTestNode, type TestNode } from '../helpers/node.js';

const FIXTURES = join(import.meta.dirname, '../fixtures/op');
const ORACLE = chainConfig.contracts.gasPriceOracle.address;
const FLAGS = ['isEcotone', 'isFjord', 'isIsthmus', 'isJovian'] as const;
const oracleAbi = parseAbi(FLAGS.map((f) => `function ${f}() view returns (bool)`));

describe("Base's genesis on the node's own clock", () => {
  let dir: string;
  let t: TestNode;

  const client = () => {
    const chain = defineChain({
      ...chainConfig,
      id: t.node.chainId,
      name: 'preconf-base-upgrades',
      nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
      rpcUrls: { default: { http: [t.node.url] } },
    });
    return createPublicClient({ chain, transport: http(t.node.url, { retryCount: 0 }), pollingInterval: 50 }).extend(publicActionsL2());
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'preconf-op-upgrades-'));
    const genesisFile = join(dir, 'base-genesis.json');
    writeFileSync(genesisFile, gunzipSync(readFileSync(join(FIXTURES, 'base-mainnet-block-1/genesis.json.gz'))));
    t = await startTestNode({
      configure: (c) => {
        c.chain.genesisFile = genesisFile;
        c.chain.rollupConfig = join(FIXTURES, 'chain-configs/base-mainnet.toml');
        Object.assign(c.chain, { blockTimeMs: 500, preconfIntervalMs: 100 });
      },
    });
  });
  afterAll(async () => {
    await t?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("upgrades every fork in block 1: the oracle is Jovian's, read through viem's OP Stack client", async () => {
    const l2 = client();
    await vi.waitFor(async () => expect(await l2.getBlockNumber()).toBeGreaterThanOrEqual(2n), { timeout: 20_000, interval: 100 });

    const one = await l2.getBlock({ blockNumber: 1n, includeTransactions: true });
    // The L1-info deposit in Bedrock's format, then 6 + 3 + 8 + 5 upgrade deposits, and no
    // pool transaction (op-node's noTxPool in a fork's first block).
    expect(one.transactions).toHaveLength(23);
    expect(one.transactions.every((tx) => tx.type === 'deposit')).toBe(true);
    expect(one.transactions[0]!.input.slice(0, 10)).toBe('0x015d8eb9');
    // Ecotone's first upgrade deposit, by the source hash the specs name.
    expect(one.transactions[1]).toMatchObject({
      sourceHash: '0x877a6077205782ea15a6dc8699fa5ebcec5e0f4389f09cb8eda09488231346f8',
      from: '0x4210000000000000000000000000000000000000',
    });
    for (const tx of one.transactions) {
      expect((await l2.getTransactionReceipt({ hash: tx.hash })).status).toBe('success');
    }

    for (const functionName of FLAGS) {
      expect(await l2.readContract({ address: ORACLE, abi: oracleAbi, functionName, blockNumber: 1n })).toBe(true);
      // Base's genesis oracle is Bedrock's: it has no such flag.
      await expect(l2.readContract({ address: ORACLE, abi: oracleAbi, functionName, blockNumber: 0n })).rejects.toThrow();
    }

    // Block 2 writes Jovian's L1-info deposit into Jovian's L1Block; the oracle prices from it.
    const two = await l2.getBlock({ blockNumber: 2n, includeTransactions: true });
    expect(two.transactions[0]!.input.slice(0, 10)).toBe('0x3db6be2b');
    expect(await l2.getL1BaseFee()).toBe(1_000_000_000n);
    const fee = await l2.estimateL1Fee({ account: '0x000000000000000000000000000000000000dEaD', to: ORACLE, value: parseEther('0'), data: '0x' });
    expect(fee).toBeGreaterThan(0n);
  });
});
