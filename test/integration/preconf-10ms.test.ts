// The node at 10 ms pre-confirmations (500 ms blocks, up to 50 a block) with a
// few hundred transactions. The streams and reads must stay right at that count: each
// block's preconfIndex goes 1, 2, 3… without a gap, a pre-confirmation's transactions begin
// with the previous one's, every transaction is announced once and in block order, a
// sender's transactions keep their nonce order, `pending` never goes backwards, and a
// pending receipt names the place the transaction keeps once sealed. No timings asserted.

import { afterAll, describe, expect, it, vi } from 'vitest';
import { keccak256, parseGwei, type Hex } from 'viem';
import { devAccount } from '../helpers/node.js';
import { spawnNode, type NodeProcess } from '../helpers/process.js';
import { RawWs } from '../helpers/ws.js';
import { signTransfer } from '../helpers/transfer.js';

const SENDERS = [1, 2, 3];
const PER_SENDER = 100;
const BATCH = 15;

interface Flashblock {
  number: string;
  preconfIndex: string;
  transactions: string[];
}

async function rpc(url: string, method: string, params: unknown[] = []): Promise<any> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const json = (await res.json()) as { result?: unknown; error?: unknown };
  if (json.error) throw new Error(`${method}: ${JSON.stringify(json.error)}`);
  return json.result;
}

