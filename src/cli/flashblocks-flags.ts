// The flashblocks endpoint's flags, named as op-rbuilder names them: a WebSocket publishing
// every pre-confirmation as FlashblocksPayloadV1 (docs/flashblocks.md). Off unless an address
// or port is given.

import type { Config, FlashblocksConfig } from './config.js';

/** op-rbuilder's defaults. */
const DEFAULTS: FlashblocksConfig = { addr: '127.0.0.1', port: 1111, stateRoot: true };

const endpoint = (c: Config): FlashblocksConfig => (c.flashblocks ??= { ...DEFAULTS });

export const FLASHBLOCKS_FLAGS = [
  {
    name: 'flashblocks.addr',
    value: 'HOST',
    help: `serve flashblocks (FlashblocksPayloadV1) on a WebSocket at this address (default ${DEFAULTS.addr} once --flashblocks.port is set; off unless either is)`,
    apply: (c: Config, v: string) => void (endpoint(c).addr = v),
  },
  {
    name: 'flashblocks.port',
    value: 'PORT',
    help: `the flashblocks WebSocket's port (${DEFAULTS.port} once --flashblocks.addr is set): ws://HOST:PORT/ sends JSON text, ws://HOST:PORT/brotli brotli-compressed binary frames`,
    apply: (c: Config, v: string) => {
      const n = Number(v);
      if (!Number.isInteger(n) || n < 0 || n > 65535) throw new Error(`--flashblocks.port must be a port number (0 to 65535), got "${v}"`);
      endpoint(c).port = n;
    },
  },
  {
    name: 'flashblocks.disable-state-root',
    help: 'send zero state roots and block hashes in flashblocks instead of computing one per pre-confirmation',
    apply: (c: Config) => void (endpoint(c).stateRoot = false),
  },
];
