// The block eth_simulateV1 predicts is the block the builder seals: after blocks that used
// more blob gas than the target, a simulated next block (with validation, so it pays the
// base fee) has the same excessBlobGas and baseFeePerGas as the one the builder then seals.

import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { testGenesis } from '../helpers/genesis.js';
import { rpc, startTestNode, type TestNode } from '../helpers/node.js';

const BLOB_GAS = 131_072;

interface Header {
  number: string;
  excessBlobGas: string;
  blobGasUsed: string;
  baseFeePerGas: string;
}

describe('the next header: simulated and sealed alike', () => {
  let t: TestNode;

  beforeAll(async () => {
    // Block 0 used 9 blobs (Prague's maximum) on an excess of 10: four blocks later the
    // excess is back to zero, one target (6 blobs) a block.
    const genesis = { ...testGenesis('prague'), excessBlobGas: `0x${(10 * BLOB_GAS).toString(16)}`, blobGasUsed: `0x${(9 * BLOB_GAS).toString(16)}` };
    t = await startTestNode({
      configure: (c) => {
        c.chain.genesis = JSON.stringify(genesis);
        c.chain.preconfIntervalMs = 50;
        c.chain.blockTimeMs = 250;
      },
    });
  });
  afterAll(async () => t?.stop());

  it('has the excess blob gas and base fee the builder seals, block after block', async () => {
    const excesses: bigint[] = [];
    for (let parent = 0; parent < 4; parent++) {
      const simulated = await rpc(t.node.url, 'eth_simulateV1', [{ blockStateCalls: [{}], validation: true }, `0x${parent.toString(16)}`]);
      expect(simulated.error).toBeUndefined();
      const predicted = simulated.result[0] as Header;
      const sealed = await vi.waitFor(
        async () => {
          const b = (await rpc(t.node.url, 'eth_getBlockByNumber', [`0x${(parent + 1).toString(16)}`, false])).result as Header | null;
          if (!b) throw new Error(`block ${parent + 1} not sealed yet`);
          return b;
        },
        { timeout: 10_000, interval: 50 },
      );
      expect(predicted.number).toBe(sealed.number);
      expect(predicted.excessBlobGas).toBe(sealed.excessBlobGas);
      expect(predicted.baseFeePerGas).toBe(sealed.baseFeePerGas);
      excesses.push(BigInt(sealed.excessBlobGas));
    }
    // (10 + 9 - 6) blobs, then one target less each block with no blobs.
    expect(excesses).toEqual([13n, 7n, 1n, 0n].map((blobs) => blobs * BigInt(BLOB_GAS)));
  });
});
