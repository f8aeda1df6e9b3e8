// "No replica serves a state the leader never had": the leader's own record of every
// pre-confirmation (its newFlashblocks and newHeads subscriptions) against what pollers of a
// replica saw as `pending` and `latest`.

import { RawWs } from './ws.js';
import { canonical, call } from './replicas.js';

/** A block as a poller saw it: what must match one of the leader's states. */
interface Seen {
  /** Set when the node answered `pending` with a sealed block (a replica that has not
   *  received the block being built yet answers `pending` as `latest`). */
  hash: string | null;
  number: number;
  index: number;
  text: string;
  parentHash: string;
  txCount: number;
}

/** The leader's pre-confirmations, by block number and index (a restarted leader rebuilds a
 *  block, so one key may hold several). */
export class LeaderRecord {
  private readonly flashblocks = new Map<string, Set<string>>();
  private readonly sockets: RawWs[] = [];
  /** Highest index recorded per build of a block (number:timestamp), per attach: a kill -9
   *  can cut one leader run's record short while the next run resumes the same build. */
  private readonly highest = new Map<string, Map<number, number>>();
  private runs = 0;
  /** The block the record started in (its earlier pre-confirmations are not in it). */
  private first: number | null = null;

  /** Subscribes to the leader at `wsUrl` (again after a restart). */
  async attach(wsUrl: string): Promise<void> {
    const ws = await RawWs.open(wsUrl);
    const run = this.runs++;
    const sub = (await ws.request('eth_subscribe', ['newFlashblocks'])).result as string;
    this.sockets.push(ws);
    const take = (fb: any): void => {
      const { preconfTimestampMs: _t, ...block } = fb;
      this.first ??= Number(block.number);
      const key = `${Number(block.number)}:${Number(block.preconfIndex)}`;
      if (!this.flashblocks.has(key)) this.flashblocks.set(key, new Set());
      this.flashblocks.get(key)!.add(canonical(block));
      const build = `${Number(block.number)}:${block.timestamp}`;
      if (!this.highest.has(build)) this.highest.set(build, new Map());
      const byRun = this.highest.get(build)!;
      byRun.set(run, Math.max(byRun.get(run) ?? 0, Number(block.preconfIndex)));
    };
    ws.of(sub).forEach(take);
    ws.on(sub, take);
  }

  /** Why `seen` is not a state the leader had, or null when it is (or cannot be told). */
  check(seen: Seen, leaderHashes: Map<number, string>): string | null {
    if (seen.hash !== null) {
      const ours = leaderHashes.get(seen.number);
      return ours === seen.hash ? null : `pending answered with block ${seen.number} ${seen.hash}, the leader's is ${ours}`;
    }
    if (this.first === null || seen.number <= this.first) return null; // before the record began
    if (seen.index === 0) {
      // The block just opened: no transactions, on top of the leader's block before it.
      if (seen.txCount !== 0) return `block ${seen.number} at index 0 has ${seen.txCount} transactions`;
      const parent = leaderHashes.get(seen.number - 1);
      return parent === seen.parentHash ? null : `block ${seen.number} opened on ${seen.parentHash}, the leader's parent is ${parent}`;
    }
    const recorded = this.flashblocks.get(`${seen.number}:${seen.index}`);
    if (recorded?.has(seen.text)) return null;
    return `pre-confirmation ${seen.number}.${seen.index} is not one the leader published: ${seen.text.slice(0, 300)}`;
  }

  /** Whether the leader's record can vouch for `seen` (a kill -9 can cut the record short of
   *  what reached the stream: the last pre-confirmation of a killed run). */
  covers(seen: Seen, timestamp: string): boolean {
    // Covered only if every run that recorded this build recorded past it: a run cut short
    // may have published it unrecorded.
    const byRun = this.highest.get(`${seen.number}:${timestamp}`);
    return byRun !== undefined && [...byRun.values()].every((highest) => seen.index <= highest);
  }

  async close(): Promise<void> {
    await Promise.all(this.sockets.map((s) => s.close()));
  }
}

/** Polls a node's pending and latest blocks and keeps every distinct state it saw. */
export class Poller {
  readonly pending = new Map<string, Seen & { timestamp: string }>();
  readonly latest = new Map<number, string>();
  polls = 0;
  private running = true;
  private readonly done: Promise<void>;

  constructor(private readonly url: () => string) {
    this.done = this.run();
  }

  private async run(): Promise<void> {
    while (this.running) {
      try {
        const [p, l] = await Promise.all([
          call(this.url(), 'eth_getBlockByNumber', ['pending', false]),
          call(this.url(), 'eth_getBlockByNumber', ['latest', false]),
        ]);
        this.polls++;
        const text = canonical(p);
        this.pending.set(text, {
          hash: p.hash,
          number: Number(p.number),
          index: Number(p.preconfIndex),
          text,
          parentHash: p.parentHash,
          txCount: p.transactions.length,
          timestamp: p.timestamp,
        });
        this.latest.set(Number(l.number), l.hash);
      } catch {
        // the node is being restarted: the next poll tells
      }
      await new Promise((r) => setTimeout(r, 15));
    }
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.done;
  }
}

/** The leader's block hashes 0..to. */
export async function leaderHashes(url: string, to: number): Promise<Map<number, string>> {
  const out = new Map<number, string>();
  for (let n = 0; n <= to; n++) out.set(n, (await call(url, 'eth_getBlockByNumber', [`0x${n.toString(16)}`, false])).hash);
  return out;
}

/** Every state the poller saw that the leader did not have (and how many it cannot vouch for). */
export function violations(
  record: LeaderRecord,
  poller: Poller,
  hashes: Map<number, string>,
  tolerateUnrecorded = false,
): { bad: string[]; unrecorded: number } {
  const bad: string[] = [];
  let unrecorded = 0;
  for (const [number, hash] of poller.latest) {
    if (hashes.get(number) !== hash) bad.push(`latest block ${number} is ${hash}, the leader's is ${hashes.get(number)}`);
  }
  for (const seen of poller.pending.values()) {
    if (!hashes.has(seen.hash === null ? seen.number - 1 : seen.number)) continue; // beyond the record's end
    const why = record.check(seen, hashes);
    if (why === null) continue;
    if (tolerateUnrecorded && !record.covers(seen, seen.timestamp)) unrecorded++;
    else bad.push(why);
  }
  return { bad, unrecorded };
}
