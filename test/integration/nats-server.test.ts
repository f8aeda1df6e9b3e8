// The NATS test helper against the real server: a JetStream stream on file storage keeps every
// acknowledged message, in order and under the same sequence, across a graceful restart and
// across kill -9; message-id deduplication survives both too (the leader's resume relies on it).

import { existsSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager, StorageType, type JetStreamClient } from '@nats-io/jetstream';
import { startNats, type NatsServer } from '../helpers/nats.js';

const STREAM = 'probe';
const payload = (i: number) => new TextEncoder().encode(`message-${i}`);

interface Stored {
  seq: number;
  subject: string;
  text: string;
}

/** Every message of the stream through an ordered consumer, from the first to `lastSeq`. */
async function readAll(js: JetStreamClient, lastSeq: number): Promise<Stored[]> {
  const consumer = await js.consumers.get(STREAM);
  const messages = await consumer.consume();
  const out: Stored[] = [];
  for await (const m of messages) {
    out.push({ seq: m.seq, subject: m.subject, text: m.string() });
    if (m.seq >= lastSeq) break;
  }
  await messages.close();
  return out;
}

async function publish(js: JetStreamClient, from: number, to: number): Promise<Stored[]> {
  const acked: Stored[] = [];
  for (let i = from; i <= to; i++) {
    const ack = await js.publish(`${STREAM}.m`, payload(i), { msgID: `id-${i}` });
    expect(ack.duplicate).toBe(false);
    acked.push({ seq: ack.seq, subject: `${STREAM}.m`, text: `message-${i}` });
  }
  return acked;
}

describe('nats-server helper', () => {
  let server: NatsServer | undefined;
  let nc: NatsConnection | undefined;
  afterAll(async () => {
    await nc?.close();
    await server?.cleanup();
  });

  it('keeps a file-storage stream across restart and kill -9, on the same port', async () => {
    server = await startNats();
    const { url, port, dir } = server;
    expect(port).toBeGreaterThan(0);

    nc = await connect({ servers: url });
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: STREAM, subjects: [`${STREAM}.>`], storage: StorageType.File, duplicate_window: 60_000_000_000 });
    let js = jetstream(nc);
    const expected = await publish(js, 1, 50);
    expect(expected.map((m) => m.seq)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    // A republished id is recognised and not stored twice.
    const dup = await js.publish(`${STREAM}.m`, payload(7), { msgID: 'id-7' });
    expect(dup).toMatchObject({ duplicate: true, seq: 7 });
    expect(await readAll(js, 50)).toEqual(expected);

    // Graceful restart.
    await nc.close();
    expect(await server.stop()).toBe(0);
    expect(server.running).toBe(false);
    await server.restart();
    expect(server.port).toBe(port);
    nc = await connect({ servers: url });
    js = jetstream(nc);
    const afterStop = await (await jetstreamManager(nc)).streams.info(STREAM);
    expect(afterStop.config.storage).toBe(StorageType.File);
    expect(afterStop.state).toMatchObject({ messages: 50, first_seq: 1, last_seq: 50 });
    expect(await readAll(js, 50)).toEqual(expected);

    // Acknowledged just before a kill -9: still there afterwards.
    expected.push(...(await publish(js, 51, 60)));
    expect(await server.kill()).toBe('SIGKILL');
    await nc.close();
    await server.restart();
    expect(server.port).toBe(port);
    nc = await connect({ servers: url });
    js = jetstream(nc);
    const afterKill = await (await jetstreamManager(nc)).streams.info(STREAM);
    expect(afterKill.state).toMatchObject({ messages: 60, first_seq: 1, last_seq: 60 });
    expect(await readAll(js, 60)).toEqual(expected);
    // The dedup window was rebuilt from the store: a resend after the crash is not a new message.
    expect(await js.publish(`${STREAM}.m`, payload(55), { msgID: 'id-55' })).toMatchObject({ duplicate: true, seq: 55 });
    expect((await js.publish(`${STREAM}.m`, payload(61), { msgID: 'id-61' })).seq).toBe(61);

    await nc.close();
    nc = undefined;
    await server.cleanup();
    expect(server.running).toBe(false);
    expect(existsSync(dir)).toBe(false);
    server = undefined;
  });
});
