// Assembles the node: the chain (addon), the method registry, and the transports on one
// uWebSockets.js app. Used by the CLI and by the tests, which start it on a free port.

import uWS from './transport/uws.js';
import { Chain } from './native.js';
import { Dispatcher } from './protocol/jsonrpc.js';
import { buildMethods } from './methods/index.js';
import { mountHttp } from './transport/http.js';
import { mountWebSocket } from './transport/ws.js';
import { SubscriptionHub } from './subscriptions/hub.js';
import type { Config } from './cli.js';

export interface RunningNode {
  chain: Chain;
  host: string;
  port: number;
  url: string;
  wsUrl: string;
  chainId: number;
  /** Stops listening, stops the builder and flushes the store. */
  close(): void;
}

export async function startNode(config: Config): Promise<RunningNode> {
  const chain = Chain.open(config.chain);
  const info = chain.info();
  const hub = new SubscriptionHub(chain);
  const methods = buildMethods({
    hub,
    chain,
    chainId: info.chainId,
    clientVersion: info.clientVersion,
    publicEndpoint: config.server.publicEndpoint,
    preconf: config.chain.preconf,
  });
  const dispatcher = new Dispatcher(methods, { maxBatch: config.server.maxBatch });
  const app = uWS.App();
  // WebSocket first: uWS matches the upgrade on the same paths HTTP serves.
  const ws = mountWebSocket(app, dispatcher, hub, {
    maxConnections: config.server.wsMaxConnections,
    maxSubscriptions: config.server.wsMaxSubscriptions,
    maxBackpressureBytes: config.server.wsMaxBackpressureBytes,
    maxPayloadBytes: config.server.maxBodyBytes,
  });
  mountHttp(app, dispatcher, { maxBodyBytes: config.server.maxBodyBytes }, () => {
    const problem = chain.health();
    const body = JSON.stringify({
      status: problem === null ? 'ok' : 'degraded',
      ...(problem === null ? {} : { reason: problem }),
      chainId: info.chainId,
      head: Number.parseInt(JSON.parse(chain.blockNumber()) as string, 16),
      wsConnections: ws.connections(),
      subscriptions: hub.count(),
    });
    return { healthy: problem === null, body };
  });
  const { host } = config.server;
  const listenSocket = await new Promise<uWS.us_listen_socket>((resolve, reject) => {
    // Exclusive: uWS would otherwise share the port (SO_REUSEPORT) with another process.
    app.listen(host, config.server.port, uWS.LIBUS_LISTEN_EXCLUSIVE_PORT, (token) => {
      if (token) resolve(token);
      else reject(new Error(`cannot listen on ${host}:${config.server.port} (in use, or not an address of this machine)`));
    });
  }).catch((e: unknown) => {
    // Release the store and stop the builder before reporting.
    app.close();
    chain.close();
    throw e;
  });
  const port = uWS.us_socket_local_port(listenSocket);
  let closed = false;
  return {
    chain,
    host,
    port,
    url: `http://${host}:${port}`,
    wsUrl: `ws://${host}:${port}`,
    chainId: info.chainId,
    close() {
      if (closed) return;
      closed = true;
      uWS.us_listen_socket_close(listenSocket);
      ws.closeAll('server shutting down');
      app.close();
      chain.close();
    },
  };
}
