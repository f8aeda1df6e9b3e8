// Differential test against anvil (from npm) for the same genesis.json.
//
// anvil does not compute a real genesis header: it reports the empty-trie state root for
// block 0 and ignores extraData/gasLimit/difficulty and the fork schedule (see
// docs/compat.md). Its state trie is standard, though: the state root of its first mined
// (empty, London) block is the root of the genesis alloc. So this test compares our
// genesis state root with anvil's block-1 root, every account field, and our header hash
// with an independent keccak(rlp(header)). The genesis hash itself is checked against
// geth's recorded value in crates/chain/tests/genesis.rs.

import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pad } from 'viem';
import { startAnvil, type Anvil } from '../helpers/anvil.js';
import { balanceSlot, HOLDER, testGenesis } from '../helpers/genesis.js';
import { headerHash } from '../helpers/header.js';
import { rpc, startTestNode, type TestNode } from '../helpers/node.js';

describe('genesis, compared with anvil --init', () => {
  const genesis = testGenesis('london') as { alloc: Record<string, { storage?: Record<string, string> }> };
  const dir = mkdtempSync(join(tmpdir(), 'preconf-genesis-'));
  const file = join(dir, 'genesis.json');
  let anvil: Anvil;
  let t: TestNode;

  beforeAll(async () => {
    writeFileSync(file, JSON.stringify(genesis));
    anvil = await startAnvil(['--init', file, '--accounts', '0', '--hardfork', 'london']);
    t = await startTestNode({ configure: (c) => void (c.chain.genesis = JSON.stringify(genesis)) });
  });
  afterAll(async () => {
    await t?.stop();
    await anvil?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('has the same state root as anvil computes for the alloc', async () => {
    await rpc(anvil.url, 'evm_mine');
    const anvilBlock1 = (await rpc(anvil.url, 'eth_getBlockByNumber', ['0x1', false])).result;
    const ours = (await rpc(t.node.url, 'eth_getBlockByNumber', ['0x0', false])).result;
    expect(ours.stateRoot).toBe(anvilBlock1.stateRoot);
    expect(ours.stateRoot).not.toBe('0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421');
  });

  it('hashes its genesis header as keccak(rlp(header)) with the genesis fields', async () => {
    const ours = (await rpc(t.node.url, 'eth_getBlockByNumber', ['0x0', false])).result;
    expect(headerHash(ours)).toBe(ours.hash);
    expect(ours.gasLimit).toBe('0x1c9c380');
    expect(ours.baseFeePerGas).toBe('0x3b9aca00');
    expect(ours.withdrawalsRoot).toBeUndefined(); // London only: no Shanghai fields
  });

  it('holds the same balances, nonces, code and storage', async () => {
    for (const [address, account] of Object.entries(genesis.alloc)) {
      for (const method of ['eth_getBalance', 'eth_getTransactionCount', 'eth_getCode']) {
        const a = (await rpc(anvil.url, method, [address, 'latest'])).result;
        const b = (await rpc(t.node.url, method, [address, 'latest'])).result;
        expect(b, `${method} ${address}`).toBe(a);
      }
      for (const slot of [...Object.keys(account.storage ?? {}), pad('0x2'), balanceSlot(HOLDER)]) {
        const a = (await rpc(anvil.url, 'eth_getStorageAt', [address, slot, 'latest'])).result;
        const b = (await rpc(t.node.url, 'eth_getStorageAt', [address, slot, 'latest'])).result;
        expect(b, `storage ${address} ${slot}`).toBe(a);
      }
    }
  });
});
