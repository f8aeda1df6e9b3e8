// Every flag: its name, the placeholder of its value, its help line, where its default comes
// from, and how it sets the configuration. Values are checked here, naming the flag.

import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { defaultLogConfig, LOG_LEVELS, type LogConfig, type LogLevel } from '../log/index.js';
import type { NodeOptions } from '../native.js';
import type { Config, ReplicationConfig, ServerConfig } from './config.js';
import { OP_FLAGS } from './op-flags.js';
import { FLASHBLOCKS_FLAGS } from './flashblocks-flags.js';
import { ENGINE_FLAGS } from './engine-flags.js';

export interface Flag {
  name: string;
  value?: string; // placeholder when the flag takes a value
  help: string;
  /** The option whose default the help text shows: the chain's come from the addon. */
  chainDefault?: keyof NodeOptions;
  serverDefault?: keyof ServerConfig;
  replicationDefault?: keyof ReplicationConfig;
  logDefault?: keyof LogConfig;
  apply(cfg: Config, v: string): void;
}

const int = (name: string, v: string, min = 0): number => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) throw new Error(`--${name} must be an integer >= ${min}, got "${v}"`);
  return n;
};

function natsUrl(flag: string, v: string): string {
  let url: URL;
  try {
    url = new URL(v.includes('://') ? v : `nats://${v}`);
  } catch {
    throw new Error(`--${flag} must be a NATS server address (nats://HOST:PORT), got "${v}"`);
  }
  if (url.protocol !== 'nats:' && url.protocol !== 'tls:') throw new Error(`--${flag} must be a nats:// address, got "${v}"`);
  return url.href.replace(/\/$/, '');
}

