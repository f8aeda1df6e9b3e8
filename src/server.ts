// Assembles the node: the chain (addon), the method registry, and the transports on
// uWebSockets.js apps. With --threads N, N event loops (the main thread and N-1 workers)
// serve the same port (SO_REUSEPORT; the kernel spreads connections) and share one chain.
// Used by the CLI and by the tests, which start it on a free port.

import { Worker } from 'node:worker_threads';
import uWS, { uwsBuild } from './transport/uws.js';
import { Chain, defaultChainOptions, forwardRustLogs, guardHttp, type ChainInfo } from './native.js';
import { Dispatcher, type Method } from './protocol/jsonrpc.js';
import { buildMethods } from './methods/index.js';
import { mountHttp } from './transport/http.js';
import { mountWebSocket, type WebSocketServer } from './transport/ws.js';
import { SubscriptionHub } from './subscriptions/hub.js';
import { logInternal } from './errors/index.js';
import { componentLogger, createLogger, defaultLogConfig } from './log/index.js';
import { LoopMetrics } from './metrics/loop.js';
import { NodeMetrics } from './metrics/node.js';
import { mountMetrics } from './metrics/http.js';
import { routeWrites, startReplication } from './replication/index.js';
import { RateLimiter, rateTable } from './limits/rate.js';
import { startFlashblocks, type FlashblocksServer } from './flashblocks/server.js';
import type { Config } from './cli/index.js';
import { startEngine, type EngineServer } from './engine/server.js';

export interface RunningNode {
  chain: Chain;
  host: string;
  port: number;
  url: string;
  wsUrl: string;
  chainId: number;
  threads: number;
  /** The flashblocks endpoint (--flashblocks.port), when on: ws://HOST:PORT. */
  flashblocksUrl?: string;
  /** The Engine API's authenticated port, when --authrpc.* is given. */
  engine?: EngineServer;
  /** Stops listening (every thread), stops the builder and flushes the store. */
  close(): Promise<void>;
}

/** One event loop's server: an app with HTTP and WebSocket on one chain handle. */
export interface LoopServer {
  app: uWS.TemplatedApp;
  /** The public method table (the Engine API's port serves it too). */
  methods: ReadonlyMap<string, Method>;
  ws: WebSocketServer;
  metrics: LoopMetrics;
}

/** `scrape` answers GET /metrics with the whole node's figures (see metrics/node.ts); `loop`
 *  numbers the event loop: 0 is the main thread, 1..N-1 the workers. */
export function buildLoop(chain: Chain, info: ChainInfo, config: Config, scrape: () => Promise<string>, loop = 0): LoopServer {
  const hub = new SubscriptionHub(chain);
  const methods = buildMethods({
    hub,
    chain,
    chainId: info.chainId,
    clientVersion: info.clientVersion,
    publicEndpoint: config.server.publicEndpoint,
    preconf: config.chain.preconf ?? defaultChainOptions().preconf ?? true,
    dev: chain.devEnabled(),
  });
  routeWrites(methods, config, hub, chain);
  const metrics = new LoopMetrics(methods.keys());
  const s = config.server;
  const rate = s.rateTable === undefined ? undefined : new RateLimiter({ rps: s.rateLimit, heavy: s.rateLimitHeavy }, s.rateTable);
  const rpcLog = componentLogger('rpc');
  const slowMs = (config.log ?? defaultLogConfig()).slowMs;
  const dispatcher = new Dispatcher(
    methods,
    {
      maxBatch: s.maxBatch,
      profile: config.chain.profile ?? 'default',
      batch: { concurrency: s.batchConcurrency, budgetMs: s.batchBudgetMs },
      batchMaxResponseBytes: s.batchMaxResponseBytes,
      rate,
      onRateLimited: (reason) => metrics.rateLimited(reason),
      slow: {
        ms: slowMs,
        report: (method, durationMs, responseBytes, failed) =>
          rpcLog.warn({ method, durationMs: Math.round(durationMs), responseBytes, failed, eventLoop: loop }, 'slow request'),
      },
    },
    logInternal,
    metrics.rpc,
  );
  const app = uWS.App();
  // WebSocket first: uWS matches the upgrade on the same paths HTTP serves.
  const ws = mountWebSocket(
    app,
    dispatcher,
    hub,
    {
      maxConnections: config.server.wsMaxConnections,
      maxSubscriptions: config.server.wsMaxSubscriptions,
      maxBackpressureBytes: config.server.wsMaxBackpressureBytes,
      maxPayloadBytes: config.server.maxBodyBytes,
      trustedProxies: s.trustedProxies,
      guard: config.server.uwsGuard,
    },
    metrics,
  );
  metrics.observeWebSocket({ connections: () => ws.connections(), subscriptions: () => hub.countByKind() });
  mountMetrics(app, scrape);
  mountHttp(app, dispatcher, { maxBodyBytes: config.server.maxBodyBytes, trustedProxies: s.trustedProxies }, () => {
    const problem = chain.health();
    const body = JSON.stringify({
      status: problem === null ? 'ok' : 'degraded',
      ...(problem === null ? {} : { reason: problem }),
      chainId: info.chainId,
      head: Number.parseInt(JSON.parse(chain.blockNumber()) as string, 16),
      ...replicationHealth(chain),
      // Of the event loop that answered (each thread counts its own), and which one it was.
      wsConnections: ws.connections(),
      subscriptions: hub.count(),
      eventLoop: loop,
      runtime: RUNTIME,
    });
    return { healthy: problem === null, body };
  });
  return { app, ws, metrics, methods };
}

