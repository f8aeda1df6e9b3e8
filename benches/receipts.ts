// Receipt polling: every `periodMs`, one JSON-RPC batch asks for the receipts of the
// tracked transactions not seen yet. A receipt first seen in the poll sent at s and
// answered at r became visible after the previous poll of that hash was sent (s') and
// before r, so its time is estimated as the middle of [max(s', submitted), r]: the error is
// at most half of that bracket, which is about the polling period plus one round trip.

import type { Hex } from 'viem';
import { nowUs, percentile, rpcRaw, sleep } from './util.js';

interface Seen {
  prevSendUs: number;
  recvUs: number;
  status: string;
}

export class ReceiptTracker {
  private readonly waiting = new Map<Hex, number>(); // hash -> poll it from (unix µs)
  private readonly lastSend = new Map<Hex, number>();
  readonly seen = new Map<Hex, Seen>();
  polls = 0;
  /** Receipts asked for, over all polls: load this tracker puts on the server. */
  lookups = 0;
  pollErrors = 0;
  private stopping = false;
  private loop: Promise<void> | null = null;

  constructor(
    private readonly url: string,
    private readonly periodMs: number,
  ) {}

  /** Polls for `hash` from `fromUs` on (when it is due to be submitted). */
  track(hash: Hex, fromUs = 0): void {
    if (!this.seen.has(hash)) this.waiting.set(hash, fromUs);
  }

  start(): void {
    this.loop ??= this.run();
  }

  /** Waits until every tracked receipt was seen, or none has appeared for `stallMs`. */
  async finish(stallMs: number): Promise<void> {
    let seen = this.seen.size;
    let progressAt = Date.now();
    while (this.waiting.size > 0 && Date.now() - progressAt < stallMs) {
      await sleep(this.periodMs);
      if (this.seen.size !== seen) [seen, progressAt] = [this.seen.size, Date.now()];
    }
    this.stopping = true;
    await this.loop;
  }

  get missing(): number {
    return this.waiting.size;
  }

  private async run(): Promise<void> {
    while (!this.stopping) {
      const s = nowUs();
      const hashes = [...this.waiting].filter(([, from]) => from <= s).map(([h]) => h);
      if (hashes.length > 0) await this.poll(hashes, s);
      const spent = (nowUs() - s) / 1000;
      await sleep(Math.max(0, this.periodMs - spent));
    }
  }

  private async poll(hashes: Hex[], s: number): Promise<void> {
    const body = JSON.stringify(hashes.map((h, i) => ({ jsonrpc: '2.0', id: i, method: 'eth_getTransactionReceipt', params: [h] })));
    this.polls++;
    this.lookups += hashes.length;
    let answers: { id: number; result?: { status: string } | null }[];
    try {
      answers = (await rpcRaw(this.url, body)) as typeof answers;
    } catch {
      this.pollErrors++;
      return;
    }
    const r = nowUs();
    for (const a of answers) {
      const h = hashes[a.id];
      if (h === undefined) continue;
      if (a.result) {
        this.seen.set(h, { prevSendUs: this.lastSend.get(h) ?? Number.NEGATIVE_INFINITY, recvUs: r, status: a.result.status });
        this.waiting.delete(h);
      } else if (a.result === null) {
        this.lastSend.set(h, s);
      } else {
        this.pollErrors++;
      }
    }
  }

  /** Submission-to-receipt times (ms) of the hashes with a known submission time. */
  latencies(submittedUs: Map<Hex, number>): { ms: number[]; bracketMs: number[]; failed: number } {
    const ms: number[] = [];
    const bracketMs: number[] = [];
    let failed = 0;
    for (const [h, sent] of submittedUs) {
      const s = this.seen.get(h);
      if (!s) continue;
      if (s.status !== '0x1') failed++;
      const from = Math.max(s.prevSendUs, sent);
      ms.push(((from + s.recvUs) / 2 - sent) / 1000);
      bracketMs.push((s.recvUs - from) / 1000);
    }
    return { ms, bracketMs, failed };
  }
}

export interface LatencySummary {
  n: number;
  p50: number;
  p99: number;
  max: number;
  resolutionMs: number; // median bracket width
  failed: number; // receipts with status 0
}

export function summarize(l: { ms: number[]; bracketMs: number[]; failed: number }): LatencySummary {
  return {
    n: l.ms.length,
    p50: percentile(l.ms, 50),
    p99: percentile(l.ms, 99),
    max: percentile(l.ms, 100),
    resolutionMs: percentile(l.bracketMs, 50),
    failed: l.failed,
  };
}
