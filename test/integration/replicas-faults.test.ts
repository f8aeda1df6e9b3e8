// Replication under faults, with the real command and a real nats-server (JetStream, file
// storage): kill -9 of a replica under load, NATS restarts, leader restarts, a stalled
// replica, a replica started 1,000 blocks late. Every time: nothing is lost (each replica
// ends with the leader's chain, block for block), and no replica serves a state the leader
// never had (pollers of each replica's `pending` and `latest` against the leader's own
// record of its pre-confirmations and blocks).

import { afterEach, describe, expect, it } from 'vitest';
import { LeaderRecord, leaderHashes, Poller, violations } from '../helpers/observe.js';
import { caughtUp, Cluster, head, health, sameChain } from '../helpers/replicas.js';
import { Senders } from '../helpers/traffic.js';
import { waitFor } from '../helpers/wait.js';

const FAST = ['--preconf-interval-ms', '100', '--block-time-ms', '500'];

describe('replica faults', () => {
  let cluster: Cluster | undefined;
  let record: LeaderRecord | undefined;
  let pollers: Poller[] = [];
  let load: Senders | undefined;
  afterEach(async () => {
    await load?.stop();
    await Promise.all(pollers.map((p) => p.stop()));
    await record?.close();
    await cluster?.stop();
    [cluster, record, pollers, load] = [undefined, undefined, [], undefined];
  });

  /** A cluster under load, watched: the leader's record and a poller per replica. */
  async function watched(replicas: number, leaderArgs: string[] = []): Promise<Cluster> {
    const c = (cluster = await Cluster.start({ replicas, chainArgs: FAST, leaderArgs }));
    record = new LeaderRecord();
    await record.attach(c.leader.url.replace('http', 'ws'));
    pollers = c.replicas.map((_, i) => new Poller(() => c.replica(i).url));
    load = new Senders(() => [c.leader.url], [2, 3, 4], 40, 'reask');
    return c;
  }

  /** Load stopped, every replica at the leader's head with its chain; nothing seen that the
   *  leader did not have. Returns how many states the leader's record could not vouch for. */
  async function settle(c: Cluster, tolerateUnrecorded = false): Promise<number> {
    await load?.stop();
    load = undefined;
    // Each watcher must have looked often enough to have seen something (a stalled
    // replica's watcher waited on it meanwhile).
    await waitFor(async () => pollers.every((p) => p.polls > 20), 30_000, 'every watcher to poll 20 times');
    await Promise.all(pollers.map((p) => p.stop()));
    const top = await head(c.leader.url);
    for (const r of c.replicas) {
      await caughtUp(c.leader.url, r!.url, 30_000);
      await sameChain(c.leader.url, r!.url, top);
      expect(r!.output()).not.toContain('REPLICA STOPPED');
    }
    const hashes = await leaderHashes(c.leader.url, top);
    let unrecorded = 0;
    for (const p of pollers) {
      const v = violations(record!, p, hashes, tolerateUnrecorded);
      expect(v.bad).toEqual([]);
      unrecorded += v.unrecorded;
    }
    return unrecorded;
  }

  it('kill -9 of a replica under load: it resumes at its stored position and ends with every block', async () => {
    const c = await watched(2);
    await waitFor(async () => (await head(c.leader.url)) >= 5, 15_000, 'block 5');
    expect(await c.replica(0).kill('SIGKILL')).toBe('SIGKILL');
    const atKill = await head(c.leader.url);
    await waitFor(async () => (await head(c.leader.url)) >= atKill + 3, 10_000, 'three more blocks while the replica is down');
    const restarted = await c.startReplica(0);
    await caughtUp(c.leader.url, restarted.url);
    await waitFor(() => /resuming stream preconf after message [1-9]\d*/.test(restarted.output()), 10_000, 'the replica to resume at its stored position');
    await waitFor(async () => (await head(c.leader.url)) >= atKill + 6, 10_000, 'more blocks after the restart');
    await settle(c);
  }, 90_000);

  it('NATS restart, graceful and kill -9: the leader keeps building and says so, replicas get every block', async () => {
    // A queue of 8 events overflows while NATS is away: the sealed blocks it lost come from
    // the leader's store, the block being built as a snapshot.
    const c = await watched(2, ['--publish-queue', '8']);
    await waitFor(async () => (await head(c.leader.url)) >= 3, 15_000, 'block 3');
    for (const stop of ['stop', 'kill'] as const) {
      await c.nats[stop]();
      const before = await head(c.leader.url);
      // After --nats-timeout-ms (1 s) the leader and the replicas report it; the builder goes on.
      const leaderHealth = await waitFor(
        async () => {
          const h = await health(c.leader.url);
          return h.status === 503 ? h : null;
        },
        10_000,
        'the leader to report NATS away',
      );
      expect(leaderHealth.body.reason).toContain('cannot publish to NATS');
      const dropped = await waitFor(
        async () => {
          const reason = (await health(c.leader.url)).body.reason as string | undefined;
          return Number(/(\d+) dropped/.exec(reason ?? '')?.[1] ?? 0) > 0;
        },
        10_000,
        'the leader to drop events from its full queue',
      );
      expect(dropped).toBe(true);
      for (const r of c.replicas) {
        const h = await waitFor(
          async () => {
            const h = await health(r!.url);
            return h.status === 503 ? h : null;
          },
          10_000,
          `a replica to report NATS away (${stop})`,
        );
        expect(h.body.reason).toContain('cannot read stream');
      }
      await waitFor(async () => (await head(c.leader.url)) >= before + 4, 10_000, 'the leader to keep sealing while NATS is away');
      await c.nats.restart();
      await waitFor(async () => (await health(c.leader.url)).status === 200, 15_000, 'the leader healthy again');
      for (const r of c.replicas) {
        await caughtUp(c.leader.url, r!.url, 30_000);
        await waitFor(async () => (await health(r!.url)).status === 200, 15_000, 'the replica healthy again');
      }
    }
    await settle(c);
  }, 120_000);

  it('leader restart, kill -9 and SIGTERM: replicas go on with the new run and never mix runs', async () => {
    const c = await watched(2);
    await waitFor(async () => (await head(c.leader.url)) >= 4, 15_000, 'block 4');
    for (const signal of ['SIGKILL', 'SIGTERM'] as const) {
      await c.leader.kill(signal);
      // A clean stop seals what was pre-confirmed and publishes that block before exiting:
      // the replicas have the leader's last block before it comes back.
      const last = signal === 'SIGTERM' ? Number(/stopped after publishing block (\d+)/.exec(c.leader.output())?.[1]) : null;
      if (last !== null) {
        for (const r of c.replicas) await waitFor(async () => (await head(r!.url)) === last, 5_000, `a replica to get block ${last} from the stopped leader`);
      }
      await c.startLeader();
      if (last !== null) expect(Number(/head block (\d+)/.exec(c.leader.output())?.[1])).toBe(last);
      await record!.attach(c.leader.url.replace('http', 'ws'));
      const after = await head(c.leader.url);
      await waitFor(async () => (await head(c.leader.url)) >= after + 3, 15_000, 'the restarted leader to seal three blocks');
      for (const r of c.replicas) await caughtUp(c.leader.url, r!.url, 30_000);
    }
    // A kill -9 can cut the leader's own record short by its last pre-confirmation or two.
    expect(await settle(c, true)).toBeLessThanOrEqual(4);
  }, 120_000);

  it('a replica stalled for seconds catches up; the leader and the other replica do not wait for it', async () => {
    const c = await watched(2);
    await waitFor(async () => (await head(c.leader.url)) >= 3, 15_000, 'block 3');
    const stalled = c.replica(0);
    process.kill(stalled.child.pid!, 'SIGSTOP');
    const from = await head(c.leader.url);
    try {
      // The leader goes on sealing, and the other replica stays with it.
      await waitFor(async () => (await head(c.leader.url)) >= from + 8, 15_000, 'eight blocks while a replica is stalled');
      await caughtUp(c.leader.url, c.replica(1).url, 3_000);
    } finally {
      process.kill(stalled.child.pid!, 'SIGCONT');
    }
    await caughtUp(c.leader.url, stalled.url, 30_000);
    await settle(c);
  }, 90_000);

  it('a replica started after 1,000 blocks replays them from genesis; one on a copied datadir from its head', async () => {
    const c = (cluster = await Cluster.start({ replicas: 0, chainArgs: ['--preconf-interval-ms', '10', '--block-time-ms', '20'] }));
    await waitFor(async () => (await head(c.leader.url)) >= 1_000, 90_000, 'block 1,000', 200);
    const target = await head(c.leader.url);
    const started = Date.now();
    const fresh = await c.startReplica(0);
    await waitFor(async () => (await head(fresh.url)) >= target, 60_000, `the new replica to reach block ${target}`, 50);
    const seconds = (Date.now() - started) / 1000;
    console.log(`catch-up from genesis: ${target} blocks in ${seconds.toFixed(1)} s (${Math.round(target / seconds)} blocks/s, process start included)`);
    await caughtUp(c.leader.url, fresh.url, 30_000);
    await sameChain(c.leader.url, fresh.url, target);

    const copy = await c.copyLeaderDatadir();
    const copied = await c.startReplica(1, copy);
    // No position in a copy of the leader's datadir: its head is looked up in the stream.
    await waitFor(
      () => /block \d+ is this replica's head; reading stream preconf from message [1-9]\d*/.test(copied.output()),
      10_000,
      'the copied replica to place its head in the stream',
    );
    await caughtUp(c.leader.url, copied.url, 30_000);
    const top = await head(c.leader.url);
    await sameChain(c.leader.url, copied.url, top);
    await sameChain(c.leader.url, fresh.url, top);
  }, 180_000);
});
