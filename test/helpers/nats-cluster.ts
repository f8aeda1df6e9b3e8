// Three real nats-server processes forming one NATS cluster on loopback (routes between
// them, a JetStream store each), so that replicated streams (R3) and key-value buckets work
// as in production, and any one server can be killed while the other two keep quorum.

import { freePort } from './child.js';
import { NatsServer, NatsStartError } from './nats.js';

export class NatsCluster {
  private constructor(readonly servers: NatsServer[]) {}

  /** Starts `size` servers at once (JetStream in a cluster waits for a quorum to be healthy). */
  static async start(size = 3): Promise<NatsCluster> {
    // A port found free can still be bound by another test's process before nats-server binds it.
    for (let attempt = 1; ; attempt++) {
      try {
        return await NatsCluster.startOnce(size);
      } catch (e) {
        if (attempt >= 3 || !(e instanceof NatsStartError) || !e.message.includes('address already in use')) throw e;
      }
    }
  }

  private static async startOnce(size: number): Promise<NatsCluster> {
    const ports = await Promise.all(
      Array.from({ length: size }, async () => ({ client: await freePort(), monitor: await freePort(), cluster: await freePort() })),
    );
    const routes = ports.map((p) => `nats://127.0.0.1:${p.cluster}`).join(',');
    const started = await Promise.allSettled(
      ports.map((p, i) =>
        NatsServer.start({
          name: `preconf-n${i}`,
          ports: { client: p.client, monitor: p.monitor },
          args: ['--cluster_name', 'preconf', '--cluster', `nats://127.0.0.1:${p.cluster}`, '--routes', routes],
        }),
      ),
    );
    const servers = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
    const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) {
      await Promise.all(servers.map((s) => s.cleanup()));
      throw failed.reason;
    }
    return new NatsCluster(servers);
  }

  /** Every server's client URL (what `--cluster` takes). */
  get urls(): string[] {
    return this.servers.map((s) => s.url);
  }

  async cleanup(): Promise<void> {
    await Promise.all(this.servers.map((s) => s.cleanup()));
  }
}
