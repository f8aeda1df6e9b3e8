// Leader failover (--cluster) against real processes: three nodes on a three-server NATS
// cluster (stream and lease bucket replicated three times), under steady load sent to every
// node. Each fault is repeated; after each, the chain must hold: 0 forks, every accepted
// transaction sealed exactly once, every pre-confirmation shown sealed as shown, and no
// node's pending block ever went back.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkChain, Watchers } from '../helpers/cluster-check.js';
import { Senders } from '../helpers/traffic.js';
import { ClusterNodes } from '../helpers/cluster-nodes.js';
import { health } from '../helpers/replicas.js';
import { waitFor } from '../helpers/wait.js';

const LEASE_MS = 2_000;
/** The goal for a takeover, with room for a loaded two-core machine. */
const TAKEOVER_BOUND_MS = LEASE_MS + 6_000;

let c: ClusterNodes;
let senders: Senders;
let watchers: Watchers;

const urls = (): string[] => c.running().map((i) => c.url(i));

/** Lets the load run until `n` more transactions were accepted. */
async function accepting(n: number): Promise<void> {
  const from = senders.accepted.size;
  await waitFor(() => senders.accepted.size >= from + n, 30_000, `${n} more accepted transactions`, 50);
}

/** Waits until every node says it is healthy and names the same leader. */
async function settled(): Promise<number> {
  const leader = await c.leader(30_000);
  let said = '';
  await waitFor(
    async () => {
      const all = await Promise.all(c.running().map((i) => health(c.url(i))));
      said = JSON.stringify(all.map((h) => h.body.reason ?? 'ok'));
      return all.every((h) => h.status === 200);
    },
    30_000,
    'every node healthy',
    100,
  ).catch((e: Error) => {
    throw new Error(`${e.message}; they say ${said}`);
  });
  return leader;
}

/** The invariants, over what was accepted so far (the load keeps running). `refusable`:
 *  errors a write may get in this fault (said clearly, never a silent loss). */
async function chainHolds(refusable?: RegExp): Promise<void> {
  const accepted = new Set(senders.accepted);
  const report = await checkChain(urls(), accepted, watchers);
  expect(report.forks, 'forks').toEqual([]);
  expect(report.lost, 'accepted transactions never sealed').toEqual([]);
  expect(report.duplicated, 'transactions sealed twice').toEqual([]);
  expect(report.reversed, 'pre-confirmations not sealed as shown').toEqual([]);
  expect(watchers.backwards, 'pending went back').toEqual([]);
  // Writes during an election wait for the new leader: none is refused for want of one.
  // (A node that is frozen or killed cannot answer what was sent to it: not a refusal.)
  const refused = [...senders.errors.keys()].filter((e) => !/nonce too low|already known|unreachable/.test(e) && !refusable?.test(e));
  expect(refused, 'writes refused').toEqual([]);
  senders.errors.clear();
}

beforeAll(async () => {
  c = await ClusterNodes.start({ nodes: 3, leaseMs: LEASE_MS, args: ['--block-time-ms', '1000'] });
  await settled();
  // 6 accounts, one transfer each every 100 ms: ~60 tx/s, each to a random node.
  senders = new Senders(urls, [0, 1, 2, 3, 4, 5], 100);
  watchers = new Watchers(urls);
  await accepting(100);
}, 120_000);

afterAll(async () => {
  if (process.env.CLUSTER_LOGS) for (const i of c.running()) console.log(`--- node ${i}\n${c.node(i).output()}`);
  await senders?.stop();
  await watchers?.stop();
  await c?.stop();
});

describe('leader failover', () => {
  it('kill -9 of the leader: another node leads within the lease and a little, the old one comes back as a replica', async () => {
    for (let round = 0; round < 2; round++) {
      const old = await settled();
      await c.node(old).kill('SIGKILL');
      const killed = Date.now();
      const next = await c.leader(TAKEOVER_BOUND_MS, c.running());
      expect(next).not.toBe(old);
      expect(Date.now() - killed).toBeLessThan(TAKEOVER_BOUND_MS);
      await accepting(50);
      await c.start(old);
      expect(await settled()).toBe(next);
      await accepting(50);
      await chainHolds();
    }
  }, 180_000);

  it('SIGSTOP of the leader past its lease, then SIGCONT: it stops leading and follows the new leader', async () => {
    for (let round = 0; round < 2; round++) {
      const old = await settled();
      c.pause(old);
      try {
        const next = await c.leader(TAKEOVER_BOUND_MS, c.running());
        expect(next).not.toBe(old);
        await accepting(50);
      } finally {
        c.resume(old);
      }
      const after = await settled();
      expect(after).not.toBe(old);
      expect((await health(c.url(old))).body.role).toBe('replica');
      await accepting(50);
      await chainHolds();
    }
  }, 180_000);

  // JetStream elects new raft leaders for the stream and the lease bucket that lived on the
  // killed server (seconds): meanwhile nothing can be appended or renewed, so the leader
  // steps down and writes wait, then answer "no leader" (docs/scaling.md, fault table).
  it('kill -9 of one NATS server: the cluster goes on, and on again once it is back', async () => {
    for (let round = 0; round < 2; round++) {
      const server = c.nats.servers[round % 3]!;
      await server.kill();
      await accepting(100);
      await server.restart();
      await settled();
      await accepting(50);
      await chainHolds(/no leader: election in progress/);
    }
  }, 180_000);

  // After kill -9 of every node, the restarted ones cannot know the old leader is gone until
  // its lease runs out: writes meanwhile may wait past --leader-wait-ms and get "no leader".
  // After SIGTERM the leader released its lease, and the first ready node takes it at once.
  it('every node restarted (kill -9, then SIGTERM): one leads again, nothing accepted is lost', async () => {
    for (const signal of ['SIGKILL', 'SIGTERM'] as const) {
      const all = c.running();
      await Promise.all(all.map((i) => c.node(i).kill(signal)));
      await Promise.all(all.map((i) => c.start(i)));
      await settled();
      await accepting(50);
      await chainHolds(signal === 'SIGKILL' ? /no leader: election in progress/ : undefined);
    }
  }, 180_000);
});
