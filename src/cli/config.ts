// The node's configuration as the flags build it, and its defaults (which run the dev chain).

import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { defaultLogConfig, type LogConfig } from '../log/index.js';
import type { NodeOptions } from '../native.js';

export interface ServerConfig {
  host: string;
  port: number;
  maxBodyBytes: number;
  maxBatch: number;
  publicEndpoint: boolean;
  wsMaxConnections: number;
  wsMaxSubscriptions: number;
  wsMaxBackpressureBytes: number;
  printAccounts: boolean;
  /** Event loops serving the port (main thread + workers). */
  threads: number;
  /** Heavy requests of one batch running at once, and the time they may take in all. */
  batchConcurrency: number;
  batchBudgetMs: number;
  /** Bytes of a batch's answer past which the rest answer -32003. */
  batchMaxResponseBytes: number;
  /** Per client address: requests per second, heavy requests in flight (0: off). */
  rateLimit: number;
  rateLimitHeavy: number;
  /** Reverse proxies in front whose X-Forwarded-For is believed. */
  trustedProxies: number;
  /** The uWebSockets.js guard (crates/uws-guard); off only with --no-uws-guard. */
  uwsGuard: boolean;
  /** The rate limiters' shared table (startNode makes it when a limit is on). */
  rateTable?: SharedArrayBuffer;
}

/** Read replicas and leader failover over NATS JetStream (src/replication/, crates/replication). */
export interface ReplicationConfig {
  /** --publish: build, and publish every pre-confirmation and sealed block to this server. */
  publish?: string;
  /** --follow: a replica of the stream on this server (no builder). */
  follow?: string;
  /** --leader: where a replica forwards transactions. */
  leader?: string;
  /** JetStream stream name. */
  stream: string;
  /** Events a leader queues while NATS is unreachable. */
  queue: number;
  /** How long NATS may be unreachable before /health answers 503. */
  natsTimeoutMs: number;
  /** --cluster: NATS servers of a cluster whose nodes elect their leader (a lease). */
  cluster?: string[];
  /** --node-id: this node's name in the cluster (default: its host and port). */
  nodeId?: string;
  /** --advertise: where the other nodes forward transactions to this one when it leads. */
  advertise?: string;
  /** --lease-ms: how long the leader's lease runs without renewal. */
  leaseMs: number;
  /** --leader-wait-ms: how long a write waits for a leader during an election. */
  leaderWaitMs: number;
  /** --stream-replicas: copies JetStream keeps of a stream this node creates. */
  streamReplicas?: number;
}

/** The flashblocks endpoint (src/flashblocks, docs/flashblocks.md): where it listens, and
 *  whether its messages carry a state root per flashblock. */
export interface FlashblocksConfig {
  addr: string;
  /** 0: any free port (the tests). */
  port: number;
  stateRoot: boolean;
}

/** Following a sequencer's flashblocks (--flashblocks-url; docs/flashblocks.md). */
export interface FlashblocksFollowConfig {
  url: string;
  /** --flashblocks.stale-after: a stream silent this long is connected again. */
  staleAfterMs: number;
  /** --flashblocks.max-wait: the longest a flashblock waits for its canonical parent. */
  maxWaitMs: number;
}

/** The Engine API's port (--authrpc.*, src/cli/engine-flags.ts). */
export interface EngineConfig {
  addr: string;
  port: number;
  /** 32 bytes of hex; created when the file does not exist. Absent: DATADIR/jwt.hex. */
  jwtSecret?: string;
}

export interface Config {
  server: ServerConfig;
  /** Only what the operator set: the chain's defaults live in the addon (defaultOptions). */
  chain: NodeOptions;
  replication: ReplicationConfig;
  /** --log-format, --log-level, --log-slow-ms (absent: the defaults, src/log). */
  log?: LogConfig;
  /** --flashblocks.addr / --flashblocks.port: the FlashblocksPayloadV1 endpoint (absent: off). */
  flashblocks?: FlashblocksConfig;
  /** --flashblocks-url: the pending block from a sequencer's flashblocks (absent: off). */
  flashblocksFollow?: FlashblocksFollowConfig;
  /** --authrpc.*: the Engine API's authenticated port (absent: not served). */
  engine?: EngineConfig;
  /** --rollup.sequencerhttp: where a node that does not build sends transactions (op-geth's
   *  flag; src/replication/forward.ts). */
  sequencerHttp?: string;
}

export function defaultConfig(): Config {
  return {
    server: {
      host: '127.0.0.1',
      port: 8545,
      maxBodyBytes: 5 * 1024 * 1024,
      maxBatch: 1000,
      publicEndpoint: false,
      wsMaxConnections: 10_000,
      wsMaxSubscriptions: 100,
      wsMaxBackpressureBytes: 4 * 1024 * 1024,
      printAccounts: true,
      // Leave a core to the builder, libuv's pool and the rest; uWS loops scale to a few.
      threads: Math.max(1, Math.min(availableParallelism() - 1, 4)),
      batchConcurrency: 2,
      batchBudgetMs: 10_000,
      batchMaxResponseBytes: 25_000_000,
      rateLimit: 0,
      rateLimitHeavy: 0,
      trustedProxies: 0,
      uwsGuard: true,
    },
    chain: { datadir: resolve('data') },
    replication: { stream: 'preconf', queue: 1024, natsTimeoutMs: 5000, leaseMs: 2000, leaderWaitMs: 3000 },
    log: defaultLogConfig(),
  };
}
