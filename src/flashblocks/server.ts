// The flashblocks endpoint (--flashblocks.addr / --flashblocks.port): a WebSocket on its own
// uWebSockets.js app that publishes every pre-confirmation of the block being built as
// FlashblocksPayloadV1, as op-rbuilder's builder endpoint does, for Base's RPC nodes and
// anything else that follows flashblocks. The addon renders each message once (on its event
// renderer thread, from the chain's events); here it is only handed to every client.
//
// Two encodings, chosen by the path a client connects to:
//   ws://HOST:PORT/        JSON text frames (op-rbuilder's, rollup-boost's)
//   ws://HOST:PORT/brotli  brotli-compressed binary frames (what Base's WebSocket proxy
//                          forwards; its consumers read either)
// A message is compressed once, and only while some client takes brotli. A client that
// connects mid-block first gets the open block's messages so far (replay.ts).
//
// The endpoint has a chain handle of its own (attached to the node the main loop opened), so
// its events come on their own receiver and the JSON-RPC subscriptions are left alone.

import { brotliCompressSync, constants as zlib } from 'node:zlib';
import type { WebSocket } from 'uWebSockets.js';
import uWS from '../transport/uws.js';
import { Chain } from '../native.js';
import { componentLogger } from '../log/index.js';
import type { FlashblocksConfig } from '../cli/config.js';
import { BlockSoFar } from './replay.js';

export const BROTLI_PATH = '/brotli';
/** Brotli quality: it runs on the main event loop once per message. On the real Base message
 *  (31 KB) quality 3 gives 4,832 bytes in ~0.7 ms, 5 gives 4,775 in ~2 ms, 11 gives 4,419 in
 *  ~270 ms (load 7, docs/flashblocks.md): 3 keeps nearly all of the saving. */
const BROTLI_QUALITY = 3;
/** Unsent bytes past which a client is closed as too slow (1008), so it cannot hold memory. */
const MAX_BUFFERED = 16 * 1024 * 1024;
const UWS_HARD_LIMIT = 1024 * 1024 * 1024;
const CLOSE_TOO_SLOW = 1008;

interface Client {
  brotli: boolean;
}

export interface FlashblocksServer {
  port: number;
  /** ws://HOST:PORT (add BROTLI_PATH for compressed frames). */
  url: string;
  clients(): number;
  close(): void;
}

/** Starts the endpoint on the node `handle` names. */
export async function startFlashblocks(handle: number, config: FlashblocksConfig): Promise<FlashblocksServer> {
  const log = componentLogger('flashblocks');
  const chain = Chain.attach(handle);
  chain.setFlashblocksStateRoot(config.stateRoot);
  const plain = new Set<WebSocket<Client>>();
  const soFar = new BlockSoFar();
  const compress = (message: string): Buffer =>
    brotliCompressSync(message, { params: { [zlib.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY, [zlib.BROTLI_PARAM_SIZE_HINT]: message.length } });
  const compressed = new Set<WebSocket<Client>>();
  const app = uWS.App();
  app.ws<Client>('/*', {
    compression: uWS.DISABLED,
    // Clients only listen: nothing they send is read.
    maxPayloadLength: 1024,
    maxBackpressure: UWS_HARD_LIMIT,
    closeOnBackpressureLimit: false,
    idleTimeout: 120,
    sendPingsAutomatically: true,
    upgrade: (res, req, context) => {
      const path = req.getUrl();
      if (path !== '/' && path !== BROTLI_PATH) {
        res.writeStatus('404 Not Found').end(`flashblocks are served on / (JSON text) and ${BROTLI_PATH} (brotli)`);
        return;
      }
      res.upgrade<Client>(
        { brotli: path === BROTLI_PATH },
        req.getHeader('sec-websocket-key'),
        req.getHeader('sec-websocket-protocol'),
        req.getHeader('sec-websocket-extensions'),
        context,
      );
    },
    open: (ws) => {
      const brotli = ws.getUserData().brotli;
      for (const message of soFar.replay(brotli, compress)) ws.send(message, brotli, false);
      (brotli ? compressed : plain).add(ws);
    },
    close: (ws) => {
      plain.delete(ws);
      compressed.delete(ws);
    },
  });
  app.any('/*', (res) => void res.writeStatus('426 Upgrade Required').end('flashblocks: connect with a WebSocket'));

  const send = (clients: Set<WebSocket<Client>>, message: string | Buffer, binary: boolean): void => {
    for (const ws of clients) {
      if (ws.getBufferedAmount() > MAX_BUFFERED) {
        clients.delete(ws);
        ws.end(CLOSE_TOO_SLOW, 'too slow: flashblocks are not waiting for this client');
        continue;
      }
      ws.send(message, binary, false);
    }
  };
  chain.subscribeEvents((kind, payload) => {
    if (kind === 'head') return soFar.sealedFrom(payload);
    if (kind !== 'flashblocksV1') return;
    send(plain, payload, false);
    const frame = compressed.size > 0 ? compress(payload) : undefined;
    if (frame !== undefined) send(compressed, frame, true);
    soFar.published(payload, frame);
  });
  // Rendered from the next block that opens on, whether or not a client is connected yet:
  // each message's state root builds on the ones before it in the block.
  chain.setEventInterest(['flashblocksV1']);

  // Exclusive: a second node on the same port fails to start rather than sharing it.
  const token = await new Promise<uWS.us_listen_socket | false>((resolve) => app.listen(config.addr, config.port, uWS.LIBUS_LISTEN_EXCLUSIVE_PORT, resolve));
  if (token === false) {
    chain.close();
    app.close();
    throw new Error(`flashblocks: cannot listen on ${config.addr}:${config.port} (in use, or not an address of this machine)`);
  }
  const port = uWS.us_socket_local_port(token);
  const host = config.addr === '0.0.0.0' || config.addr === '::' ? '127.0.0.1' : config.addr;
  log.info({ addr: config.addr, port, stateRoot: config.stateRoot }, 'flashblocks endpoint listening');
  return {
    port,
    url: `ws://${host}:${port}`,
    clients: () => plain.size + compressed.size,
    close: () => {
      uWS.us_listen_socket_close(token);
      for (const ws of [...plain, ...compressed]) ws.end(1001, 'server shutting down');
      app.close();
      chain.close();
    },
  };
}
