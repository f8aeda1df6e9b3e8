// The HTTP front (--http-front): a small Node proxy on the public port, in front of the
// uWebSockets.js apps, for what the bundled uWebSockets.js cannot do. It never answers an
// HTTP/1.0 request (the connection idles until its 10 s timeout), drops requests with a
// verb it does not know without a word, and drops a WebSocket on a protocol error or an
// oversized message without the close frame RFC 6455 asks for.
//
// The front reads each connection's first request line: HTTP/1.0 is passed on as HTTP/1.1
// with "Connection: close" (so uWS answers and closes, as an HTTP/1.0 exchange ends); an
// unknown verb or a malformed line is answered here (405 with Allow, or 400); a WebSocket
// upgrade has its client frames checked (ws-frames.ts). Everything else is piped as is.
// Every byte crosses this process twice more, which costs throughput (benches/RESULTS.md):
// it is off unless asked for.

import { connect, createServer, type Server, type Socket } from 'node:net';
import { Code } from '../errors/index.js';
import { ALLOW } from './http.js';
import { closeFrame, FrameChecker, type Violation } from './ws-frames.js';

export interface FrontOptions {
  /** Where the uWebSockets.js apps listen (loopback). */
  upstreamPort: number;
  /** Largest WebSocket message (--max-body-bytes). */
  maxMessageBytes: number;
}

/** The verbs uWebSockets.js parses; anything else it drops. */
const KNOWN = new Set(['GET', 'POST', 'HEAD', 'OPTIONS', 'PUT', 'DELETE', 'PATCH', 'TRACE', 'CONNECT']);
const MAX_HEAD = 16 * 1024;
const REQUEST_LINE = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+) (\S+) HTTP\/(1\.[01])\r\n/;

function answer(socket: Socket, status: string, body: string, extra = ''): void {
  const json = JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: Code.InvalidRequest, message: body } });
  socket.end(
    `HTTP/1.1 ${status}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(json)}\r\n${extra}Connection: close\r\n\r\n${json}`,
  );
}

/** Decides what to do with a connection from the start of its first request. */
function route(head: Buffer, socket: Socket, opts: FrontOptions): void {
  const text = head.toString('latin1');
  const m = REQUEST_LINE.exec(text);
  if (m === null) {
    answer(socket, '400 Bad Request', 'bad request: malformed request line');
    return;
  }
  const [line, method, , version] = m;
  if (!KNOWN.has(method!)) {
    answer(socket, '405 Method Not Allowed', `method ${method} not allowed: JSON-RPC is served by POST /`, `Allow: ${ALLOW}\r\n`);
    return;
  }
  // uWS drops a request without Host, which HTTP/1.1 requires (RFC 9112: 400) and HTTP/1.0 does not.
  const hasHost = /\r\nhost:/i.test(text.slice(0, text.indexOf('\r\n\r\n') + 2));
  if (version === '1.1' && !hasHost) {
    answer(socket, '400 Bad Request', 'bad request: an HTTP/1.1 request needs a Host header');
    return;
  }
  const headers = text.slice(0, text.indexOf('\r\n\r\n') + 2);
  if (/\r\ntransfer-encoding:/i.test(headers) && /\r\ncontent-length:/i.test(headers)) {
    // uWS closes such a request without a word; RFC 9112 wants 400 and a closed connection.
    answer(socket, '400 Bad Request', 'bad request: both Transfer-Encoding and Content-Length');
    return;
  }
  let first = head;
  if (version === '1.0') {
    // Passed on as HTTP/1.1 with "Connection: close": uWS answers and closes, as an HTTP/1.0
    // exchange ends (an HTTP/1.1 status line is a valid answer to an HTTP/1.0 client).
    const added = `Connection: close\r\n${hasHost ? '' : 'Host: localhost\r\n'}`;
    first = Buffer.concat([Buffer.from(`${line!.replace(/HTTP\/1\.0\r\n$/, 'HTTP/1.1\r\n')}${added}`, 'latin1'), head.subarray(line!.length)]);
  }
  const websocket = /\r\nupgrade:[ \t]*websocket/i.test(text);
  const upstream = connect(opts.upstreamPort, '127.0.0.1');
  upstream.setNoDelay(true);
  const drop = (): void => {
    socket.destroy();
    upstream.destroy();
  };
  upstream.on('error', drop);
  socket.on('error', drop);
  socket.on('close', () => upstream.destroy());
  upstream.on('close', () => socket.end());
  upstream.pipe(socket);
  if (!websocket) {
    upstream.write(first);
    socket.pipe(upstream);
    return;
  }
  // The upgrade request goes on as it is; what follows its blank line is frames, checked.
  const headEnd = text.indexOf('\r\n\r\n');
  upstream.write(head.subarray(0, headEnd + 4));
  const checker = new FrameChecker(opts.maxMessageBytes);
  // uWS loses frames that reach it with the upgrade request, before its 101 answer (a client
  // should wait for the answer; this one did not): they wait here for it.
  let held: Buffer[] | null = [];
  let violation: Violation | undefined;
  const close = (v: Violation): void => {
    upstream.unpipe(socket);
    upstream.destroy();
    socket.end(closeFrame(v));
  };
  // Registered after the pipe: by now the 101 answer has gone to the client.
  upstream.once('data', () => {
    const early = held!;
    held = null;
    if (violation !== undefined) return close(violation);
    for (const b of early) upstream.write(b);
  });
  const frames = (chunk: Buffer): void => {
    const out = checker.push(chunk);
    if (!Buffer.isBuffer(out)) {
      socket.off('data', frames);
      // A close frame goes after the handshake's answer, never before it.
      if (held === null) close(out);
      else violation = out;
      return;
    }
    if (out.length === 0) return;
    if (held !== null) held.push(out);
    else if (!upstream.write(out)) {
      socket.pause();
      upstream.once('drain', () => socket.resume());
    }
  };
  const rest = head.subarray(headEnd + 4);
  socket.on('data', frames);
  if (rest.length > 0) frames(rest);
}

/** The front server; `close` stops listening and drops every connection. */
export interface Front {
  port: number;
  close(): Promise<void>;
}

export function startFront(host: string, port: number, opts: FrontOptions): Promise<Front> {
  const sockets = new Set<Socket>();
  const server: Server = createServer({ noDelay: true }, (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    let head: Buffer = Buffer.alloc(0);
    // The whole head first (it normally comes in one piece): a WebSocket upgrade is known by
    // its headers.
    const take = (chunk: Buffer): void => {
      head = head.length === 0 ? chunk : Buffer.concat([head, chunk]);
      if (head.indexOf('\r\n\r\n') === -1 && head.length < MAX_HEAD) return;
      socket.off('data', take);
      route(head, socket, opts);
    };
    socket.on('data', take);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      const address = server.address();
      resolve({
        port: typeof address === 'object' && address !== null ? address.port : port,
        close: () =>
          new Promise((done) => {
            server.close(() => done());
            for (const s of sockets) s.destroy();
          }),
      });
    });
  });
}
