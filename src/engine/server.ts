// The Engine API's port: the same uWebSockets.js transport and JSON-RPC dispatcher as the
// public port, with its own method table (the engine_ methods beside the public ones, which
// op-node also calls on this port) and every request authenticated by its JWT (401 without).

import { resolve } from 'node:path';
import uWS from '../transport/uws.js';
import type { Chain } from '../native.js';
import { Dispatcher, type Method } from '../protocol/jsonrpc.js';
import { mountHttp } from '../transport/http.js';
import { logInternal } from '../errors/index.js';
import { componentLogger } from '../log/index.js';
import type { EngineConfig } from '../cli/config.js';
import { checkAuthorization, loadOrCreateSecret } from './jwt.js';
import { engineMethods } from './methods.js';

/** Payloads carry whole blocks: geth's authenticated port takes bodies this large. */
const ENGINE_MAX_BODY_BYTES = 128 * 1024 * 1024;

export interface EngineServer {
  port: number;
  url: string;
  /** The secret file in use (created when it was missing). */
  jwtSecretFile: string;
  close(): void;
}

export interface EngineOptions {
  config: EngineConfig;
  /** Where the default secret file goes (`DATADIR/jwt.hex`). */
  datadir?: string;
  /** The public port's methods, served here too. */
  publicMethods: ReadonlyMap<string, Method>;
  maxBatch: number;
  listen(app: uWS.TemplatedApp, host: string, port: number): Promise<uWS.us_listen_socket>;
}

export async function startEngine(chain: Chain, opts: EngineOptions): Promise<EngineServer> {
  const jwtSecretFile = opts.config.jwtSecret ?? resolve(opts.datadir ?? '.', 'jwt.hex');
  const secret = loadOrCreateSecret(jwtSecretFile);
  const methods = new Map([...opts.publicMethods, ...engineMethods(chain)]);
  const dispatcher = new Dispatcher(methods, { maxBatch: opts.maxBatch }, logInternal);
  const app = uWS.App();
  mountHttp(app, dispatcher, { maxBodyBytes: ENGINE_MAX_BODY_BYTES, authorize: (h) => checkAuthorization(h, secret) }, () => {
    const problem = chain.health();
    return {
      healthy: problem === null,
      body: JSON.stringify({ status: problem === null ? 'ok' : 'degraded', ...(problem === null ? {} : { reason: problem }) }),
    };
  });
  const token = await opts.listen(app, opts.config.addr, opts.config.port);
  const port = uWS.us_socket_local_port(token);
  componentLogger('engine').info({ addr: opts.config.addr, port, jwtSecret: jwtSecretFile }, 'Engine API listening');
  return {
    port,
    url: `http://${opts.config.addr}:${port}`,
    jwtSecretFile,
    close() {
      uWS.us_listen_socket_close(token);
      app.close();
    },
  };
}
