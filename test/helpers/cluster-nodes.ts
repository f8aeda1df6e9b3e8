// A cluster of real `preconf-node` processes (--cluster) on a three-server NATS cluster, each
// node on its own datadir and port, so that a test can kill -9, SIGSTOP or restart any node
// or NATS server and look at what every node says.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './child.js';
import { NatsCluster } from './nats-cluster.js';
import { spawnNode, type NodeProcess } from './process.js';
import { call, health } from './replicas.js';
import { waitFor } from './wait.js';

export interface ClusterNodesOptions {
  nodes: number;
  /** Every node's flags (the chain's: block time, interval, ...), as the README asks. */
  args?: string[];
  leaseMs?: number;
  /** Where node `i` keeps its store (default: a directory of its own under one temp dir). */
  datadir?: (i: number) => string;
}

export class ClusterNodes {
  readonly procs: (NodeProcess | undefined)[] = [];
  readonly ports: number[] = [];
  readonly dirs: string[] = [];
  /** Extra flags of one node (a different genesis, say). */
  readonly extra: string[][] = [];
  /** Nodes stopped with SIGSTOP: alive, but no client gets an answer from them. */
  private readonly paused = new Set<number>();
  private readonly root = mkdtempSync(join(tmpdir(), 'preconf-ha-'));

  private constructor(
    readonly nats: NatsCluster,
    readonly opts: ClusterNodesOptions,
  ) {}

  static async start(opts: ClusterNodesOptions): Promise<ClusterNodes> {
    const c = new ClusterNodes(await NatsCluster.start(3), opts);
    try {
      for (let i = 0; i < opts.nodes; i++) {
        c.ports[i] = await freePort();
        c.dirs[i] = opts.datadir?.(i) ?? join(c.root, `node-${i}`);
        c.extra[i] = [];
      }
      await Promise.all(c.ports.map((_, i) => c.start(i)));
    } catch (e) {
      await c.stop();
      throw e;
    }
    return c;
  }

  args(i: number): string[] {
    return [
      '--datadir',
      this.dirs[i]!,
      '--cluster',
      this.nats.urls.join(','),
      '--node-id',
      `n${i}`,
      '--lease-ms',
      String(this.opts.leaseMs ?? 2000),
      '--nats-timeout-ms',
      '1000',
      ...(this.opts.args ?? []),
      ...this.extra[i]!,
    ];
  }

  /** Starts node `i` (again) on its datadir and port. */
  async start(i: number): Promise<NodeProcess> {
    const p = await spawnNode(this.args(i), this.ports[i]);
    this.procs[i] = p;
    return p;
  }

  node(i: number): NodeProcess {
    const p = this.procs[i];
    if (!p) throw new Error(`node ${i} is not running`);
    return p;
  }

  url(i: number): string {
    return `http://127.0.0.1:${this.ports[i]}`;
  }

  /** Nodes that run and answer (not killed, not paused). */
  running(): number[] {
    return this.procs.flatMap((p, i) => (p && p.child.exitCode === null && p.child.signalCode === null && !this.paused.has(i) ? [i] : []));
  }

  /** SIGSTOP: the process freezes (as in a long GC pause or a VM stall). */
  pause(i: number): void {
    process.kill(this.node(i).child.pid!, 'SIGSTOP');
    this.paused.add(i);
  }

  resume(i: number): void {
    process.kill(this.node(i).child.pid!, 'SIGCONT');
    this.paused.delete(i);
  }

  /** The node that says it leads, once exactly one running node does (and the others agree). */
  async leader(timeoutMs = 15_000, among = this.running()): Promise<number> {
    let found = -1;
    await waitFor(
      async () => {
        const said = await Promise.all(among.map(async (i) => ({ i, h: (await health(this.url(i)).catch(() => null))?.body })));
        const leading = said.filter((s) => s.h?.role === 'leader');
        if (leading.length !== 1) return false;
        found = leading[0]!.i;
        return said.every((s) => s.h?.leader === `n${found}` || s.h?.notReady !== undefined || s.h === undefined);
      },
      timeoutMs,
      'exactly one leader that the others name',
      50,
    );
    return found;
  }

  async stop(): Promise<void> {
    for (const i of this.paused) this.resume(i);
    await Promise.all(this.procs.map((p) => p?.kill('SIGKILL')));
    await this.nats.cleanup();
    rmSync(this.root, { recursive: true, force: true });
  }
}

export const headOf = async (url: string): Promise<number> => Number(await call<string>(url, 'eth_blockNumber'));
