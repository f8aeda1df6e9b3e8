// The JetStream side shared by leader and replicas: the connection, the stream and its
// subjects, and where a stream's messages stand in the chain. Messages are the addon's
// bytes (crates/chain/src/replica/codec.rs); only their first bytes are read here.

import { connect, nanos, type NatsConnection } from '@nats-io/transport-node';
import {
  DiscardPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  RetentionPolicy,
  StorageType,
  type JetStreamManager,
  type StreamInfo,
} from '@nats-io/jetstream';
import { peekReplicationMessage, type PeekedMessage, type StreamHead } from '../native.js';

/** How long JetStream remembers message ids for deduplication. */
const DUPLICATE_WINDOW_MS = 120_000;

export const subjectOf = (stream: string, kind: 'pending' | 'sealed'): string => `${stream}.${kind}`;

/** A connection that reconnects forever; ping often enough to notice a dead server in seconds. */
export function connectNats(url: string, name: string): Promise<NatsConnection> {
  return connect({
    servers: url,
    name,
    reconnect: true,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 250,
    waitOnFirstConnect: true,
    pingInterval: 2_000,
    maxPingOut: 2,
    timeout: 2_000,
  });
}

export const isStreamNotFound = (e: unknown): boolean =>
  e instanceof JetStreamApiError && e.code === JetStreamApiCodes.StreamNotFound;

/** The stream, created on file storage when it does not exist (an operator's own stream,
 *  with its own limits, is used as it is). */
export async function ensureStream(jsm: JetStreamManager, stream: string): Promise<StreamInfo> {
  try {
    return await jsm.streams.info(stream);
  } catch (e) {
    if (!isStreamNotFound(e)) throw e;
  }
  return jsm.streams.add({
    name: stream,
    subjects: [`${stream}.>`],
    storage: StorageType.File,
    retention: RetentionPolicy.Limits,
    discard: DiscardPolicy.Old,
    duplicate_window: nanos(DUPLICATE_WINDOW_MS),
    description: 'preconf-node: pre-confirmations and sealed blocks, in order (see README, Scaling out)',
  });
}

/** The newest sealed block in the stream, or null when it has none. */
export async function lastSealed(jsm: JetStreamManager, stream: string): Promise<StreamHead | null> {
  const m = await jsm.streams.getMessage(stream, { last_by_subj: subjectOf(stream, 'sealed') });
  if (m === null) return null;
  const peeked = peekReplicationMessage(m.data);
  return { number: peeked.number, hash: peeked.hash! };
}

/** The message at `seq` as the chain sees it, or null when the stream does not hold it. */
export async function peekAt(jsm: JetStreamManager, stream: string, seq: number): Promise<PeekedMessage | null> {
  const m = await jsm.streams.getMessage(stream, { seq });
  return m === null ? null : peekReplicationMessage(m.data);
}

/** Connects to NATS, retrying every `retryMs` until it works or `closed()`; then reports
 *  disconnects to `fail` and calls `onReconnect` after each reconnect. Null once closed. */
export async function connectUntilClosed(
  url: string,
  name: string,
  opts: { closed: () => boolean; fail: (e: unknown) => void; onReconnect: () => void; retryMs: number },
): Promise<NatsConnection | null> {
  while (!opts.closed()) {
    try {
      const nc = await connectNats(url, name);
      void (async () => {
        for await (const s of nc.status()) {
          if (s.type === 'disconnect') opts.fail('disconnected');
          if (s.type === 'reconnect') opts.onReconnect();
        }
      })();
      return nc;
    } catch (e) {
      opts.fail(e);
      await sleep(opts.retryMs);
    }
  }
  return null;
}

export const errorText = (e: unknown): string => (e instanceof Error ? e.message : String(e));

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
