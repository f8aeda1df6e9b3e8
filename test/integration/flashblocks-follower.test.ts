// A node following a sequencer's flashblocks (--flashblocks-url): the sequencer is the OP dev
// chain with its flashblocks endpoint, the follower a replica of it (its canonical blocks
// come from the replication stream) whose pending block comes from the flashblocks only,
// executed again on its own head. Both the real command, on a real nats-server, with a
// WebSocket proxy between the sequencer's endpoint and the follower that the test can freeze.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keccak256, type Hex } from 'viem';
import { freePort } from '../helpers/child.js';
import { FlashblocksProxy, Listener } from '../helpers/flashblocks.js';
import { devAccount } from '../helpers/node.js';
import { parsePrometheus, valueOf } from '../helpers/prometheus.js';
import { call, caughtUp, Cluster, head } from '../helpers/replicas.js';
import { signTransfer } from '../helpers/transfer.js';
import { waitFor } from '../helpers/wait.js';

const metric = async (url: string, name: string): Promise<number> => valueOf(parsePrometheus(await (await fetch(`${url}/metrics`)).text()), name);

describe('following a sequencer’s flashblocks', () => {
  let c: Cluster;
  let proxy: FlashblocksProxy;
  let seen: Listener;
  let seq: string;
  let follower: string;

  beforeAll(async () => {
    const port = await freePort();
    proxy = await FlashblocksProxy.start(`ws://127.0.0.1:${port}`);
    c = await Cluster.start({
      replicas: 1,
      chainArgs: ['--optimism', '--preconf-interval-ms', '100', '--block-time-ms', '1000'],
      leaderArgs: ['--flashblocks.port', String(port)],
      // Brotli frames through the proxy; a stream silent for 600 ms is connected again.
      replicaArgs: ['--flashblocks-url', `${proxy.url}/brotli`, '--flashblocks.stale-after', '600', '--preconf-receipts'],
    });
    seen = await Listener.open(`ws://127.0.0.1:${port}/`);
    [seq, follower] = [c.leader.url, c.replica(0).url];
  }, 120_000);
  afterAll(async () => {
    seen?.close();
    await c?.stop();
    await proxy?.close();
  });

  it("serves the sequencer's flashblocks as its pending block, and promotes them when the block seals", async () => {
    // Wait until the follower shows a block of its own from flashblocks, or the transfer
    // could land in a block it has not started following yet.
    await waitFor(async () => (await metric(follower, 'preconf_flashblocks_applied_total')) > 0, 10_000, 'a first flashblock executed');
    const chainId = Number(await call<string>(seq, 'eth_chainId'));
    const sender = devAccount(3);
    // A fresh recipient: only this transfer changes its balance.
    const to = `0x${keccak256(`0x${Date.now().toString(16).padStart(16, '0')}`).slice(-40)}` as Hex;
    const nonce = Number(await call<string>(seq, 'eth_getTransactionCount', [sender.address, 'pending']));
    const hash = await call<Hex>(seq, 'eth_sendRawTransaction', [await signTransfer(sender, { to, nonce, chainId, value: 12345n })]);

    // Pre-confirmed on the follower, from the flashblocks.
    const pending = await waitFor(
      async () => {
        const b = await call(follower, 'eth_getBlockByNumber', ['pending', false]);
        return (b.transactions as Hex[]).includes(hash) ? b : null;
      },
      10_000,
      'the transfer in the follower’s pending block',
      10,
    );
    const number = BigInt(pending.number);
    // The flashblocks of that block up to the same transactions.
    const fbs = seen.of(number);
    const hashes = fbs.flatMap((f) => f.diff.transactions.map((t) => keccak256(t)));
    expect(hashes.slice(0, pending.transactions.length)).toEqual(pending.transactions);
    const withTx = fbs.find((f) => f.diff.transactions.some((t) => keccak256(t) === hash))!;
    expect(withTx).toBeDefined();

    // Every pending read from the flashblocks' state (read before the block seals, or the
    // follower's pending moves on: then the same figures are latest's).
    const at = (await head(follower)) < Number(number) ? 'pending' : `0x${number.toString(16)}`;
    const balance = await call<Hex>(follower, 'eth_getBalance', [to, at]);
    expect(BigInt(balance)).toBe(BigInt(withTx.metadata.new_account_balances[to.toLowerCase() as Hex] ?? withTx.metadata.new_account_balances[to as Hex]!));
    expect(BigInt(balance)).toBe(12345n);
    // eth_call reads the same state: the recipient's balance through the BALANCE opcode.
    const code = `0x73${to.slice(2)}3160005260206000f3`; // PUSH20 to, BALANCE, MSTORE 0, RETURN 32
    const called = await call<Hex>(follower, 'eth_call', [{ data: code }, at]);
    expect(BigInt(called)).toBe(12345n);
    const receipt = await call(follower, 'eth_getTransactionReceipt', [hash]);
    expect(receipt.status).toBe('0x1');
    expect(BigInt(receipt.blockNumber)).toBe(number);
    const published = Object.values(withTx.metadata.receipts[hash]!)[0]!;
    expect(BigInt(receipt.cumulativeGasUsed)).toBe(BigInt(published.cumulativeGasUsed));
    const receipts = await call<any[]>(follower, 'eth_getBlockReceipts', [at]);
    expect(receipts.map((r) => r.transactionHash)).toContain(hash);

    // The block seals: the follower's block is the sequencer's, promoted, no mismatch.
    await waitFor(async () => (await head(seq)) > Number(number), 10_000, 'the block sealed');
    await caughtUp(seq, follower);
    const [a, b] = await Promise.all([seq, follower].map((u) => call(u, 'eth_getBlockByNumber', [`0x${number.toString(16)}`, false])));
    expect(b.hash).toBe(a.hash);
    expect(seen.of(number).at(-1)!.diff.block_hash).toBe(a.hash);
    await waitFor(async () => (await metric(follower, 'preconf_flashblocks_promoted_total')) > 0, 5_000, 'a promotion counted');
    expect(await metric(follower, 'preconf_flashblocks_mismatches_total')).toBe(0);
    expect(await metric(follower, 'preconf_flashblocks_applied_total')).toBeGreaterThan(0);
  });

  it('never answers null for pending across block boundaries', async () => {
    const start = await head(seq);
    let polls = 0;
    let fromFlashblocks = 0;
    while ((await head(follower)) < start + 4) {
      const [latest, pending, balance] = await Promise.all([
        call(follower, 'eth_getBlockByNumber', ['latest', false]),
        call(follower, 'eth_getBlockByNumber', ['pending', false]),
        call<Hex | null>(follower, 'eth_getBalance', [devAccount(3).address, 'pending']),
      ]);
      expect(pending).not.toBeNull();
      expect(balance).not.toBeNull();
      // Pending is the block after latest (from flashblocks) or, between a seal and the next
      // block's first flashblock, latest itself; never behind it.
      expect(BigInt(pending.number)).toBeGreaterThanOrEqual(BigInt(latest.number));
      if (BigInt(pending.number) > BigInt(latest.number)) fromFlashblocks++;
      polls++;
      await new Promise((r) => setTimeout(r, 15));
    }
    expect(polls).toBeGreaterThan(20);
    expect(fromFlashblocks).toBeGreaterThan(polls / 2);
  }, 30_000);

  it('connects again when the stream goes silent, and pending catches up', async () => {
    const before = await metric(follower, 'preconf_flashblocks_stale_total');
    proxy.frozen = true;
    await waitFor(async () => (await metric(follower, 'preconf_flashblocks_stale_total')) > before, 10_000, 'a silent stream noticed');
    // Meanwhile canonical blocks still arrive: pending falls back to latest, never null.
    const h = await head(follower);
    await waitFor(async () => (await head(follower)) > h + 1, 10_000, 'blocks sealed while silent');
    const latest = await call(follower, 'eth_getBlockByNumber', ['latest', false]);
    const stalled = await call(follower, 'eth_getBlockByNumber', ['pending', false]);
    expect(stalled).not.toBeNull();
    expect(BigInt(stalled.number)).toBeGreaterThanOrEqual(BigInt(latest.number));
    proxy.frozen = false;
    await waitFor(async () => (await metric(follower, 'preconf_flashblocks_connected')) === 1, 10_000, 'connected again');
    const reconnectedOn = await head(follower);
    expect(await metric(follower, 'preconf_flashblocks_reconnects_total')).toBeGreaterThan(0);
    // Pending comes from flashblocks again: the block after the head, as the sequencer's.
    const back = await waitFor(
      async () => {
        const [l, p] = await Promise.all([
          call(follower, 'eth_getBlockByNumber', ['latest', false]),
          call(follower, 'eth_getBlockByNumber', ['pending', false]),
        ]);
        return BigInt(p.number) === BigInt(l.number) + 1n && p.transactions.length > 0 ? p : null;
      },
      10_000,
      'pending from flashblocks again',
      20,
    );
    // Already for the block open when it connected: the endpoint sent that block's
    // flashblocks so far first, so the follower did not wait for the next block.
    expect(Number(back.number)).toBe(reconnectedOn + 1);
  }, 40_000);
});