/** What serves: the Node.js line and the uWebSockets.js build the loader picked. */
const RUNTIME = { node: process.version, uws: `${uwsBuild.name}@${uwsBuild.version}` };

/** A cluster node's place in it, for /health: role, the leader it knows, the term. */
function replicationHealth(chain: Chain): Record<string, unknown> {
  const s = chain.replicationStatus();
  if (s === null) return {};
  return { role: s.role, leader: s.leader?.node ?? null, leaderUrl: s.leader?.url ?? null, term: s.term, ...(s.notReady ? { notReady: s.notReady } : {}) };
}

/** Listens; `exclusive` refuses a port another socket holds instead of sharing it. */
/** The uWebSockets.js guard on a listen socket; without it (another uWS build) the node runs on. */
function guardConnections(token: uWS.us_listen_socket): void {
  try {
    guardHttp(token);
  } catch (e) {
    componentLogger('rpc').warn({ err: (e as Error).message }, 'HTTP/1.0 and malformed requests will go unanswered');
  }
}

export function listen(app: uWS.TemplatedApp, host: string, port: number, exclusive: boolean, guard: boolean): Promise<uWS.us_listen_socket> {
  return new Promise((resolve, reject) => {
    const done = (token: uWS.us_listen_socket | false): void => {
      if (token) {
        if (guard) guardConnections(token);
        resolve(token);
      } else reject(new Error(`cannot listen on ${host}:${port} (in use, or not an address of this machine)`));
    };
    if (exclusive) app.listen(host, port, uWS.LIBUS_LISTEN_EXCLUSIVE_PORT, done);
    else app.listen(host, port, done);
  });
}

interface WorkerHandle {
  worker: Worker;
  closed: Promise<void>;
}

async function startWorker(handle: number, config: Config, port: number, loop: number, metrics: NodeMetrics): Promise<WorkerHandle> {
  const worker = new Worker(new URL('./worker.js', import.meta.url), { workerData: { handle, config, port, loop } });
  metrics.attach(worker);
  await new Promise<void>((resolve, reject) => {
    // Other messages (metrics) may come first once the worker listens.
    const started = (m: { ready?: boolean; error?: string }): void => {
      if (m.ready !== true && m.error === undefined) return;
      worker.off('message', started);
      if (m.ready) resolve();
      else reject(new Error(m.error));
    };
    worker.on('message', started);
    worker.once('error', reject);
  });
  const closed = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  return { worker, closed };
}

