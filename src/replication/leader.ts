// The leader's publishing loop (--publish): asks the addon for the next message, publishes
// it to JetStream under its message id, and so on. The addon decides what comes next, in
// stream order (crates/chain/src/replica/publish.rs); this loop only moves bytes and tells
// the addon what the stream holds whenever that may have changed (start, reconnect, a
// failed publish). A failed message is not retried as such: after re-reading the stream's
// newest sealed block, the addon republishes whatever the stream lacks (sealed blocks from
// the store, the block being built as a snapshot). The builder never waits for any of it.

import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Publication, ReplicationNative } from '../native.js';
import { Outage, type Log } from './outage.js';
import { connectUntilClosed, ensureStream, errorText, lastSealed, sleep, subjectOf } from './stream.js';

export interface LeaderOptions {
  url: string;
  stream: string;
  queue: number;
  natsTimeoutMs: number;
}

const PUBLISH_TIMEOUT_MS = 2_000;
const RETRY_MS = 250;
/** How long a leader shutting down keeps publishing its last block. */
const DRAIN_MS = 2_000;

export class Leader {
  private closed = false;
  private publishing = false;
  private nc: NatsConnection | undefined;
  private resync = true;
  private readonly outage: Outage;
  private readonly done: Promise<void>;

  constructor(
    private readonly native: ReplicationNative,
    private readonly opts: LeaderOptions,
    private readonly log: Log,
  ) {
    native.publisherStart(opts.queue);
    this.outage = new Outage(`replication: cannot publish to NATS at ${opts.url}`, opts.natsTimeoutMs, native.setHealth, log, () => {
      const s = native.publisherStatus();
      return `; ${s.queued} events queued, ${s.dropped} dropped (sealed blocks are republished from the store)`;
    });
    this.outage.starting();
    this.done = this.run().catch((e: unknown) => log(`replication: the publisher stopped: ${errorText(e)}`));
  }

  /** Stops publishing. With NATS reachable, the builder stops first and its last block is
   *  published (for up to 2 s); anything else is republished by the next run. */
  async close(): Promise<void> {
    if (!this.outage.failing && this.nc !== undefined) {
      this.native.publisherDrain();
      const deadline = Date.now() + DRAIN_MS;
      for (let quiet = 0; quiet < 3 && Date.now() < deadline; await sleep(20)) {
        quiet = this.native.publisherStatus().queued === 0 && !this.publishing ? quiet + 1 : 0;
      }
      this.log(`replication: stopped after publishing block ${this.native.publisherStatus().sealed}`);
    }
    this.closed = true;
    this.native.stop();
    this.outage.stop();
    await Promise.race([this.done, sleep(3_000)]);
    await this.nc?.close().catch(() => undefined);
  }

  private async run(): Promise<void> {
    const nc = await this.connect();
    if (nc === null) return;
    const js = jetstream(nc);
    for (;;) {
      if (this.resync && !(await this.sync(nc))) return;
      let p: Publication | null;
      try {
        p = await this.native.publisherNext();
      } catch (e) {
        // The addon cannot go on (the stream lacks a block this node cannot republish).
        this.outage.fail(e);
        await sleep(1_000);
        continue;
      }
      if (p === null || this.closed) return;
      await this.publish(js, p);
    }
  }

  private async connect(): Promise<NatsConnection | null> {
    this.nc =
      (await connectUntilClosed(this.opts.url, 'preconf-node leader', {
        closed: () => this.closed,
        fail: (e) => this.outage.fail(e),
        // The server may have lost what it had not written: ask it what the stream holds.
        onReconnect: () => (this.resync = true),
        retryMs: RETRY_MS,
      })) ?? undefined;
    return this.nc ?? null;
  }

  private async publish(js: JetStreamClient, p: Publication): Promise<void> {
    this.publishing = true;
    try {
      await js.publish(subjectOf(this.opts.stream, p.kind), p.data, { msgID: p.id, timeout: PUBLISH_TIMEOUT_MS });
      this.outage.ok();
    } catch (e) {
      this.outage.fail(e);
      this.resync = true;
      await sleep(RETRY_MS);
    } finally {
      this.publishing = false;
    }
  }

  /** Tells the addon what the stream holds (creating the stream first if needed). */
  private async sync(nc: NatsConnection): Promise<boolean> {
    while (!this.closed) {
      try {
        const jsm: JetStreamManager = await jetstreamManager(nc, { timeout: PUBLISH_TIMEOUT_MS });
        await ensureStream(jsm, this.opts.stream);
        const head = await lastSealed(jsm, this.opts.stream);
        this.native.publisherReset(head);
        this.resync = false;
        this.outage.ok();
        return true;
      } catch (e) {
        this.outage.fail(e);
        await sleep(RETRY_MS);
      }
    }
    return false;
  }
}
