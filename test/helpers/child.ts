// Child processes and ports for tests that run real programs (the node, anvil).

import type { ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

/** Sends `signal` to `child` unless it already exited; resolves with how it exited. */
export function killChild(child: ChildProcess, exited: Promise<number | string>, signal: NodeJS.Signals): Promise<number | string> {
  if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  return exited;
}
