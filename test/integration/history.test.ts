// --history-blocks N keeps the bodies, receipts, transaction index and state
// history of the last N blocks. Values read while a block was recent are read again once
// others were pruned; older blocks answer geth's 4444 "pruned history unavailable", naming
// how far back the node goes, for state, blocks, logs and traces; the window survives a
// restart.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseGwei, toHex, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, describe, expect, it } from 'vitest';
import { devAccount, rpc } from '../helpers/node.js';
import { spawnNode, type NodeProcess } from '../helpers/process.js';
import { scrape, valueOf } from '../helpers/prometheus.js';
import { waitFor } from '../helpers/wait.js';
import { signTransfer } from '../helpers/transfer.js';

const KEEP = 8;

describe('--history-blocks', () => {
  const datadir = mkdtempSync(join(tmpdir(), 'preconf-history-'));
  let node: NodeProcess | undefined;
  afterAll(async () => {
    await node?.kill('SIGKILL');
    rmSync(datadir, { recursive: true, force: true });
  });
  const start = () => spawnNode(['--datadir', datadir, '--history-blocks', String(KEEP), '--block-time-ms', '100', '--preconf-interval-ms', '50']);

  it('prunes what is older than N blocks, answers 4444 for it, and keeps every recent value exact', async () => {
    node = await start();
    const url = node.url;
    const sender = devAccount(0);
    const recipient = privateKeyToAccount(generatePrivateKey()).address;
    const head = async () => Number(BigInt((await rpc(url, 'eth_blockNumber')).result));
    // The recipient's balance and the sender's nonce as read at each block while it was recent.
    const seen = new Map<number, { balance: string; nonce: string }>();
    const hashes: { hash: Hex; block: number }[] = [];
    for (let nonce = 0; nonce < 30; nonce++) {
      // Half to the same account (its history is superseded block after block), half to new ones.
      const to = nonce % 2 === 0 ? recipient : privateKeyToAccount(generatePrivateKey()).address;
      const raw = await signTransfer(sender, { to, nonce, value: 1000n, maxFeePerGas: parseGwei('20') });
      const hash = (await rpc(url, 'eth_sendRawTransaction', [raw])).result as Hex;
      const receipt = await waitFor(async () => (await rpc(url, 'eth_getTransactionReceipt', [hash])).result, 5_000, 'the receipt');
      hashes.push({ hash, block: Number(BigInt(receipt.blockNumber)) });
      const before = await head();
      const at = toHex(before);
      seen.set(before, {
        balance: (await rpc(url, 'eth_getBalance', [recipient, at])).result,
        nonce: (await rpc(url, 'eth_getTransactionCount', [sender.address, at])).result,
      });
    }

    const oldest = async (at = url) => valueOf((await scrape(at)).families, 'preconf_history_oldest_block');
    const live = await head();
    await waitFor(async () => (await oldest()) >= live - KEEP, 10_000, 'the window to move up to the head');
    const from = await oldest();
    expect(from).toBeGreaterThan(0);
    expect(valueOf((await scrape(url)).families, 'preconf_store_live_bytes')).toBeGreaterThan(0);

    // Within the window: the same answers as when the blocks were new. The chain goes on
    // (100 ms blocks), so a block may leave the window while it is read: newest first, and
    // an answer counts once the block is known to be still kept after it.
    let checked = 0;
    for (const [block, v] of [...seen].sort(([a], [b]) => b - a)) {
      if (block < from) continue;
      const balance = await rpc(url, 'eth_getBalance', [recipient, toHex(block)]);
      const nonce = await rpc(url, 'eth_getTransactionCount', [sender.address, toHex(block)]);
      if ((await oldest()) > block) break;
      expect(balance.result, `balance at ${block}: ${JSON.stringify(balance)}`).toBe(v.balance);
      expect(nonce.result, `nonce at ${block}: ${JSON.stringify(nonce)}`).toBe(v.nonce);
      checked++;
    }
    expect(checked).toBeGreaterThan(0);
    // Older: geth's code and words, and how far back this node goes.
    const pruned = toHex(from - 1);
    for (const [method, params] of [
      ['eth_getBalance', [recipient, pruned]],
      ['eth_getTransactionCount', [sender.address, pruned]],
      ['eth_getBlockByNumber', [pruned, false]],
      ['eth_getBlockReceipts', [pruned]],
      ['eth_getLogs', [{ fromBlock: pruned, toBlock: 'latest' }]],
      ['debug_traceBlockByNumber', [toHex(from), {}]],
      ['eth_call', [{ to: recipient }, pruned]],
    ] as const) {
      const r = await rpc(url, method, params as unknown as unknown[]);
      expect(r.error?.code, `${method}: ${JSON.stringify(r)}`).toBe(4444);
      expect(r.error.message).toContain('pruned history unavailable');
      // How far back the node goes, which may have moved on since `from` was read.
      const named = Number(/from block (\d+)/.exec(r.error.message)?.[1]);
      expect(named).toBeGreaterThanOrEqual(from);
    }
    // The transaction index went with the bodies; kept blocks answer.
    const old = hashes.find((h) => h.block < from)!;
    expect((await rpc(url, 'eth_getTransactionReceipt', [old.hash])).result).toBeNull();
    const newest = hashes[hashes.length - 1]!;
    const receipt = (await rpc(url, 'eth_getTransactionReceipt', [newest.hash])).result;
    if ((await oldest()) <= newest.block) expect(receipt?.blockNumber).toBe(toHex(newest.block));
    expect((await rpc(url, 'eth_getBalance', [recipient, 'latest'])).result).toBe(toHex(15n * 1000n));

    // After a restart the window is where it was, and goes on moving.
    expect(await node.kill('SIGTERM')).toBe(0);
    node = await start();
    const again = node.url;
    expect(await oldest(again)).toBeGreaterThanOrEqual(from);
    const restarted = Number(BigInt((await rpc(again, 'eth_blockNumber')).result));
    await waitFor(async () => (await oldest(again)) > restarted - KEEP, 10_000, 'the window to move after the restart');
  }, 90_000);
});
