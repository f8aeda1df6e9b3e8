// A replica's following loop (--follow): reads the stream in order from where the replica
// stands and hands every message to the addon, which applies it (crates/chain/src/replica/
// apply.rs) and says what it did. The position is the JetStream sequence: the addon stores
// the sequence of each sealed block with the block, so a restart resumes after it; a
// datadir without one (fresh, or copied from another node) is placed by looking its head up
// in the stream. A message that is not the next one is never skipped: the stream is read
// again from the one that is.

import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager, type StreamInfo } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type { ApplyResult, ReplicaStart, ReplicationNative } from '../native.js';
import { Outage, type Log } from './outage.js';
import { connectUntilClosed, errorText, peekAt, sleep } from './stream.js';

export interface FollowerOptions {
  url: string;
  stream: string;
  natsTimeoutMs: number;
}

const RETRY_MS = 250;
/** Re-reads at the same position before the replica reports the stream as broken. */
const GAP_REPORT_AFTER = 3;
/** Messages behind the stream's end at which a replica reports itself as catching up (and
 *  below which it is caught up again): a load balancer should not send it reads meanwhile. */
const BEHIND_DEGRADED = 256;
const BEHIND_OK = 16;
/** Messages handed to the addon ahead of the one being applied (catch-up throughput). */
const APPLY_WINDOW = 64;

interface Stoppable {
  stop(): void;
}

export class Follower {
  private closed = false;
  private stopped = false;
  private nc: NatsConnection | undefined;
  private messages: Stoppable | undefined;
  private readonly start: ReplicaStart;
  private readonly outage: Outage;
  private readonly done: Promise<void>;
  /** Consecutive gaps at one position. */
  private gaps = { at: 0, count: 0 };
  /** The two reasons a replica is degraded: NATS unreachable, or far behind the stream. */
  private readonly reasons: { outage: string | null; behind: string | null } = { outage: null, behind: null };

  constructor(
    private readonly native: ReplicationNative,
    private readonly opts: FollowerOptions,
    private readonly log: Log,
  ) {
    this.start = native.followerStart(opts.stream);
    const what = `replica: cannot read stream "${opts.stream}" from NATS at ${opts.url}`;
    this.outage = new Outage(what, opts.natsTimeoutMs, (r) => this.report('outage', r), log);
    this.outage.starting();
    this.done = this.run().catch((e: unknown) => log(`replica: following stopped: ${errorText(e)}`));
  }

  async close(): Promise<void> {
    this.closed = true;
    this.messages?.stop();
    this.native.stop();
    this.outage.stop();
    await Promise.race([this.done, sleep(3_000)]);
    await this.nc?.close().catch(() => undefined);
  }

  private async run(): Promise<void> {
    const nc = await this.connect();
    if (nc === null) return;
    const js = jetstream(nc);
    let from: number | null = null;
    while (!this.closed && !this.stopped) {
      try {
        const jsm = await jetstreamManager(nc, { timeout: 2_000 });
        from ??= await this.locate(jsm);
        from = await this.consume(js, from);
      } catch (e) {
        this.outage.fail(e);
        await sleep(RETRY_MS);
      }
    }
  }

  private async connect(): Promise<NatsConnection | null> {
    this.nc =
      (await connectUntilClosed(this.opts.url, 'preconf-node replica', {
        closed: () => this.closed,
        fail: (e) => this.outage.fail(e),
        // The server lost the consumer: read again from the next message at once.
        onReconnect: () => this.messages?.stop(),
        retryMs: RETRY_MS,
      })) ?? undefined;
    return this.nc ?? null;
  }

  /** The first stream sequence to read: after the stored position when the stream still
   *  holds that block there, else the first message about a block after the head. */
  private async locate(jsm: JetStreamManager): Promise<number> {
    const info = await jsm.streams.info(this.opts.stream);
    const { seq, head, headHash } = this.start;
    if (seq !== undefined && seq !== null) {
      const m = await peekAt(jsm, this.opts.stream, seq);
      if (m?.kind === 'sealed' && m.number === head && m.hash === headHash) {
        this.log(`replica: resuming stream "${this.opts.stream}" after message ${seq} (block ${head})`);
        return seq + 1;
      }
      this.log(`replica: stream message ${seq} is not this replica's block ${head} any more; looking the head up`);
    }
    const from = await this.search(jsm, info, head);
    this.log(`replica: block ${head} is this replica's head; reading stream "${this.opts.stream}" from message ${from}`);
    return from;
  }

