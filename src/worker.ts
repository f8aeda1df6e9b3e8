// A worker thread serving the same port as the main thread (--threads): it attaches to the
// chain the main thread opened and runs its own uWebSockets.js event loop.

import { parentPort, workerData } from 'node:worker_threads';
import uWS from './transport/uws.js';
import { Chain } from './native.js';
import { buildLoop, listen } from './server.js';
import { workerMetrics } from './metrics/node.js';
import { createLogger, defaultLogConfig } from './log/index.js';
import type { Config } from './cli/index.js';

const { handle, config, port, loop: index } = workerData as { handle: number; config: Config; port: number; loop: number };

createLogger(config.log ?? defaultLogConfig());
try {
  const chain = Chain.attach(handle);
  // This loop's GET /metrics asks the main thread, which sums every loop's figures.
  let scrape: (() => Promise<string>) | undefined;
  const loop = buildLoop(chain, chain.info(), config, () => scrape!(), index);
  scrape = workerMetrics(parentPort!, loop.metrics);
  const socket = await listen(loop.app, config.server.host, port, false, config.server.uwsGuard);
  parentPort!.on('message', (m) => {
    if (m !== 'close') return;
    uWS.us_listen_socket_close(socket);
    loop.ws.closeAll('server shutting down');
    loop.app.close();
    chain.close();
    parentPort!.close();
  });
  parentPort!.postMessage({ ready: true });
} catch (e) {
  parentPort!.postMessage({ error: (e as Error).message });
}