describe('pre-confirmations every 10 ms', () => {
  let node: NodeProcess | undefined;
  let ws: RawWs | undefined;
  afterAll(async () => {
    ws?.socket.terminate();
    await node?.kill('SIGKILL');
  });

  it('a few hundred transactions: gap-free preconfIndex, ordered streams, monotonic pending, right receipts', async () => {
    node = await spawnNode(['--ephemeral', '--preconf-interval-ms', '10', '--block-time-ms', '500', '--preconf-receipts']);
    const url = node.url;
    ws = await RawWs.open(url.replace('http', 'ws'));
    const blocks = (await ws.request('eth_subscribe', ['newFlashblocks'])).result as string;
    const hashes = (await ws.request('eth_subscribe', ['newFlashblockTransactions'])).result as string;
    const heads = (await ws.request('eth_subscribe', ['newHeads'])).result as string;

    // Transfers from three senders, interleaved: sender s's nonces in order.
    const txs: { raw: Hex; sender: number; nonce: number }[] = [];
    for (let nonce = 0; nonce < PER_SENDER; nonce++) {
      for (const s of SENDERS) {
        const raw = await signTransfer(devAccount(s), { to: devAccount(9).address, nonce, value: BigInt(nonce + 1), maxFeePerGas: parseGwei('100') });
        txs.push({ raw, sender: s, nonce });
      }
    }

    // A poller on one connection: each read starts after the previous one ended, so the
    // pending block it sees must never be older than the one before.
    let polling = true;
    const seen: [number, number][] = [];
    const poller = (async () => {
      while (polling) {
        const b = await rpc(url, 'eth_getBlockByNumber', ['pending', false]);
        seen.push([Number(b.number), Number(b.preconfIndex)]);
      }
    })();

    // Pending receipts as soon as a pre-confirmation shows a transaction.
    const pendingReceipts: Promise<{ hash: string; number: number; index: number; receipt: any }>[] = [];
    ws.on(blocks, (b: Flashblock) => {
      const index = b.transactions.length - 1;
      const hash = b.transactions[index];
      if (hash && pendingReceipts.length < 60) {
        pendingReceipts.push(rpc(url, 'eth_getTransactionReceipt', [hash]).then((receipt) => ({ hash, number: Number(b.number), index, receipt })));
      }
    });

    // In batches, each sent once the previous one is pre-confirmed and a few more
    // pre-confirmations went out: spread over many pre-confirmations and several blocks.
    for (let i = 0; i < txs.length; i += BATCH) {
      const shown = ws.of(blocks).length;
      await vi.waitFor(() => expect(ws!.of(blocks).length).toBeGreaterThanOrEqual(shown + 8), { timeout: 20_000, interval: 5 });
      const batch = txs.slice(i, i + BATCH).map((t, k) => ({ jsonrpc: '2.0', id: k, method: 'eth_sendRawTransaction', params: [t.raw] }));
      const res = (await (await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(batch) })).json()) as any[];
      expect(res.filter((r) => r.error)).toEqual([]);
      await vi.waitFor(() => expect(ws!.of(hashes).length).toBeGreaterThanOrEqual(i + batch.length), { timeout: 20_000, interval: 5 });
    }
    const all = txs.map((t) => t.raw);
    await vi.waitFor(() => expect(sealedCount()).toBe(all.length), { timeout: 20_000, interval: 20 });
    polling = false;
    await poller;

    function sealedCount(): number {
      // newHeads carry headers only: count through the flashblocks of sealed blocks.
      const sealed = new Set(ws!.of(heads).map((h: { number: string }) => Number(h.number)));
      const last = new Map<number, number>();
      for (const b of ws!.of(blocks) as Flashblock[]) if (sealed.has(Number(b.number))) last.set(Number(b.number), b.transactions.length);
      return [...last.values()].reduce((a, n) => a + n, 0);
    }

    // preconfIndex: 1, 2, 3… within a block, a new block starting again at 1; each
    // pre-confirmation's transactions begin with the previous one's.
    const stream = ws.of(blocks) as Flashblock[];
    let blocksSeen = 0;
    for (let k = 1; k < stream.length; k++) {
      const [prev, cur] = [stream[k - 1]!, stream[k]!];
      const [pn, pi, n, i] = [Number(prev.number), Number(prev.preconfIndex), Number(cur.number), Number(cur.preconfIndex)];
      if (n === pn) {
        expect(i, `block ${n}`).toBe(pi + 1);
        expect(cur.transactions.slice(0, prev.transactions.length)).toEqual(prev.transactions);
      } else {
        expect(n).toBe(pn + 1);
        expect(i).toBe(1);
        blocksSeen++;
      }
    }
    expect(blocksSeen).toBeGreaterThanOrEqual(2);
    expect(Math.max(...stream.map((b) => Number(b.preconfIndex)))).toBeGreaterThan(10);

    // The sealed blocks hold exactly what was pre-confirmed, in the same order, and the
    // hash stream announced each transaction once, in that order.
    const sealedOrder: string[] = [];
    const numbers = [...new Set(stream.map((b) => Number(b.number)))];
    for (const n of numbers) {
      const block = await rpc(url, 'eth_getBlockByNumber', [`0x${n.toString(16)}`, false]);
      const shown = stream.filter((b) => Number(b.number) === n).at(-1)!;
      if (block === null) continue; // still being built
      expect(block.transactions.slice(0, shown.transactions.length)).toEqual(shown.transactions);
      sealedOrder.push(...block.transactions);
    }
    const announced = ws.of(hashes) as string[];
    expect(new Set(announced).size).toBe(announced.length);
    expect(announced).toEqual(sealedOrder);
    expect(sealedOrder.length).toBe(all.length);

    // Each sender's transactions in nonce order; every receipt where the block put it.
    const order = new Map(sealedOrder.map((h, i) => [h, i]));
    const byHash = new Map<string, { sender: number; nonce: number }>();
    for (const t of txs) byHash.set(keccak256(t.raw), t);
    for (const s of SENDERS) {
      const mine = sealedOrder.filter((h) => byHash.get(h)?.sender === s).map((h) => byHash.get(h)!.nonce);
      expect(mine).toEqual([...Array(PER_SENDER).keys()]);
    }
    for (const h of sealedOrder.slice(0, 50).concat(sealedOrder.slice(-50))) {
      const r = await rpc(url, 'eth_getTransactionReceipt', [h]);
      const block = await rpc(url, 'eth_getBlockByNumber', [r.blockNumber, false]);
      expect(r.status).toBe('0x1');
      expect(block.transactions[Number(r.transactionIndex)]).toBe(h);
      expect(order.has(h)).toBe(true);
    }
    // A receipt read while its transaction was only pre-confirmed has the place it kept.
    const early = await Promise.all(pendingReceipts);
    expect(early.length).toBeGreaterThan(5);
    for (const e of early) {
      expect(e.receipt, e.hash).not.toBeNull();
      expect([Number(e.receipt.blockNumber), Number(e.receipt.transactionIndex)]).toEqual([e.number, e.index]);
    }

    // `pending` never went backwards on the poller's connection.
    expect(seen.length).toBeGreaterThan(20);
    for (let k = 1; k < seen.length; k++) {
      const [[pn, pi], [n, i]] = [seen[k - 1]!, seen[k]!];
      expect(n > pn || (n === pn && i >= pi), `read ${k}: ${pn}.${pi} then ${n}.${i}`).toBe(true);
    }
  }, 120_000);
});