  /** Smallest sequence whose block is after `head` (messages are in block order). */
  private async search(jsm: JetStreamManager, info: StreamInfo, head: number): Promise<number> {
    const { first_seq: first, last_seq: last, messages } = info.state;
    if (messages === 0) return last + 1;
    const at = async (seq: number): Promise<number> => {
      const m = await peekAt(jsm, this.opts.stream, seq);
      if (m === null) throw new Error(`stream message ${seq} is missing (deleted from the stream?)`);
      return m.number;
    };
    const firstBlock = await at(first);
    if (firstBlock > head + 1) {
      throw new Error(
        `the stream starts at block ${firstBlock} (message ${first}) but this replica's head is block ${head}: ` +
          `start it from a copy of a datadir at block ${firstBlock - 1} or later`,
      );
    }
    let [lo, hi] = [first, last + 1];
    while (lo < hi) {
      const mid = Math.floor((lo + hi) / 2);
      if ((await at(mid)) > head) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }

  /** Reads from `from` in order until the stream ends this reading; returns where to go on.
   *  Up to APPLY_WINDOW messages are handed to the addon before the first is applied (it
   *  applies them in order and refuses any after one it could not apply). */
  private async consume(js: JetStreamClient, from: number): Promise<number> {
    const consumer = await js.consumers.get(this.opts.stream, { opt_start_seq: from });
    // Heartbeats every 2 s: a server that stops answering is noticed in seconds.
    const messages = await consumer.consume({ max_messages: 1024, expires: 5_000, idle_heartbeat: 2_000 });
    this.messages = messages;
    this.outage.ok();
    let next = from;
    /** Where to read again from, once a message could not be applied. */
    let again: number | null = null;
    const settle = (seq: number, pending: number, r: ApplyResult): void => {
      if (again !== null) return; // refused behind the first failure anyway
      switch (r.status) {
        case 'gap':
          this.gap(r.expected!, seq);
          again = r.expected!;
          break;
        case 'stopped':
          this.stopped = true;
          again = seq;
          break;
        case 'retry':
          this.outage.fail(r.detail);
          again = seq;
          break;
        case 'closed':
          again = seq;
          break;
        default:
          this.gaps.count = 0;
          this.outage.ok();
          this.behind(pending, r.number);
          return;
      }
      messages.stop();
    };
    const inflight: Promise<void>[] = [];
    try {
      for await (const m of messages) {
        if (this.closed || again !== null) break;
        if (m.seq < next) continue; // delivered again
        if (m.seq > next) {
          this.gap(next, m.seq);
          again = next;
          break;
        }
        next = m.seq + 1;
        const pending = m.info.pending;
        inflight.push(this.native.followerApply(m.seq, m.data, pending).then((r) => settle(m.seq, pending, r)));
        if (inflight.length >= APPLY_WINDOW) await inflight.shift();
      }
    } finally {
      messages.stop();
      await Promise.all(inflight);
    }
    if (again === null) return next;
    if (this.reasons.outage !== null || this.outage.failing) await sleep(RETRY_MS);
    return again;
  }

  private behind(pending: number, block: number | undefined): void {
    if (pending >= BEHIND_DEGRADED) {
      this.report('behind', `replica: catching up, ${pending} stream messages behind (at block ${block ?? '?'})`);
    } else if (pending < BEHIND_OK && this.reasons.behind !== null) {
      this.report('behind', null);
    }
  }

  private report(which: 'outage' | 'behind', reason: string | null): void {
    if (this.reasons[which] === reason) return;
    this.reasons[which] = reason;
    const all = [this.reasons.outage, this.reasons.behind].filter((r) => r !== null);
    this.native.setHealth(all.length === 0 ? null : all.join('; '));
  }

  private gap(expected: number, got: number): void {
    this.gaps = { at: expected, count: this.gaps.at === expected ? this.gaps.count + 1 : 1 };
    const what = `stream gap: expected message ${expected}, got ${got}; reading again from ${expected}`;
    if (this.gaps.count >= GAP_REPORT_AFTER) this.outage.fail(`${what} (${this.gaps.count} times: is it deleted from the stream?)`);
    else this.log(`replica: ${what}`);
  }
}