export async function startNode(config: Config): Promise<RunningNode> {
  if (config.server.rateLimit > 0 || config.server.rateLimitHeavy > 0) {
    // One table for every event loop: the workers get it with the config (shared, not copied).
    config = { ...config, server: { ...config.server, rateTable: rateTable() } };
  }
  const log = createLogger(config.log ?? defaultLogConfig());
  forwardRustLogs(log, config.log?.level ?? 'info');
  // With the Engine API served, an OP chain's blocks come only from it (docs/engine-api.md).
  const chain = Chain.open({ ...config.chain, engineDriven: config.chain.engineDriven ?? config.engine !== undefined });
  const info = chain.info();
  const { host } = config.server;
  const guard = config.server.uwsGuard;
  const threads = Math.max(1, config.server.threads);
  // The main thread answers every scrape, for its own loop and the workers' (metrics/node.ts).
  let nodeMetrics: NodeMetrics | undefined;
  const loop = buildLoop(chain, info, config, () => nodeMetrics!.scrape());
  nodeMetrics = new NodeMetrics(chain, loop.metrics);
  let listenSocket: uWS.us_listen_socket;
  const workers: WorkerHandle[] = [];
  try {
    if (threads === 1) {
      listenSocket = await listen(loop.app, host, config.server.port, true, guard);
    } else {
      // Claim the port exclusively once (so a second node cannot share it), then listen
      // shared from every thread.
      const probe = await listen(uWS.App(), host, config.server.port, true, false);
      const port = uWS.us_socket_local_port(probe);
      uWS.us_listen_socket_close(probe);
      listenSocket = await listen(loop.app, host, port, false, guard);
      for (let i = 1; i < threads; i++) workers.push(await startWorker(chain.handle(), config, port, i, nodeMetrics));
    }
  } catch (e) {
    // Release the store and stop the builder before reporting.
    for (const w of workers) await w.worker.terminate();
    loop.app.close();
    chain.close();
    throw e;
  }
  let flashblocks: FlashblocksServer | undefined;
  if (config.flashblocks !== undefined) {
    try {
      flashblocks = await startFlashblocks(chain.handle(), config.flashblocks);
    } catch (e) {
      for (const w of workers) await w.worker.terminate();
      uWS.us_listen_socket_close(listenSocket);
      loop.app.close();
      chain.close();
      throw e;
    }
  }
  const port = uWS.us_socket_local_port(listenSocket);
  let engine: EngineServer | undefined;
  if (config.engine !== undefined) {
    try {
      engine = await startEngine(chain, {
        config: config.engine,
        datadir: config.chain.datadir ?? undefined,
        publicMethods: loop.methods,
        maxBatch: config.server.maxBatch,
        listen: (app, h, p) => listen(app, h, p, true, guard),
      });
    } catch (e) {
      uWS.us_listen_socket_close(listenSocket);
      for (const w of workers) await w.worker.terminate();
      loop.app.close();
      chain.close();
      throw e;
    }
  }
  if (config.flashblocksFollow !== undefined) {
    // In Rust from here on (crates/flashblocks client, crates/chain flashblocks); stopped by chain.close().
    const { url, staleAfterMs, maxWaitMs } = config.flashblocksFollow;
    try {
      if (url === '') throw new Error('--flashblocks.stale-after and --flashblocks.max-wait need --flashblocks-url');
      chain.flashblocksFollowStart({ url, staleAfterMs, maxWaitMs });
    } catch (e) {
      uWS.us_listen_socket_close(listenSocket);
      flashblocks?.close();
      engine?.close();
      for (const w of workers) await w.worker.terminate();
      loop.app.close();
      chain.close();
      throw e;
    }
  }
  const selfHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  const replication = startReplication(chain, config.replication, {
    advertise: config.replication.advertise ?? `http://${selfHost}:${port}`,
    nodeId: config.replication.nodeId ?? `${selfHost}:${port}`,
  });
  let closing: Promise<void> | undefined;
  const close = async (): Promise<void> => {
    uWS.us_listen_socket_close(listenSocket);
    flashblocks?.close();
    engine?.close();
    await replication?.close();
    for (const w of workers) w.worker.postMessage('close');
    await Promise.all(workers.map((w) => Promise.race([w.closed, new Promise((r) => setTimeout(r, 5000))])));
    loop.ws.closeAll('server shutting down');
    loop.app.close();
    chain.close();
  };
  return {
    chain,
    host,
    port,
    url: `http://${host}:${port}`,
    wsUrl: `ws://${host}:${port}`,
    chainId: info.chainId,
    threads,
    ...(flashblocks === undefined ? {} : { flashblocksUrl: flashblocks.url }),
    ...(engine === undefined ? {} : { engine }),
    close: () => (closing ??= close()),
  };
}
