// Read replicas over NATS JetStream: what the server starts for --publish (a leader) and
// --follow (a replica), and the methods a replica forwards to its leader.

import type { ReplicationConfig } from '../cli.js';
import type { Chain } from '../native.js';
import type { Method } from '../protocol/jsonrpc.js';
import type { SubscriptionHub } from '../subscriptions/hub.js';
import { Follower } from './follower.js';
import { forwardedMethods, LeaderClient } from './forward.js';
import { Leader } from './leader.js';
import type { Log } from './outage.js';

export interface Replication {
  /** Stops publishing or following (before the chain closes). */
  close(): Promise<void>;
}

const log: Log = (m) => process.stderr.write(`[preconf-node] ${m}\n`);

/** Starts publishing or following as configured; null for a node that does neither. */
export function startReplication(chain: Chain, config: ReplicationConfig): Replication | null {
  const { stream, natsTimeoutMs } = config;
  if (config.publish !== undefined) {
    log(`replication: publishing to stream "${stream}" on ${config.publish}`);
    return new Leader(chain.replication(), { url: config.publish, stream, queue: config.queue, natsTimeoutMs }, log);
  }
  if (config.follow !== undefined) {
    log(`replica: following stream "${stream}" on ${config.follow}; transactions go to ${config.leader}`);
    return new Follower(chain.replication(), { url: config.follow, stream, natsTimeoutMs }, log);
  }
  return null;
}

/** On a replica, replaces the methods that belong to the leader with forwarding ones. */
export function forwardToLeader(methods: Map<string, Method>, config: ReplicationConfig, hub: SubscriptionHub, chain: Chain): void {
  if (config.follow === undefined || config.leader === undefined) return;
  const forwarded = forwardedMethods({ leader: new LeaderClient(config.leader), local: new Map(methods), hub, chain });
  for (const [name, method] of Object.entries(forwarded)) methods.set(name, method);
}
