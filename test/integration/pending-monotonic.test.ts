// Once a read has seen a pre-confirmation, no later read on any connection or
// event loop sees an older one, across pre-confirmations and seals. Several pollers, each
// on its own keep-alive connection, read the sender's pending nonce and balance, the
// pending block and receipts while the sender sends transfers one after another. A read
// that started after another one finished must not see an older state than it did.

import http from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import { parseGwei, type Hex } from 'viem';
import { devAccount } from '../helpers/node.js';
import { spawnNode, type NodeProcess } from '../helpers/process.js';
import { signTransfer } from '../helpers/transfer.js';

interface Read {
  start: bigint;
  end: bigint;
  /** Compared as a tuple: a later read must be >= (lexicographically). */
  key: bigint[];
  what: string;
}

/** POSTs on one agent (one connection): requests of a poller never share a socket with another's. */
function post(agent: http.Agent, url: URL, body: string): Promise<any> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve(JSON.parse(text)));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Reads whose start follows another's end, compared: returns the violations. */
function regressions(reads: Read[]): string[] {
  const byEnd = [...reads].sort((a, b) => (a.end < b.end ? -1 : 1));
  const byStart = [...reads].sort((a, b) => (a.start < b.start ? -1 : 1));
  const out: string[] = [];
  let best: Read | undefined;
  let i = 0;
  const greater = (a: bigint[], b: bigint[]): boolean => {
    for (let k = 0; k < a.length; k++) if (a[k] !== b[k]) return a[k]! > b[k]!;
    return false;
  };
  for (const r of byStart) {
    while (i < byEnd.length && byEnd[i]!.end < r.start) {
      if (!best || greater(byEnd[i]!.key, best.key)) best = byEnd[i]!;
      i++;
    }
    if (best && greater(best.key, r.key)) out.push(`${r.what}: saw ${r.key.join('/')} after a read that saw ${best.key.join('/')}`);
  }
  return out;
}

describe('pending never goes backwards', () => {
  let node: NodeProcess | undefined;
  afterAll(async () => {
    await node?.kill('SIGKILL');
  });

  it('thousands of reads on several connections and event loops, across many seals, see no older state', async () => {
    node = await spawnNode(['--ephemeral', '--threads', '2', '--preconf-interval-ms', '50', '--block-time-ms', '300']);
    const url = new URL(node.url);
    const sender = devAccount(7);
    const sent: Hex[] = [];
    let sending = true;
    const reads: Record<string, Read[]> = { nonce: [], balance: [], block: [], receipt: [] };
    const rpc = (agent: http.Agent, method: string, params: unknown[]) => post(agent, url, JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }));

    const poller = async (agent: http.Agent): Promise<void> => {
      while (sending) {
        let start = process.hrtime.bigint();
        const nonce = await rpc(agent, 'eth_getTransactionCount', [sender.address, 'pending']);
        reads.nonce!.push({ start, end: process.hrtime.bigint(), key: [BigInt(nonce.result)], what: 'pending nonce' });
        start = process.hrtime.bigint();
        const balance = await rpc(agent, 'eth_getBalance', [sender.address, 'pending']);
        // The sender only spends: a newer state has a lower balance (compare the negation).
        reads.balance!.push({ start, end: process.hrtime.bigint(), key: [-BigInt(balance.result)], what: 'pending balance' });
        start = process.hrtime.bigint();
        const block = (await rpc(agent, 'eth_getBlockByNumber', ['pending', false])).result;
        reads.block!.push({ start, end: process.hrtime.bigint(), key: [BigInt(block.number), BigInt(block.preconfIndex ?? 0)], what: 'pending block' });
        const last = sent.slice(-3);
        if (last.length > 0) {
          start = process.hrtime.bigint();
          const receipts = await Promise.all(last.map((h) => rpc(agent, 'eth_getTransactionReceipt', [h])));
          const end = process.hrtime.bigint();
          // Per transaction: null (0) then a receipt (1), never back.
          last.forEach((h, k) => reads.receipt!.push({ start, end, key: [BigInt(sent.indexOf(h)), receipts[k].result ? 1n : 0n], what: `receipt of ${h}` }));
        }
      }
    };

    const agents = Array.from({ length: 4 }, () => new http.Agent({ keepAlive: true, maxSockets: 1 }));
    const pollers = agents.map(poller);
    const control = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const startHead = BigInt((await rpc(control, 'eth_blockNumber', [])).result);
    try {
      for (let nonce = 0; nonce < 60; nonce++) {
        const raw = await signTransfer(sender, { to: devAccount(8).address, nonce, maxFeePerGas: parseGwei('20') });
        const r = await rpc(control, 'eth_sendRawTransaction', [raw]);
        expect(r.error).toBeUndefined();
        sent.push(r.result);
        // The next one once this one shows in pending.
        const deadline = Date.now() + 5_000;
        while (BigInt((await rpc(control, 'eth_getTransactionCount', [sender.address, 'pending'])).result) <= BigInt(nonce)) {
          if (Date.now() > deadline) throw new Error(`transaction ${nonce} never showed in pending`);
        }
      }
      // Keep reading until the last one is sealed and thousands of reads were made.
      const deadline = Date.now() + 20_000;
      const count = () => Object.values(reads).reduce((n, r) => n + r.length, 0);
      const seals = async () => BigInt((await rpc(control, 'eth_blockNumber', [])).result) - startHead;
      while (!(await rpc(control, 'eth_getTransactionReceipt', [sent[sent.length - 1]])).result || count() < 4_000 || (await seals()) < 8n) {
        if (Date.now() > deadline) throw new Error(`the last transfer was not sealed, or too few reads (${count()}) or seals`);
      }
    } finally {
      sending = false;
      await Promise.all(pollers);
      for (const a of [...agents, control]) a.destroy();
    }
    const endHead = BigInt((await rpc(new http.Agent(), 'eth_blockNumber', [])).result);
    const total = Object.values(reads).reduce((n, r) => n + r.length, 0);
    expect(total, 'thousands of reads').toBeGreaterThan(2_000);
    expect(endHead - startHead, 'many seals').toBeGreaterThanOrEqual(8n);
    // The receipts' key orders by transaction first: compare each transaction on its own.
    const receiptsByTx = new Map<bigint, Read[]>();
    for (const r of reads.receipt!) receiptsByTx.set(r.key[0]!, [...(receiptsByTx.get(r.key[0]!) ?? []), r]);
    const problems = [
      ...regressions(reads.nonce!),
      ...regressions(reads.balance!),
      ...regressions(reads.block!),
      ...[...receiptsByTx.values()].flatMap(regressions),
    ];
    expect(problems.slice(0, 10)).toEqual([]);
    expect(await node.kill('SIGTERM')).toBe(0);
  });
});
