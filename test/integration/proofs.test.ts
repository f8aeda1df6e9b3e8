// eth_getProof (EIP-1186) at the head, at `pending` and at recent sealed blocks,
// checked with an independent verifier (@ethereumjs/mpt) against each block's stateRoot;
// older blocks answer an error saying how far back proofs go.

import { verifyMerkleProof } from '@ethereumjs/mpt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromRlp, hexToBytes, keccak256, pad, toHex, type Hex } from 'viem';
import { contract } from '../helpers/contracts.js';
import { devAccount, rpc, startTestNode, type TestNode } from '../helpers/node.js';
import { waitFor } from '../helpers/wait.js';

interface Proof {
  address: Hex;
  balance: Hex;
  nonce: Hex;
  codeHash: Hex;
  storageHash: Hex;
  accountProof: Hex[];
  storageProof: { key: Hex; value: Hex; proof: Hex[] }[];
}

const EMPTY_ROOT = '0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421';
const EMPTY_CODE = '0xc5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470';

/** Verifies the account proof against `root`; returns [nonce, balance, storageRoot, codeHash] or null. */
async function provenAccount(root: Hex, p: Proof): Promise<Hex[] | null> {
  const value = await verifyMerkleProof(
    hexToBytes(keccak256(p.address)),
    p.accountProof.map((n) => hexToBytes(n)),
    {
      root: hexToBytes(root),
      useKeyHashing: false,
    },
  );
  return value === null ? null : (fromRlp(toHex(value)) as Hex[]);
}

async function provenSlot(storageRoot: Hex, slot: { key: Hex; proof: Hex[] }): Promise<bigint> {
  const value = await verifyMerkleProof(
    hexToBytes(keccak256(pad(slot.key))),
    slot.proof.map((n) => hexToBytes(n)),
    {
      root: hexToBytes(storageRoot),
      useKeyHashing: false,
    },
  );
  return value === null ? 0n : BigInt(fromRlp(toHex(value)) as Hex);
}

const q = (v: Hex) => BigInt(v === '0x' ? 0 : v);

describe('eth_getProof', () => {
  let t: TestNode;
  let token: Hex;
  const me = devAccount(0);
  beforeAll(async () => {
    t = await startTestNode({
      configure: (c) => {
        c.chain.preconfIntervalMs = 10;
        c.chain.blockTimeMs = 20;
      },
    });
    const compiled = contract('Token');
    const hash = await t.wallet(0).deployContract({ abi: compiled.abi, bytecode: compiled.bytecode, args: [1000n], chain: t.chain, account: me });
    token = (await t.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 10 })).contractAddress!;
  });
  afterAll(() => t.stop());

  const slotOf = (holder: Hex): Hex => keccak256(`0x${pad(holder).slice(2)}${'00'.repeat(32)}`);

  it('proves accounts and slots against the stateRoot of the head and of recent blocks', async () => {
    const block = await t.publicClient.getBlock({ blockTag: 'latest' });
    const at = toHex(block.number);
    const p = (await rpc(t.node.url, 'eth_getProof', [token, [slotOf(me.address), '0x1', '0x2'], at])).result as Proof;
    const account = await provenAccount(block.stateRoot, p);
    expect(account).not.toBeNull();
    expect(q(account![0]!)).toBe(BigInt(p.nonce));
    expect(q(account![1]!)).toBe(BigInt(p.balance));
    expect(account![2]).toBe(p.storageHash);
    expect(account![3]).toBe(p.codeHash);
    expect(p.codeHash).toBe(keccak256((await t.publicClient.getCode({ address: token, blockNumber: block.number }))!));
    // The holder's balance (slot keccak(holder, 0)), total supply (slot 1), an empty slot.
    expect(p.storageProof.map((s) => s.key)).toEqual([slotOf(me.address), '0x1', '0x2']);
    const values = await Promise.all(p.storageProof.map((s) => provenSlot(p.storageHash, s)));
    expect(values).toEqual([1000n, 1000n, 0n]);
    expect(p.storageProof.map((s) => BigInt(s.value))).toEqual(values);

    // An account that does not exist: a valid proof of absence.
    const nobody = (await rpc(t.node.url, 'eth_getProof', ['0x00000000000000000000000000000000000c0ffe', [], at])).result as Proof;
    expect(await provenAccount(block.stateRoot, nobody)).toBeNull();
    expect([nobody.balance, nobody.nonce, nobody.codeHash, nobody.storageHash]).toEqual(['0x0', '0x0', EMPTY_CODE, EMPTY_ROOT]);

    // A transfer later, the old block still proves the old balance, the new one the new.
    const before = await t.publicClient.getBalance({ address: me.address, blockNumber: block.number });
    const hash = await t.wallet(0).sendTransaction({ to: devAccount(1).address, value: 1234n, chain: t.chain, account: me });
    const receipt = await t.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 10 });
    const later = await t.publicClient.getBlock({ blockNumber: receipt.blockNumber });
    const old = (await rpc(t.node.url, 'eth_getProof', [me.address, [], at])).result as Proof;
    const now = (await rpc(t.node.url, 'eth_getProof', [me.address, [], toHex(later.number)])).result as Proof;
    expect(q((await provenAccount(block.stateRoot, old))![1]!)).toBe(before);
    const after = await t.publicClient.getBalance({ address: me.address, blockNumber: later.number });
    expect(q((await provenAccount(later.stateRoot, now))![1]!)).toBe(after);
    expect(after).toBeLessThan(before - 1234n);
  });

  it('proves the pending state (the pre-confirmed changes over the head)', async () => {
    const p = (await rpc(t.node.url, 'eth_getProof', [me.address, [], 'pending'])).result as Proof;
    // The block being built has no state root yet: the proof's root node is its root.
    const root = keccak256(p.accountProof[0]!);
    const account = await provenAccount(root, p);
    expect(q(account![0]!)).toBe(BigInt(p.nonce));
    expect(q(account![1]!)).toBe(BigInt(p.balance));
    // Pending and the head differ by what was pre-confirmed; both are consistent reads.
    const pendingNonce = BigInt((await rpc(t.node.url, 'eth_getTransactionCount', [me.address, 'pending'])).result);
    expect(BigInt(p.nonce)).toBeLessThanOrEqual(pendingNonce);
  });

  it('answers a clear error for blocks older than the kept trie history (128 blocks)', async () => {
    await waitFor(async () => (await t.publicClient.getBlockNumber()) > 140n, 20_000, '140 sealed blocks');
    const r = await rpc(t.node.url, 'eth_getProof', [me.address, [], '0x1']);
    expect(r.error.code).toBe(-32000);
    expect(r.error.message).toMatch(/^state of block 1 is no longer available: trie history goes back to block \d+$/);
    const head = await t.publicClient.getBlockNumber();
    const recent = await rpc(t.node.url, 'eth_getProof', [me.address, [], toHex(head - 100n)]);
    expect(recent.error).toBeUndefined();
    const block = await t.publicClient.getBlock({ blockNumber: head - 100n });
    expect(await provenAccount(block.stateRoot, recent.result)).not.toBeNull();
  });

  it('validates its parameters', async () => {
    expect((await rpc(t.node.url, 'eth_getProof', [me.address, '0x1', 'latest'])).error.code).toBe(-32602);
    expect((await rpc(t.node.url, 'eth_getProof', [me.address, ['0x' + '1'.repeat(66)], 'latest'])).error.code).toBe(-32602);
    expect((await rpc(t.node.url, 'eth_getProof', ['0x12', [], 'latest'])).error.code).toBe(-32602);
  });
});
