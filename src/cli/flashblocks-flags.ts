// The flashblocks endpoint's flags, named as op-rbuilder names them: a WebSocket publishing
// every pre-confirmation as FlashblocksPayloadV1 (docs/flashblocks.md). Off unless an address
// or port is given.

import type { Config, FlashblocksConfig, FlashblocksFollowConfig } from './config.js';

/** op-rbuilder's defaults. */
const DEFAULTS: FlashblocksConfig = { addr: '127.0.0.1', port: 1111, stateRoot: true };

/** A follower's defaults: a stream silent for 3 s (15 flashblocks at Base's 200 ms) is
 *  connected again; a flashblock waits at most 2 s (one OP block) for its parent. */
const FOLLOW_DEFAULTS = { staleAfterMs: 3000, maxWaitMs: 2000 };

const follow = (c: Config): FlashblocksFollowConfig => (c.flashblocksFollow ??= { url: '', ...FOLLOW_DEFAULTS });
const millis = (flag: string, v: string): number => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > 3_600_000) throw new Error(`--${flag} must be a number of milliseconds (1 to 3600000), got "${v}"`);
  return n;
};

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
  {
    name: 'flashblocks-url',
    value: 'URL',
    help: "follow a sequencer's flashblocks (ws://HOST:PORT/, or /brotli): each is executed on this node's head and served as the pending block",
    apply: (c: Config, v: string) => {
      if (!/^ws:\/\/[^/]+/.test(v)) throw new Error(`--flashblocks-url must be a ws:// URL, got "${v}"`);
      follow(c).url = v;
      c.chain.followFlashblocks = true;
    },
  },
  {
    name: 'flashblocks.stale-after',
    value: 'MS',
    help: `with --flashblocks-url: a stream that sends nothing for this long is connected again (default ${FOLLOW_DEFAULTS.staleAfterMs})`,
    apply: (c: Config, v: string) => void (follow(c).staleAfterMs = millis('flashblocks.stale-after', v)),
  },
  {
    name: 'flashblocks.max-wait',
    value: 'MS',
    help: `with --flashblocks-url: the longest a flashblock waits for its canonical parent before it is dropped (default ${FOLLOW_DEFAULTS.maxWaitMs})`,
    apply: (c: Config, v: string) => void (follow(c).maxWaitMs = millis('flashblocks.max-wait', v)),
  },
];
