// Child processes and ports for tests that run real programs (the node, anvil).

import type { ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';

// Ports are drawn below the kernel's ephemeral range (32768+ on Linux): a port the kernel hands
// to listen(0) can be taken by any outgoing connection between our close() and the child's bind.
const PORT_LOW = 20_000;
const PORT_HIGH = 32_000;
const handedOut = new Set<number>();

/** A loopback port nothing listens on now, never the same one twice in this process. */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = PORT_LOW + Math.floor(Math.random() * (PORT_HIGH - PORT_LOW));
    if (handedOut.has(port)) continue;
    if (await canListen(port)) {
      handedOut.add(port);
      return port;
    }
  }
  throw new Error(`no free port in ${PORT_LOW}-${PORT_HIGH}`);
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

/** Sends `signal` to `child` unless it already exited; resolves with how it exited. */
export function killChild(child: ChildProcess, exited: Promise<number | string>, signal: NodeJS.Signals): Promise<number | string> {
  if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  return exited;
}
