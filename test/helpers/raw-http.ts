// Raw bytes to a TCP port, and what comes back until the server closes or goes quiet: for
// requests no HTTP client will send (duplicate framing headers, HTTP/1.0, other verbs).

import { connect } from 'node:net';

export interface RawExchange {
  /** Everything received. */
  text: string;
  /** Whether the server closed the connection (rather than going quiet for `quietMs`). */
  closed: boolean;
}

export function rawExchange(port: number, data: string | Buffer, quietMs = 1500): Promise<RawExchange> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let timer: NodeJS.Timeout | undefined;
    const finish = (closed: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ text: Buffer.concat(chunks).toString('latin1'), closed });
    };
    const quiet = () => {
      clearTimeout(timer);
      timer = setTimeout(() => finish(false), quietMs);
    };
    socket.on('connect', () => {
      socket.write(data);
      quiet();
    });
    socket.on('data', (c) => {
      chunks.push(c);
      quiet();
    });
    socket.on('end', () => finish(true));
    socket.on('close', () => finish(true));
    socket.on('error', reject);
  });
}

/** Status line, headers (lower-case names) and body of the first response in `text`. */
export function parseResponse(text: string): { status: number; headers: Record<string, string>; body: string } {
  const end = text.indexOf('\r\n\r\n');
  const head = text.slice(0, end === -1 ? text.length : end).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of head.slice(1)) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const length = Number(headers['content-length'] ?? '0');
  const body = end === -1 ? '' : text.slice(end + 4, end + 4 + length);
  return { status: Number(head[0]?.split(' ')[1]), headers, body };
}
