// What a failover test asserts, with the load that makes it meaningful (`Senders`, in
// traffic.ts: every hash a node returned is remembered as accepted):
// - `Watchers`: polls every running node's pending block; checks that it never goes back
//   (block number, pre-confirmation index) and remembers where each transaction was shown.
// - `checkChain`: every node holds the same block at every height (0 forks), every accepted
//   transaction is sealed exactly once (0 lost, 0 duplicated), and every transaction shown
//   as pre-confirmed is sealed in that block at that index (0 reversed).

import type { Hex } from 'viem';
import { rawPost } from './node.js';
import { call, sameChain } from './replicas.js';
import { CALL_TIMEOUT_MS, tryCall } from './traffic.js';
import { waitFor } from './wait.js';

interface Shown {
  number: number;
  index: number;
  node: string;
}

export class Watchers {
  /** Transaction hash -> where a node showed it pre-confirmed (block, position). */
  readonly shown = new Map<Hex, Shown>();
  readonly backwards: string[] = [];
  readonly reads = new Map<string, number>();
  private readonly last = new Map<string, [number, number]>();
  private running = true;
  private readonly done: Promise<void>;

  constructor(
    private readonly nodes: () => string[],
    private readonly stepMs = 25,
  ) {
    this.done = this.run();
  }

  /** A node that restarts keeps its watermark: it must not show older state after it. */
  private async run(): Promise<void> {
    while (this.running) {
      await Promise.all(this.nodes().map((url) => this.look(url)));
      await new Promise((r) => setTimeout(r, this.stepMs));
    }
  }

  private async look(url: string): Promise<void> {
    // Like a load balancer, only nodes that say they are healthy are read.
    const healthy = await fetch(`${url}/health`, { signal: AbortSignal.timeout(CALL_TIMEOUT_MS) }).then(
      (r) => r.ok,
      () => false,
    );
    if (!healthy) return;
    const b = await tryCall(url, 'eth_getBlockByNumber', ['pending', false]);
    if (b.result === undefined || b.result === null) return;
    const at: [number, number] = [Number(b.result.number), Number(b.result.preconfIndex ?? 0)];
    const before = this.last.get(url);
    if (before && (at[0] < before[0] || (at[0] === before[0] && at[1] < before[1]))) {
      this.backwards.push(`${url}: pending went from ${before.join('.')} to ${at.join('.')}`);
    }
    if (!before || at[0] > before[0] || (at[0] === before[0] && at[1] >= before[1])) this.last.set(url, at);
    this.reads.set(url, (this.reads.get(url) ?? 0) + 1);
    (b.result.transactions as Hex[]).forEach((hash, index) => {
      if (!this.shown.has(hash)) this.shown.set(hash, { number: at[0], index, node: url });
    });
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.done;
  }
}

const hex = (n: number): string => `0x${n.toString(16)}`;

/** Every sealed block's transaction hashes, 1..to, from one node. */
async function sealedTxs(url: string, to: number): Promise<Hex[][]> {
  const out: Hex[][] = [[]];
  for (let from = 1; from <= to; from += 100) {
    const numbers = Array.from({ length: Math.min(100, to - from + 1) }, (_, i) => from + i);
    const body = JSON.stringify(numbers.map((n) => ({ jsonrpc: '2.0', id: n, method: 'eth_getBlockByNumber', params: [hex(n), false] })));
    const r = await rawPost(url, body);
    for (const m of r.json as any[]) out[m.id] = m.result.transactions as Hex[];
  }
  return out;
}

export interface ChainReport {
  head: number;
  forks: string[];
  lost: Hex[];
  duplicated: Hex[];
  reversed: string[];
}

/** Waits until every accepted transaction is sealed on every node in `urls`, then compares. */
export async function checkChain(urls: string[], accepted: Set<Hex>, watchers: Watchers, timeoutMs = 60_000): Promise<ChainReport> {
  const first = urls[0]!;
  let where = new Map<Hex, number[]>();
  let head = 0;
  await waitFor(
    async () => {
      head = Math.min(...(await Promise.all(urls.map(async (u) => Number(await call<string>(u, 'eth_blockNumber'))))));
      const blocks = await sealedTxs(first, head);
      where = new Map();
      blocks.forEach((txs, n) => txs?.forEach((h) => where.set(h, [...(where.get(h) ?? []), n])));
      return [...accepted].every((h) => where.has(h));
    },
    timeoutMs,
    `all ${accepted.size} accepted transactions to be sealed on every node`,
    250,
  ).catch(() => undefined);
  const forks: string[] = [];
  for (const u of urls.slice(1)) await sameChain(first, u, head).catch((e: Error) => forks.push(`${u}: ${e.message}`));
  const lost = [...accepted].filter((h) => !where.has(h));
  const duplicated = [...where].filter(([, at]) => at.length > 1).map(([h]) => h);
  const reversed: string[] = [];
  const blocks = await sealedTxs(first, head);
  for (const [hash, s] of watchers.shown) {
    if (s.number > head) continue; // still being built
    if (blocks[s.number]?.[s.index] !== hash) {
      reversed.push(`${hash} shown at ${s.number}:${s.index} by ${s.node}, sealed at ${JSON.stringify(where.get(hash) ?? 'nowhere')}`);
    }
  }
  return { head, forks, lost, duplicated, reversed };
}
