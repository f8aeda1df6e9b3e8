// The Engine API's flags, with geth's and reth's names: the authenticated port op-node
// drives the node through (src/engine/, docs/engine-api.md). Off unless one is given.

import { resolve } from 'node:path';
import type { Config, EngineConfig } from './config.js';

/** The shape of flags.ts's `Flag` these use (declared here: flags.ts imports this file). */
interface EngineFlag {
  name: string;
  value?: string;
  help: string;
  apply(cfg: Config, v: string): void;
}

export const DEFAULT_AUTHRPC_PORT = 8551;

/** The Engine API's settings, its defaults filled in by the first flag that names it. */
function engine(c: Config): EngineConfig {
  return (c.engine ??= { addr: '127.0.0.1', port: DEFAULT_AUTHRPC_PORT });
}

export const ENGINE_FLAGS: EngineFlag[] = [
  {
    name: 'authrpc.addr',
    value: 'HOST',
    help: 'serve the Engine API (op-node) on this address (default 127.0.0.1 once any --authrpc flag is given)',
    apply: (c, v) => void (engine(c).addr = v),
  },
  {
    name: 'authrpc.port',
    value: 'PORT',
    help: `serve the Engine API on this port (default ${DEFAULT_AUTHRPC_PORT} once any --authrpc flag is given; 0: a free port)`,
    apply: (c, v) => {
      const n = Number(v);
      if (!Number.isInteger(n) || n < 0 || n > 65535) throw new Error(`--authrpc.port must be a port number, got "${v}"`);
      engine(c).port = n;
    },
  },
  {
    name: 'authrpc.jwtsecret',
    value: 'FILE',
    help: "the Engine API's JWT secret (hex, 32 bytes), created when missing (default DATADIR/jwt.hex)",
    apply: (c, v) => void (engine(c).jwtSecret = resolve(v)),
  },
];