function httpUrl(flag: string, v: string): string {
  let url: URL;
  try {
    url = new URL(v);
  } catch {
    throw new Error(`--${flag} must be an http(s) URL (http://HOST:PORT), got "${v}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`--${flag} must be an http(s) URL, got "${v}"`);
  return url.href;
}

/** A fork's upstream: http(s):// or ws(s):// (anvil takes both). */
function forkUrl(v: string): string {
  let url: URL;
  try {
    url = new URL(v);
  } catch {
    throw new Error(`--fork-url must be an http(s) or ws(s) URL (http://HOST:PORT, ws://HOST:PORT), got "${v}"`);
  }
  if (!['http:', 'https:', 'ws:', 'wss:'].includes(url.protocol)) throw new Error(`--fork-url must be an http(s) or ws(s) URL, got "${v}"`);
  return url.href;
}

function forkHeader(v: string): string {
  if (!/^[^:\s]+:.*$/.test(v)) throw new Error(`--fork-header must be KEY:VALUE, got "${v}"`);
  return v;
}

/** Node ids appear in message ids and logs: printable, no spaces or dots. */
function nodeId(v: string): string {
  if (!/^[A-Za-z0-9_:-]{1,64}$/.test(v)) throw new Error(`--node-id must be 1-64 letters, digits, "_", ":" or "-", got "${v}"`);
  return v;
}

/** JetStream stream names: no whitespace, dots, wildcards or path separators. */
function streamName(v: string): string {
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(v)) throw new Error(`--stream must be 1-64 letters, digits, "_" or "-", got "${v}"`);
  return v;
}

export const FLAGS: Flag[] = [
  { name: 'host', value: 'ADDR', help: 'interface to listen on', serverDefault: 'host', apply: (c, v) => void (c.server.host = v) },
  {
    name: 'port',
    value: 'PORT',
    help: 'port for HTTP and WebSocket (default 8545; 0 picks a free one)',
    apply: (c, v) => void (c.server.port = int('port', v)),
  },
  { name: 'datadir', value: 'DIR', help: 'where the chain is stored (default ./data)', apply: (c, v) => void (c.chain.datadir = resolve(v)) },
  { name: 'ephemeral', help: 'keep the chain in memory only; nothing is written to disk', apply: (c) => void delete c.chain.datadir },
  {
    name: 'genesis',
    value: 'FILE',
    help: 'geth-style genesis.json, read by streaming (default: the embedded dev chain, or the chain the datadir holds)',
    apply: (c, v) => {
      if (!existsSync(v)) throw new Error(`cannot read --genesis ${v}: no such file`);
      c.chain.genesisFile = resolve(v);
    },
  },
  {
    name: 'rollup-config',
    value: 'FILE',
    help: "chain config for a --genesis whose config is null (OP chains): op-node's rollup.json or the superchain registry's chain TOML",
    apply: (c, v) => void (c.chain.rollupConfig = resolve(v)),
  },
  {
    name: 'db-cache-mb',
    value: 'MB',
    help: 'page cache of the store (bounds its memory)',
    chainDefault: 'dbCacheMb',
    apply: (c, v) => void (c.chain.dbCacheMb = int('db-cache-mb', v, 8)),
  },
  {
    name: 'preconf-interval-ms',
    value: 'MS',
    help: 'pre-confirmation interval',
    chainDefault: 'preconfIntervalMs',
    apply: (c, v) => void (c.chain.preconfIntervalMs = int('preconf-interval-ms', v, 10)),
  },
  {
    name: 'block-time-ms',
    value: 'MS',
    help: 'block sealing interval',
    chainDefault: 'blockTimeMs',
    apply: (c, v) => void (c.chain.blockTimeMs = int('block-time-ms', v, 10)),
  },
  {
    name: 'no-build',
    help: 'serve the stored chain without producing blocks (an imported chain; transactions wait in the pool)',
    apply: (c) => void (c.chain.build = false),
  },
  {
    name: 'profile',
    value: 'NAME',
    help: 'interface profile: "default" (the product\'s) or "geth" (geth\'s answers where they differ, docs/compat.md)',
    apply: (c, v) => {
      if (v !== 'default' && v !== 'geth') throw new Error(`--profile must be "default" or "geth", got "${v}"`);
      c.chain.profile = v;
    },
  },
  { name: 'no-preconf', help: 'no pre-confirmations: pending equals latest, eth_simulateV1 is off', apply: (c) => void (c.chain.preconf = false) },
  {
    name: 'preconf-receipts',
    help: 'answer eth_getTransactionReceipt for pre-confirmed transactions (Base-style; default: once sealed, as geth)',
    apply: (c) => void (c.chain.preconfReceipts = true),
  },
  { name: 'public', help: 'public endpoint mode: eth_getBlockReceipts answers HTTP 403', apply: (c) => void (c.server.publicEndpoint = true) },
  {
    name: 'gas-cap',
    value: 'GAS',
    help: 'gas for eth_call/estimateGas when none is given',
    chainDefault: 'gasCap',
    apply: (c, v) => void (c.chain.gasCap = int('gas-cap', v, 21000)),
  },
  {
    name: 'finality-depth',
    value: 'N',
    help: 'blocks behind the head that count as finalized',
    chainDefault: 'finalityDepth',
    apply: (c, v) => void (c.chain.finalityDepth = int('finality-depth', v)),
  },
  {
    name: 'max-body-bytes',
    value: 'N',
    help: 'largest HTTP request body',
    serverDefault: 'maxBodyBytes',
    apply: (c, v) => void (c.server.maxBodyBytes = int('max-body-bytes', v, 1024)),
  },
  {
    name: 'max-batch',
    value: 'N',
    help: 'largest JSON-RPC batch',
    serverDefault: 'maxBatch',
    apply: (c, v) => void (c.server.maxBatch = int('max-batch', v, 1)),
  },
  {
    name: 'pool-max-per-sender',
    value: 'N',
    help: 'pooled transactions per sender',
    chainDefault: 'poolMaxPerSender',
    apply: (c, v) => void (c.chain.poolMaxPerSender = int('pool-max-per-sender', v, 1)),
  },
  {
    name: 'pool-max',
    value: 'N',
    help: 'pooled transactions in all',
    chainDefault: 'poolMaxTotal',
    apply: (c, v) => void (c.chain.poolMaxTotal = int('pool-max', v, 1)),
  },
  {
    name: 'simulate-max-blocks',
    value: 'N',
    help: 'eth_simulateV1 blocks per request',
    chainDefault: 'simulateMaxBlocks',
    apply: (c, v) => void (c.chain.simulateMaxBlocks = int('simulate-max-blocks', v, 1)),
  },
  {
    name: 'simulate-max-calls-per-block',
    value: 'N',
    help: 'eth_simulateV1 calls per block',
    chainDefault: 'simulateMaxCallsPerBlock',
    apply: (c, v) => void (c.chain.simulateMaxCallsPerBlock = int('simulate-max-calls-per-block', v, 1)),
  },
  {
    name: 'simulate-max-calls',
    value: 'N',
    help: 'eth_simulateV1 calls per request',
    chainDefault: 'simulateMaxCalls',
    apply: (c, v) => void (c.chain.simulateMaxCalls = int('simulate-max-calls', v, 1)),
  },
  {
    name: 'simulate-timeout-ms',
    value: 'MS',
    help: 'eth_simulateV1 wall-clock budget',
    chainDefault: 'simulateTimeoutMs',
    apply: (c, v) => void (c.chain.simulateTimeoutMs = int('simulate-timeout-ms', v, 1)),
  },
  {
    name: 'logs-max-range',
    value: 'N',
    help: 'eth_getLogs block range',
    chainDefault: 'logsMaxRange',
    apply: (c, v) => void (c.chain.logsMaxRange = int('logs-max-range', v, 1)),
  },
  {
    name: 'logs-max-results',
    value: 'N',
    help: 'eth_getLogs result size',
    chainDefault: 'logsMaxResults',
    apply: (c, v) => void (c.chain.logsMaxResults = int('logs-max-results', v, 1)),
  },
  {
    name: 'trace-max-timeout-ms',
    value: 'MS',
    help: 'longest timeout a debug_trace* request may ask for (one that asks for none gets 5 s)',
    chainDefault: 'traceMaxTimeoutMs',
    apply: (c, v) => void (c.chain.traceMaxTimeoutMs = int('trace-max-timeout-ms', v, 1)),
  },
  {
    name: 'trace-max-bytes',
    value: 'BYTES',
    help: 'largest debug_trace* output per request',
    chainDefault: 'traceMaxBytes',
    apply: (c, v) => void (c.chain.traceMaxBytes = int('trace-max-bytes', v, 1024)),
  },
  {
    name: 'batch-concurrency',
    value: 'N',
    help: 'heavy requests (eth_call, estimates, simulations, traces, logs) of one batch running at once',
    serverDefault: 'batchConcurrency',
    apply: (c, v) => void (c.server.batchConcurrency = int('batch-concurrency', v, 1)),
  },
  {
    name: 'batch-budget-ms',
    value: 'MS',
    help: "time a batch's heavy requests may take in all; later ones answer -32005",
    serverDefault: 'batchBudgetMs',
    apply: (c, v) => void (c.server.batchBudgetMs = int('batch-budget-ms', v, 1)),
  },
  {
    name: 'batch-max-response-bytes',
    value: 'N',
    help: "size of a batch's answer past which the remaining requests answer -32003",
    serverDefault: 'batchMaxResponseBytes',
    apply: (c, v) => void (c.server.batchMaxResponseBytes = int('batch-max-response-bytes', v, 1024)),
  },
  {
    name: 'rate-limit',
    value: 'RPS',
    help: 'requests per second per client address, HTTP 429 above (default off)',
    apply: (c, v) => void (c.server.rateLimit = int('rate-limit', v, 1)),
  },
  {
    name: 'rate-limit-heavy',
    value: 'N',
    help: 'heavy requests in flight per client address (default off)',
    apply: (c, v) => void (c.server.rateLimitHeavy = int('rate-limit-heavy', v, 1)),
  },
  {
    name: 'trusted-proxies',
    value: 'N',
    help: 'reverse proxies in front: the client address is taken from X-Forwarded-For, N hops from the right',
    serverDefault: 'trustedProxies',
    apply: (c, v) => void (c.server.trustedProxies = int('trusted-proxies', v)),
  },
  {
    name: 'no-uws-guard',
    help: "leave uWebSockets.js's parsers unguarded: HTTP/1.0 and malformed first requests go unanswered, WebSocket violations drop the connection (docs/hostile-clients.md)",
    apply: (c) => void (c.server.uwsGuard = false),
  },
  {
    name: 'ws-max-connections',
    value: 'N',
    help: 'WebSocket connections',
    serverDefault: 'wsMaxConnections',
    apply: (c, v) => void (c.server.wsMaxConnections = int('ws-max-connections', v, 1)),
  },
  {
    name: 'ws-max-subscriptions',
    value: 'N',
    help: 'subscriptions per WebSocket connection',
    serverDefault: 'wsMaxSubscriptions',
    apply: (c, v) => void (c.server.wsMaxSubscriptions = int('ws-max-subscriptions', v, 1)),
  },
  {
    name: 'ws-max-backpressure',
    value: 'BYTES',
    help: 'unsent bytes before a slow subscriber is dropped',
    serverDefault: 'wsMaxBackpressureBytes',
    apply: (c, v) => void (c.server.wsMaxBackpressureBytes = int('ws-max-backpressure', v, 1024)),
  },
  {
    name: 'threads',
    value: 'N',
    help: 'event loops serving HTTP/WebSocket on one chain (default: cores - 1, 1..4)',
    apply: (c, v) => void (c.server.threads = int('threads', v, 1)),
  },
  {
    name: 'publish',
    value: 'NATS_URL',
    help: 'publish every pre-confirmation and sealed block to NATS JetStream (this node leads)',
    apply: (c, v) => void ((c.replication.publish = natsUrl('publish', v)), (c.chain.keepChangeSets = true), (c.chain.publish = true)),
  },
  {
    name: 'follow',
    value: 'NATS_URL',
    help: 'be a read replica of the stream on this NATS server (no builder; needs --leader)',
    apply: (c, v) => void ((c.replication.follow = natsUrl('follow', v)), (c.chain.build = false)),
  },
  {
    name: 'leader',
    value: 'URL',
    help: "the leader's HTTP endpoint, where a replica forwards transactions",
    apply: (c, v) => void (c.replication.leader = httpUrl('leader', v)),
  },
  {
    name: 'stream',
    value: 'NAME',
    help: 'JetStream stream of the chain',
    replicationDefault: 'stream',
    apply: (c, v) => void (c.replication.stream = streamName(v)),
  },
  {
    name: 'publish-queue',
    value: 'N',
    help: 'events a leader queues while NATS is unreachable',
    replicationDefault: 'queue',
    apply: (c, v) => void (c.replication.queue = int('publish-queue', v, 1)),
  },
  {
    name: 'nats-timeout-ms',
    value: 'MS',
    help: 'NATS unreachable this long: /health answers 503',
    replicationDefault: 'natsTimeoutMs',
    apply: (c, v) => void (c.replication.natsTimeoutMs = int('nats-timeout-ms', v, 1)),
  },
  {
    name: 'cluster',
    value: 'NATS_URL[,…]',
    help: 'a node of a cluster on these NATS servers: the nodes elect a leader (a lease), the others follow it',
    apply: (c, v) => void ((c.replication.cluster = v.split(',').map((u) => natsUrl('cluster', u.trim()))), (c.chain.cluster = true)),
  },
  { name: 'node-id', value: 'NAME', help: "this node's name in the cluster (default: HOST:PORT)", apply: (c, v) => void (c.replication.nodeId = nodeId(v)) },
  {
    name: 'advertise',
    value: 'URL',
    help: 'where the cluster forwards transactions to this node when it leads (default: http://HOST:PORT)',
    apply: (c, v) => void (c.replication.advertise = httpUrl('advertise', v)),
  },
  {
    name: 'lease-ms',
    value: 'MS',
    help: "the leader's lease: a leader silent this long is replaced",
    replicationDefault: 'leaseMs',
    apply: (c, v) => void (c.replication.leaseMs = int('lease-ms', v, 200)),
  },
  {
    name: 'leader-wait-ms',
    value: 'MS',
    help: 'a write waits this long for a leader during an election; /health answers 503 after it',
    replicationDefault: 'leaderWaitMs',
    apply: (c, v) => void (c.replication.leaderWaitMs = int('leader-wait-ms', v, 1)),
  },
  {
    name: 'stream-replicas',
    value: 'N',
    help: 'copies NATS keeps of a stream this node creates (default 3 with --cluster, else 1)',
    apply: (c, v) => void (c.replication.streamReplicas = int('stream-replicas', v, 1)),
  },
  {
    name: 'history-blocks',
    value: 'N',
    help: 'keep bodies, receipts, the transaction index and state history of the last N blocks only (0: everything)',
    chainDefault: 'historyBlocks',
    apply: (c, v) => void (c.chain.historyBlocks = int('history-blocks', v)),
  },
  {
    name: 'min-free-disk-mb',
    value: 'MB',
    help: 'below this much free disk in the datadir, stop sealing and refuse transactions until space is freed (0: no check)',
    chainDefault: 'minFreeDiskMb',
    apply: (c, v) => void (c.chain.minFreeDiskMb = int('min-free-disk-mb', v)),
  },
  {
    name: 'fork-url',
    value: 'URL',
    help: 'fork a live chain: its state at the fork block is read from this http(s) or ws(s) JSON-RPC endpoint as needed, and this node builds on that block (docs/fork.md)',
    apply: (c, v) => void (c.chain.forkUrl = forkUrl(v)),
  },
  {
    name: 'fork-block-number',
    value: 'N',
    help: "the block to fork at (default: the upstream's latest at start)",
    apply: (c, v) => void (c.chain.forkBlockNumber = int('fork-block-number', v)),
  },
  {
    name: 'fork-chain-id',
    value: 'ID',
    help: 'the chain id of the fork, without asking the upstream',
    apply: (c, v) => void (c.chain.forkChainId = int('fork-chain-id', v, 1)),
  },
  {
    name: 'fork-retries',
    value: 'N',
    help: 'attempts after a failed upstream request (default 5)',
    apply: (c, v) => void (c.chain.forkRetries = int('fork-retries', v)),
  },
  {
    name: 'fork-retry-backoff',
    value: 'MS',
    help: 'wait before the first retry of an upstream request, doubling after (default 1000)',
    apply: (c, v) => void (c.chain.forkRetryBackoffMs = int('fork-retry-backoff', v)),
  },
  {
    name: 'fork-timeout-ms',
    value: 'MS',
    help: 'one upstream request may take this long (default 45000)',
    apply: (c, v) => void (c.chain.forkTimeoutMs = int('fork-timeout-ms', v, 1)),
  },
  {
    name: 'compute-units-per-second',
    value: 'N',
    help: "the upstream's rate limit in compute units (default 330; none for a loopback upstream)",
    apply: (c, v) => void (c.chain.computeUnitsPerSecond = int('compute-units-per-second', v, 1)),
  },
  { name: 'no-rate-limit', help: 'send upstream requests without a rate limit', apply: (c) => void (c.chain.noRateLimit = true) },
  { name: 'no-storage-caching', help: "keep the upstream's state in memory only, not in the datadir", apply: (c) => void (c.chain.noStorageCaching = true) },
  {
    name: 'fork-header',
    value: 'KEY:VALUE',
    help: 'a header sent with every upstream request (repeatable)',
    apply: (c, v) => void (c.chain.forkHeaders = [...(c.chain.forkHeaders ?? []), forkHeader(v)]),
  },
  {
    name: 'log-format',
    value: 'FORMAT',
    help: 'log lines as "json" or "pretty" (default: pretty on a terminal, else json)',
    apply: (c, v) => {
      if (v !== 'json' && v !== 'pretty') throw new Error(`--log-format must be "json" or "pretty", got "${v}"`);
      c.log = { ...(c.log ?? defaultLogConfig()), format: v };
    },
  },
  {
    name: 'log-level',
    value: 'LEVEL',
    help: 'debug, info, warn or error (debug adds a line per sealed block)',
    logDefault: 'level',
    apply: (c, v) => {
      if (!LOG_LEVELS.includes(v as LogLevel)) throw new Error(`--log-level must be one of ${LOG_LEVELS.join(', ')}, got "${v}"`);
      c.log = { ...(c.log ?? defaultLogConfig()), level: v as LogLevel };
    },
  },
  {
    name: 'log-slow-ms',
    value: 'MS',
    help: 'log requests that take this long or longer at warn (method, duration, size; never parameters; 0: every request)',
    logDefault: 'slowMs',
    apply: (c, v) => void (c.log = { ...(c.log ?? defaultLogConfig()), slowMs: int('log-slow-ms', v) }),
  },
  {
    name: 'dev',
    help: 'serve the test methods (anvil_*, evm_*, hardhat_*: docs/test-methods.md); default: on for the embedded dev chain, off with --genesis or --no-build',
    apply: (c) => void (c.chain.dev = true),
  },
  { name: 'no-dev', help: 'do not serve the test methods, even on the embedded dev chain', apply: (c) => void (c.chain.dev = false) },
  { name: 'quiet', help: 'do not print the dev accounts at start', apply: (c) => void (c.server.printAccounts = false) },
  ...OP_FLAGS,
  ...FLASHBLOCKS_FLAGS,
  ...ENGINE_FLAGS,
];
