// A leader, replicas and one real nats-server, each node the real `preconf-node` command
// (so a test can kill -9 any of them), on loopback ports and temporary datadirs.

import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { rawPost } from './node.js';
import { startNats, type NatsServer } from './nats.js';
import { spawnNode, type NodeProcess } from './process.js';
import { waitFor } from './wait.js';

export interface ClusterOptions {
  replicas: number;
  /** Chain flags (block time, pre-confirmation interval, ...): the leader's and, as the
   *  README asks, every replica's. */
  chainArgs?: string[];
  leaderArgs?: string[];
  replicaArgs?: string[];
}

export class Cluster {
  leader!: NodeProcess;
  readonly replicas: (NodeProcess | undefined)[] = [];
  readonly replicaDirs: string[] = [];
  private readonly root = mkdtempSync(join(tmpdir(), 'preconf-cluster-'));
  readonly leaderDir = join(this.root, 'leader');

  private constructor(
    readonly nats: NatsServer,
    readonly opts: ClusterOptions,
  ) {}

  static async start(opts: ClusterOptions): Promise<Cluster> {
    const c = new Cluster(await startNats(), opts);
    try {
      c.leader = await spawnNode(c.leaderArgs());
      for (let i = 0; i < opts.replicas; i++) await c.startReplica(i);
    } catch (e) {
      await c.stop();
      throw e;
    }
    return c;
  }

  leaderArgs(): string[] {
    return [
      '--datadir',
      this.leaderDir,
      '--publish',
      this.nats.url,
      '--nats-timeout-ms',
      '1000',
      ...(this.opts.chainArgs ?? []),
      ...(this.opts.leaderArgs ?? []),
    ];
  }

  replicaArgs(dir: string): string[] {
    const own = ['--datadir', dir, '--follow', this.nats.url, '--leader', this.leader.url, '--nats-timeout-ms', '1000'];
    return [...own, ...(this.opts.chainArgs ?? []), ...(this.opts.replicaArgs ?? [])];
  }

  /** Starts replica `i` on its datadir (a new one the first time, or `dir` when given). */
  async startReplica(i: number, dir?: string): Promise<NodeProcess> {
    this.replicaDirs[i] = dir ?? this.replicaDirs[i] ?? join(this.root, `replica-${i}`);
    const p = await spawnNode(this.replicaArgs(this.replicaDirs[i]!), this.replicas[i]?.port);
    this.replicas[i] = p;
    return p;
  }

  replica(i: number): NodeProcess {
    const r = this.replicas[i];
    if (!r) throw new Error(`replica ${i} is not running`);
    return r;
  }

  /** Starts the leader again (after `leader.kill`) on its datadir and port. */
  async startLeader(): Promise<void> {
    this.leader = await spawnNode(this.leaderArgs(), this.leader.port);
  }

  /** A copy of the leader's datadir taken while it is stopped (SIGTERM), then it restarts. */
  async copyLeaderDatadir(): Promise<string> {
    await this.leader.kill('SIGTERM');
    const copy = join(this.root, `copy-${Date.now()}`);
    cpSync(this.leaderDir, copy, { recursive: true });
    this.leader = await spawnNode(this.leaderArgs(), this.leader.port);
    return copy;
  }

  async stop(): Promise<void> {
    await Promise.all(this.replicas.map((r) => r?.kill('SIGKILL')));
    await this.leader?.kill('SIGKILL');
    await this.nats.cleanup();
    rmSync(this.root, { recursive: true, force: true });
  }
}

/** One JSON-RPC call's result (throws on an error answer). */
export async function call<T = any>(url: string, method: string, params: unknown[] = []): Promise<T> {
  const r = await rawPost(url, JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }));
  if (r.json?.error) throw new Error(`${method}: ${JSON.stringify(r.json.error)}`);
  return r.json.result as T;
}

export const head = async (url: string): Promise<number> => Number(await call<string>(url, 'eth_blockNumber'));

export async function health(url: string): Promise<{ status: number; body: any }> {
  const res = await fetch(`${url}/health`);
  return { status: res.status, body: await res.json() };
}

/** Waits until `replica` has the leader's newest sealed block (as of the call), same hash. */
export async function caughtUp(leader: string, replica: string, timeoutMs = 20_000): Promise<number> {
  const target = await head(leader);
  const want = (await call(leader, 'eth_getBlockByNumber', [`0x${target.toString(16)}`, false])).hash as string;
  await waitFor(
    async () => (await call(replica, 'eth_getBlockByNumber', [`0x${target.toString(16)}`, false]).catch(() => null))?.hash === want,
    timeoutMs,
    `the replica at ${replica} to reach block ${target}`,
    25,
  );
  return target;
}

/** Every block 0..to has the same hash, state root and receipts root on both nodes. */
export async function sameChain(a: string, b: string, to: number): Promise<void> {
  for (let from = 0; from <= to; from += 200) {
    const numbers = Array.from({ length: Math.min(200, to - from + 1) }, (_, i) => from + i);
    const body = JSON.stringify(numbers.map((n) => ({ jsonrpc: '2.0', id: n, method: 'eth_getBlockByNumber', params: [`0x${n.toString(16)}`, false] })));
    const [x, y] = await Promise.all([rawPost(a, body), rawPost(b, body)]);
    const pick = (r: any[]) => r.map((m) => `${m.id}:${m.result?.hash}:${m.result?.stateRoot}:${m.result?.receiptsRoot}`);
    const [px, py] = [pick(x.json), pick(y.json)];
    for (let i = 0; i < px.length; i++) if (px[i] !== py[i]) throw new Error(`block ${numbers[i]} differs: ${px[i]} vs ${py[i]}`);
  }
}

/** Keys sorted, so that two renderings of one object compare equal as text. */
export function canonical(v: unknown): string {
  return JSON.stringify(v, (_k, x) =>
    x && typeof x === 'object' && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : 1))) : x,
  );
}
