// The test methods' pre-confirmation semantics (docs/test-methods.md): off unless asked
// for; an edit is shown to `pending` at once and sealed with its block; a context change
// (time, base fee) applies to what is sent next; mining seals now; a revert goes back to a
// sealed snapshot, empties the pool and shows a new block to subscribers; impersonated
// transactions survive a restart; bad parameters get -32602.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseEther, type Address, type Hex } from 'viem';
import { parseArgs } from '../../src/cli/index.js';
import { testGenesis } from '../helpers/genesis.js';
import { devAccount, rpc, startTestNode, withTestNode, type TestNode } from '../helpers/node.js';
import { spawnNode, type NodeProcess } from '../helpers/process.js';
import { waitFor } from '../helpers/wait.js';
import { RawWs } from '../helpers/ws.js';

const A = '0x0000000000000000000000000000000000005eed' as Address;
const hex = (n: bigint | number) => `0x${n.toString(16)}`;

async function ok(url: string, method: string, params: unknown[] = []): Promise<any> {
  const r = await rpc(url, method, params);
  expect(r.error, `${method}: ${JSON.stringify(r.error)}`).toBeUndefined();
  return r.result;
}

const balance = async (url: string, tag: string, who: Address = A) => BigInt(await ok(url, 'eth_getBalance', [who, tag]));
const head = async (url: string) => Number(BigInt(await ok(url, 'eth_blockNumber')));

describe('test methods: off unless asked for', () => {
  it('answer -32601 with --no-dev, and on a chain of its own genesis unless --dev', async () => {
    await withTestNode({ configure: (c) => void (c.chain.dev = false) }, async (t) => {
      const r = await rpc(t.node.url, 'anvil_setBalance', [A, '0x1']);
      expect(r.error).toEqual({ code: -32601, message: 'the method anvil_setBalance does not exist/is not available' });
      expect((await rpc(t.node.url, 'evm_snapshot')).error.code).toBe(-32601);
    });
    const genesis = JSON.stringify(testGenesis());
    await withTestNode({ configure: (c) => void (c.chain.genesis = genesis) }, async (t) => {
      expect((await rpc(t.node.url, 'hardhat_setBalance', [A, '0x1'])).error.code).toBe(-32601);
    });
    await withTestNode({ configure: (c) => void ((c.chain.genesis = genesis), (c.chain.dev = true)) }, async (t) => {
      await ok(t.node.url, 'hardhat_setBalance', [A, '0x1']);
      expect(await balance(t.node.url, 'pending')).toBe(1n);
    });
  });

  it('--dev is off with --genesis, --publish, --follow or --cluster, and refused alongside replication', () => {
    const cfg = (args: string[]) => {
      const c = parseArgs(args);
      if (c === 'help') throw new Error('help');
      return c.chain.dev;
    };
    expect(cfg([])).toBeUndefined(); // the addon turns it on for the embedded dev chain
    expect(cfg(['--genesis', 'package.json'])).toBe(false);
    expect(cfg(['--publish', 'nats://127.0.0.1:4222'])).toBe(false);
    expect(cfg(['--cluster', 'nats://127.0.0.1:4222'])).toBe(false);
    expect(cfg(['--no-build'])).toBe(false);
    expect(cfg(['--genesis', 'package.json', '--dev'])).toBe(true);
    expect(() => cfg(['--dev', '--publish', 'nats://127.0.0.1:4222'])).toThrow(/--dev excludes --publish/);
    expect(() => cfg(['--dev', '--cluster', 'nats://127.0.0.1:4222'])).toThrow(/--dev excludes/);
  });
});

