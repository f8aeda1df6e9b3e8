// Replication over NATS JetStream: what the server starts for --publish (a static leader),
// --follow (a static replica) and --cluster (every node the same; the lease names the
// leader), and the methods that go to the leader. The NATS client, roles and lease run in
// the addon (crates/replication); here is only their start, stop and the forwarding of writes.

import type { Config, ReplicationConfig } from '../cli/index.js';
import type { Chain } from '../native.js';
import type { Method } from '../protocol/jsonrpc.js';
import type { SubscriptionHub } from '../subscriptions/hub.js';
import { clusterRoute, forwardedMethods, routeUnbuilt, staticRoute, type Route } from './forward.js';
import { componentLogger } from '../log/index.js';

export interface Replication {
  /** Stops publishing or following (before the chain closes); a leader seals and
   *  publishes what it showed first. */
  close(): Promise<void>;
}

/** Where this node takes forwarded transactions, and what it calls itself in a cluster. */
export interface Identity {
  advertise: string;
  nodeId: string;
}

/** Starts publishing, following or clustering as configured; null for a node that does none. */
export function startReplication(chain: Chain, config: ReplicationConfig, self: Identity): Replication | null {
  const { stream, natsTimeoutMs, streamReplicas } = config;
  const common = { stream, natsTimeoutMs, streamReplicas };
  if (config.publish !== undefined) {
    componentLogger('replication').info({ role: 'publisher', stream, nats: config.publish }, `publishing to stream ${stream} on ${config.publish}`);
    chain.replicationStart({ mode: 'publish', servers: [config.publish], queue: config.queue, ...common });
  } else if (config.follow !== undefined) {
    componentLogger('replica').info(
      { role: 'replica', stream, nats: config.follow, leader: config.leader },
      `following stream ${stream} on ${config.follow}; transactions go to ${config.leader}`,
    );
    chain.replicationStart({ mode: 'follow', servers: [config.follow], ...common });
  } else if (config.cluster !== undefined) {
    componentLogger('cluster').info(
      { nodeId: self.nodeId, advertise: self.advertise, stream, nats: config.cluster },
      `node ${self.nodeId} (${self.advertise}) on stream ${stream} at ${config.cluster.join(', ')}`,
    );
    chain.replicationStart({
      mode: 'cluster',
      servers: config.cluster,
      nodeId: self.nodeId,
      advertise: self.advertise,
      leaseMs: config.leaseMs,
      leaderWaitMs: config.leaderWaitMs,
      ...common,
    });
  } else {
    return null;
  }
  return { close: () => chain.replicationStop() };
}

/** Where this node's writes go, in one place: a replica's or a cluster node's to its leader;
 *  an RPC node's (blocks from op-node or a sequencer's flashblocks, none built here) to its
 *  sequencer, or refused without one; a node that builds keeps them. */
export function routeWrites(methods: Map<string, Method>, config: Config, hub: SubscriptionHub, chain: Chain): void {
  const r = config.replication;
  if (r.follow !== undefined || r.cluster !== undefined) return forwardToLeader(methods, r, hub, chain);
  const fedBlocks = config.chain.build === false && (config.engine !== undefined || config.flashblocksFollow !== undefined);
  if (config.sequencerHttp !== undefined || fedBlocks) routeUnbuilt(methods, config.sequencerHttp, hub, chain);
}

/** On a replica or a cluster's node, replaces the methods that belong to the leader. */
function forwardToLeader(methods: Map<string, Method>, config: ReplicationConfig, hub: SubscriptionHub, chain: Chain): void {
  let route: Route;
  if (config.follow !== undefined && config.leader !== undefined) route = staticRoute(config.leader);
  else if (config.cluster !== undefined) route = clusterRoute(chain, config.leaderWaitMs);
  else return;
  const forwarded = forwardedMethods({ route, local: new Map(methods), hub, chain });
  for (const [name, method] of Object.entries(forwarded)) methods.set(name, method);
}
