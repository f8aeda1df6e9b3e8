// OP Stack chains through the node's RPC: Base's genesis as the superchain registry
// publishes it (`config: null`) loads with the registry's chain TOML given by
// --rollup-config and has Base's block-0 hash; deposits (type 0x7E) come only from the
// chain, so eth_sendRawTransaction refuses them in op-geth's words.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rpc, startTestNode, type TestNode } from '../helpers/node.js';

const FIXTURES = join(import.meta.dirname, '../fixtures/op');
// Base's L1-info deposit (test/fixtures/op/l1-fee-vectors.md, SYS_BASE).
const DEPOSIT =
  '0x7ef8f8a0389e292420bcbf9330741f72074e39562a09ff5a00fd22e4e9eee7e34b81bca494deaddeaddeaddeaddeaddeaddeaddeaddead00019442000000000000000000000000000000000000158080830f424080b8a4440a5e20000008dd00101c120000000000000004000000006721035b00000000014189960000000000000000000000000000000000000000000000000000000349b4dcdc000000000000000000000000000000000000000000000000000000004ef9325cc5991ce750960f636ca2ffbb6e209bb3ba91412f21dd78c14ff154d1930f1f9a0000000000000000000000005050f69a9786f081509234f1a7f4684b5e5b76c9';

describe('OP Stack chains', () => {
  let dir: string;
  let dev: TestNode;
  let base: TestNode;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'preconf-op-'));
    const genesis = join(dir, 'base-genesis.json');
    writeFileSync(genesis, gunzipSync(readFileSync(join(FIXTURES, 'base-mainnet-block-1/genesis.json.gz'))));
    dev = await startTestNode();
    base = await startTestNode({
      configure: (c) => {
        c.chain.genesisFile = genesis;
        c.chain.rollupConfig = join(FIXTURES, 'chain-configs/base-mainnet.toml');
        c.chain.build = false;
      },
    });
  });
  afterAll(async () => {
    await dev?.stop();
    await base?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("serves Base's genesis, read with the registry's chain TOML", async () => {
    expect((await rpc(base.node.url, 'eth_chainId', [])).result).toBe('0x2105');
    const block = (await rpc(base.node.url, 'eth_getBlockByNumber', ['0x0', false])).result;
    expect(block.hash).toBe('0xf712aa9241cc24369b143cf6dce85f0902a9731e70d66818a3a5845b296c73dd');
    expect(block.stateRoot).toBe('0xb2afcb88cd1d0ab228f0415d99b0fb90a18e8515daf5eb31f55b5c4697e18328');
  });

  it('refuses a deposit sent by a user, as op-geth does', async () => {
    const r = await rpc(dev.node.url, 'eth_sendRawTransaction', [DEPOSIT]);
    expect(r.error).toEqual({ code: -32000, message: 'transaction type not supported' });
    // The OP chain refuses it as well, in the same words.
    const onBase = await rpc(base.node.url, 'eth_sendRawTransaction', [DEPOSIT]);
    expect(onBase.error?.message).toBe('transaction type not supported');
  });
});