describe('test methods: pre-confirmation semantics', () => {
  let t: TestNode;
  let url: string;
  beforeAll(async () => {
    // A long block time: nothing is sealed behind the test's back unless it says so.
    t = await startTestNode({ configure: (c) => void ((c.chain.preconfIntervalMs = 50), (c.chain.blockTimeMs = 60_000)) });
    url = t.node.url;
  });
  afterAll(() => t?.stop());

  it('shows an edit to pending at once, and to latest once its block is sealed', async () => {
    const before = await head(url);
    await ok(url, 'anvil_setBalance', [A, hex(parseEther('3'))]);
    expect(await balance(url, 'pending')).toBe(parseEther('3'));
    expect(await balance(url, 'latest')).toBe(0n);
    expect(await head(url)).toBe(before);
    const pending = await ok(url, 'eth_getBlockByNumber', ['pending', false]);
    await ok(url, 'anvil_addBalance', [A, hex(1n)]);
    expect(await balance(url, 'pending')).toBe(parseEther('3') + 1n);
    // The same block, one pre-confirmation further.
    const next = await ok(url, 'eth_getBlockByNumber', ['pending', false]);
    expect(next.number).toBe(pending.number);
    expect(BigInt(next.preconfIndex)).toBeGreaterThan(BigInt(pending.preconfIndex));
    await ok(url, 'anvil_mine', []);
    expect(await head(url)).toBe(before + 1);
    expect(await balance(url, 'latest')).toBe(parseEther('3') + 1n);
    expect(await balance(url, hex(before))).toBe(0n); // the archive keeps the block before
  });

  it('applies a new timestamp and base fee to what is sent next', async () => {
    const sender = devAccount(2);
    const wallet = t.wallet(2);
    const latest = await ok(url, 'eth_getBlockByNumber', ['latest', false]);
    const when = BigInt(latest.timestamp) + 1_000_000n;
    await ok(url, 'evm_setNextBlockTimestamp', [hex(when)]);
    await ok(url, 'anvil_setNextBlockBaseFeePerGas', [hex(123_456_789n)]);
    const pending = await ok(url, 'eth_getBlockByNumber', ['pending', false]);
    expect(BigInt(pending.timestamp)).toBe(when);
    expect(BigInt(pending.baseFeePerGas)).toBe(123_456_789n);
    const hash = await wallet.sendTransaction({ account: sender, to: A, value: 1n, chain: t.chain });
    await ok(url, 'evm_mine', []);
    const receipt = await t.publicClient.getTransactionReceipt({ hash });
    const block = await t.publicClient.getBlock({ blockNumber: receipt.blockNumber });
    expect(block.timestamp).toBe(when);
    expect(block.baseFeePerGas).toBe(123_456_789n);
    // Earlier than the parent: anvil's words, -32602.
    const r = await rpc(url, 'evm_setNextBlockTimestamp', [hex(when - 10n)]);
    expect(r.error.code).toBe(-32602);
    expect(r.error.message).toMatch(/^Timestamp error: \d+ is lower than previous block's timestamp/);
  });

  it('reverts to a sealed snapshot: state, head and pool go back, and subscribers see a new block', async () => {
    const sender = devAccount(3);
    const wallet = t.wallet(3);
    await ok(url, 'anvil_setBalance', [A, hex(77n)]);
    const id = await ok(url, 'evm_snapshot');
    // The snapshot sealed the edit: it is the head now.
    const snapHead = await ok(url, 'eth_getBlockByNumber', ['latest', false]);
    expect(await balance(url, 'latest')).toBe(77n);
    const ws = await RawWs.open(t.node.wsUrl);
    try {
      const sub = (await ws.request('eth_subscribe', ['newFlashblocks'])).result as string;
      const nonce = await t.publicClient.getTransactionCount({ address: sender.address, blockTag: 'pending' });
      const sent: Hex[] = [];
      for (let i = 0; i < 5; i++) sent.push(await wallet.sendTransaction({ account: sender, to: A, value: 1n, nonce: nonce + i, chain: t.chain }));
      // One with a nonce gap: it waits in the pool.
      const queued = await wallet.sendTransaction({ account: sender, to: A, value: 1n, nonce: nonce + 9, chain: t.chain });
      await ok(url, 'anvil_mine', []); // a sealed block after the snapshot, too
      await ok(url, 'anvil_setBalance', [A, hex(5n)]);
      await waitFor(
        async () => BigInt(await ok(url, 'eth_getTransactionCount', [sender.address, 'pending'])) === BigInt(nonce + 5),
        10_000,
        'the transfers pre-confirmed',
      );
      const seenBefore = ws.of(sub).length;

      expect(await ok(url, 'evm_revert', [id])).toBe(true);
      expect(await ok(url, 'eth_getBlockByNumber', ['latest', false])).toMatchObject({ number: snapHead.number, hash: snapHead.hash });
      expect(await balance(url, 'pending')).toBe(77n);
      expect(await ok(url, 'eth_getTransactionCount', [sender.address, 'pending'])).toBe(hex(nonce));
      for (const h of sent) expect(await ok(url, 'eth_getTransactionReceipt', [h])).toBeNull();
      expect(await ok(url, 'txpool_status')).toEqual({ pending: '0x0', queued: '0x0' });
      expect(await ok(url, 'preconf_transactionStatus', [queued])).toMatchObject({ status: 'dropped', reason: 'dropped by evm_revert' });
      // The block after the snapshot's head, shown at once as a new block.
      const shown = () =>
        ws
          .of(sub)
          .slice(seenBefore)
          .findIndex((b) => b.parentHash === snapHead.hash);
      await waitFor(() => shown() >= 0, 5_000, 'the new block after the revert');
      const after = ws.of(sub).slice(seenBefore);
      const firstAfter = shown();
      const first = after[firstAfter];
      expect(BigInt(first.number)).toBe(BigInt(snapHead.number) + 1n);
      expect(first.transactions).toEqual([]);
      // Nothing after it belongs to the chain that was reverted.
      for (const b of after.slice(firstAfter)) {
        expect(b.parentHash).toBe(snapHead.hash);
        for (const h of b.transactions) expect(sent).not.toContain(h);
      }
      // The snapshot is used up, as anvil's.
      expect(await ok(url, 'evm_revert', [id])).toBe(false);
      // The chain goes on from there.
      await wallet.sendTransaction({ account: sender, to: A, value: 1n, nonce, chain: t.chain });
      await ok(url, 'anvil_mine', []);
      expect(await balance(url, 'latest')).toBe(78n);
    } finally {
      await ws.close();
    }
  });

  it('drops pooled transactions on request', async () => {
    const sender = devAccount(4);
    const nonce = await t.publicClient.getTransactionCount({ address: sender.address, blockTag: 'pending' });
    const queued = await t.wallet(4).sendTransaction({ account: sender, to: A, value: 1n, nonce: nonce + 3, chain: t.chain });
    expect(await ok(url, 'anvil_dropTransaction', [queued])).toBe(queued);
    expect(await ok(url, 'anvil_dropTransaction', [queued])).toBeNull();
    expect(await ok(url, 'txpool_status')).toEqual({ pending: '0x0', queued: '0x0' });
    expect(await ok(url, 'preconf_transactionStatus', [queued])).toMatchObject({ status: 'dropped' });
  });

  it('seals on demand, by interval or at once with automine', async () => {
    expect(await ok(url, 'anvil_getIntervalMining')).toBe(60);
    expect(await ok(url, 'anvil_getAutomine')).toBe(false);
    await ok(url, 'evm_setAutomine', [true]);
    expect(await ok(url, 'anvil_getAutomine')).toBe(true);
    expect(await ok(url, 'anvil_getIntervalMining')).toBeNull();
    // With automine an edit is sealed at once: latest shows it, as on anvil.
    await ok(url, 'anvil_setBalance', [A, hex(9n)]);
    expect(await balance(url, 'latest')).toBe(9n);
    // And a transaction at the tick that pre-confirms it.
    const hash = await t.wallet(5).sendTransaction({ account: devAccount(5), to: A, value: 1n, chain: t.chain });
    await t.publicClient.waitForTransactionReceipt({ hash, timeout: 5_000 });
    await ok(url, 'evm_setAutomine', [false]);
    expect(await ok(url, 'anvil_getIntervalMining')).toBe(60);
    await ok(url, 'evm_setIntervalMining', [1]);
    expect(await ok(url, 'anvil_getIntervalMining')).toBe(1);
    const from = await head(url);
    await waitFor(async () => (await head(url)) >= from + 2, 10_000, 'two blocks sealed a second apart');
    await ok(url, 'anvil_setIntervalMining', [0]);
    expect(await ok(url, 'anvil_getIntervalMining')).toBeNull();
    await ok(url, 'anvil_mine', ['0x2']);
    await ok(url, 'evm_setIntervalMining', [60]);
  });

  it('answers bad parameters with -32602 naming them, never -32603', async () => {
    const bad: [string, unknown[]][] = [
      ['anvil_setBalance', [A, '0x']],
      ['anvil_setBalance', [A, -1]],
      ['anvil_setBalance', ['0x12', '0x1']],
      ['anvil_setBalance', [A, `0x1${'0'.repeat(64)}`]],
      ['anvil_setNonce', [A, `0x1${'0'.repeat(16)}`]],
      ['anvil_setCode', [A, '0x123']],
      ['anvil_setStorageAt', [A, '0x1', `0x${'11'.repeat(33)}`]],
      ['anvil_mine', ['0xffffffffff']],
      ['evm_mine', [{ blocks: 1, nope: 1 }]],
      ['evm_increaseTime', ['ten']],
      // Timestamps the blocks after could not count up from.
      ['evm_increaseTime', ['0x7fffffffffffffff']],
      ['evm_setNextBlockTimestamp', ['0xffffffffffffffff']],
      ['anvil_mine', ['0x2', '0xffffffffffffffff']],
      ['anvil_reset', [{ forking: { jsonRpcUrl: 'http://127.0.0.1:1' } }]],
      ['anvil_loadState', ['0x1f8b0000']],
      ['anvil_loadState', ['0x7b7d']],
      ['anvil_dropTransaction', ['0x12']],
      ['evm_setAutomine', ['yes']],
    ];
    for (const [method, params] of bad) {
      const r = await rpc(url, method, params);
      expect(r.error?.code, `${method} ${JSON.stringify(params)}: ${JSON.stringify(r)}`).toBe(-32602);
    }
    expect((await rpc(url, 'anvil_setBalance', [A, '0x1', '0x2'])).error.code).toBe(-32602);
    // Hardhat scripts pad their numbers: taken as anvil takes them.
    await ok(url, 'hardhat_setBalance', [A, '0x000000000000000000000000000000000000000000000000000000000000002a']);
    expect(await balance(url, 'pending')).toBe(42n);
  });

  it('resets to genesis', async () => {
    await ok(url, 'anvil_setBalance', [A, hex(5n)]);
    await ok(url, 'anvil_mine', ['0x3']);
    const id = await ok(url, 'evm_snapshot');
    await ok(url, 'anvil_reset', [{ forking: { blockNumber: null } }]); // what viem's reset() sends
    expect(await head(url)).toBe(0);
    expect(await balance(url, 'pending')).toBe(0n);
    expect(await balance(url, 'latest', devAccount(0).address)).toBe(parseEther('10000'));
    expect(await ok(url, 'evm_revert', [id])).toBe(false); // snapshots do not survive a reset
    await ok(url, 'anvil_mine', []);
    expect(await head(url)).toBe(1);
  });
});

describe('impersonated transactions', () => {
  // A process of its own: the store is released only when the process exits.
  const datadir = mkdtempSync(join(tmpdir(), 'preconf-dev-journal-'));
  let node: NodeProcess | undefined;
  afterAll(async () => {
    await node?.kill('SIGKILL');
    rmSync(datadir, { recursive: true, force: true });
  });
  const start = (...extra: string[]) => spawnNode(['--datadir', datadir, '--block-time-ms', '60000', ...extra]);

  it('survive a restart in the pool journal, with their sender; without --dev they are dropped', async () => {
    node = await start();
    const whale = '0x00000000000000000000000000000000000077a1' as Address;
    await ok(node.url, 'anvil_setBalance', [whale, hex(parseEther('1'))]);
    await ok(node.url, 'anvil_impersonateAccount', [whale]);
    // A nonce gap keeps it in the pool.
    const queued: Hex = await ok(node.url, 'eth_sendTransaction', [{ from: whale, to: A, value: '0x7', nonce: '0x1' }]);
    expect(await ok(node.url, 'eth_getTransactionByHash', [queued])).toMatchObject({ from: whale });
    expect(await node.kill('SIGTERM')).toBe(0);

    node = await start();
    const url = node.url;
    // The edit was sealed at shutdown; the transaction came back from the journal.
    expect(await balance(url, 'latest', whale)).toBe(parseEther('1'));
    const content = await ok(url, 'txpool_contentFrom', [whale]);
    expect(Object.values(content.queued).map((tx: any) => tx.hash)).toEqual([queued]);
    // Fill the gap: an unsigned transaction from the same sender, then both are sealed.
    await ok(url, 'eth_sendUnsignedTransaction', [{ from: whale, to: A, value: '0x1', nonce: '0x0' }]);
    await ok(url, 'anvil_mine', []);
    expect(await ok(url, 'eth_getTransactionReceipt', [queued])).toMatchObject({ from: whale, status: '0x1' });
    expect(await balance(url, 'latest')).toBe(8n);
    // Another one waits in the pool (a nonce gap); restarted without the test methods, the
    // node drops it: no key signed it.
    const unsigned: Hex = await ok(url, 'eth_sendUnsignedTransaction', [{ from: whale, to: A, value: '0x1', nonce: '0x3' }]);
    expect(await ok(url, 'eth_getTransactionByHash', [unsigned])).toMatchObject({ from: whale });
    expect(await node.kill('SIGTERM')).toBe(0);

    node = await start('--no-dev');
    expect((await rpc(node.url, 'anvil_setBalance', [A, '0x1'])).error.code).toBe(-32601);
    expect(await ok(node.url, 'eth_getTransactionByHash', [unsigned])).toBeNull();
    expect(await ok(node.url, 'txpool_status')).toEqual({ pending: '0x0', queued: '0x0' });
  }, 60_000);
});
