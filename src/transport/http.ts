// HTTP transport on uWebSockets.js: POST / carries JSON-RPC, GET /health is for load
// balancers. uWS rules kept here: onAborted is registered before any async work, body
// chunks are copied before the callback returns, `req` is never touched after the handler
// returns, and every multi-part write is corked.
//
// Framing (RFC 9112): uWS frames a body by the first Content-Length it sees, so a request
// with two of them, or with Transfer-Encoding beside one, is refused with 400 and the
// connection closed before another proxy can read it differently (request smuggling).
// HEAD is answered as GET without a body, and HEAD / as HEAD /health: monitors that probe
// the RPC URL itself get 200 while the node is healthy, as geth answers them (anvil: 405),
// never 404. Verbs other than GET, HEAD, POST and OPTIONS get 405 and Allow.

import type { HttpRequest, HttpResponse, TemplatedApp } from 'uWebSockets.js';
import { Code, HttpError, RateLimitedError } from '../errors/index.js';
import type { Caller, Dispatcher } from '../protocol/jsonrpc.js';
import { HttpCaller } from './client.js';
import { componentLogger } from '../log/index.js';

export interface HttpLimits {
  maxBodyBytes: number;
  /** Reverse proxies in front whose X-Forwarded-For entries are believed (--trusted-proxies). */
  trustedProxies?: number;
  /** An authenticated port (the Engine API's): why the Authorization header is refused, or
   *  null to serve the request. Refused requests get 401 before their body is read. */
  authorize?: (authorization: string) => string | null;
}

export const ALLOW = 'GET, HEAD, POST, OPTIONS';

interface Pending {
  closed: boolean;
}

const JSON_TYPE = 'application/json';

// What every answer writes, encoded once: uWebSockets.js copies a JavaScript string argument
// into UTF-8 on each call (malloc, copy, free), and takes bytes as they are.
const bytes = (text: string): Uint8Array => new Uint8Array(Buffer.from(text, 'latin1'));
const OK = bytes('200 OK');
const CONTENT_TYPE = bytes('Content-Type');
const JSON_TYPE_BYTES = bytes(JSON_TYPE);
const ALLOW_ORIGIN = bytes('Access-Control-Allow-Origin');
const ANY_ORIGIN = bytes('*');

function writeJson(res: HttpResponse, state: Pending, status: string | Uint8Array, body: string, closeConnection = false, head = false): void {
  if (state.closed) return;
  state.closed = true; // answered: the response object must not be touched again
  res.cork(() => {
    res.writeStatus(status).writeHeader(CONTENT_TYPE, JSON_TYPE_BYTES).writeHeader(ALLOW_ORIGIN, ANY_ORIGIN);
    // This uWS build aborts when endWithoutBody is given a length: the answer to HEAD goes
    // without Content-Length, which RFC 9110 allows (a HEAD answer has no body either way).
    if (head) res.endWithoutBody();
    else res.end(body, closeConnection);
  });
}

/** A rate-limited request: 429, Retry-After, and the JSON-RPC errors as the body. */
function writeLimited(res: HttpResponse, state: Pending, e: RateLimitedError): void {
  if (state.closed) return;
  state.closed = true;
  res.cork(() => {
    res
      .writeStatus(e.status)
      .writeHeader('Content-Type', JSON_TYPE)
      .writeHeader('Access-Control-Allow-Origin', '*')
      .writeHeader('Retry-After', String(e.retryAfterSeconds))
      .end(e.body);
  });
}

/** Why the request's framing headers are ambiguous, or null when they are not. */
function framingProblem(req: HttpRequest): string | null {
  return framing(readHead(req, false));
}

/** What a POST's head says, read in one pass over its fields: uWS's getHeader (the first
 *  field of a name) costs about as much as a whole pass, and the framing check needs the pass. */
interface PostHead {
  lengths: number;
  encoded: boolean;
  /** The first field of each name, as getHeader would return it ('' when absent). */
  contentType: string;
  contentLength: string;
  forwarded: string;
  authorization: string;
}

function readHead(req: HttpRequest, forwarded: boolean): PostHead {
  const head: PostHead = { lengths: 0, encoded: false, contentType: '', contentLength: '', forwarded: '', authorization: '' };
  let typed = false;
  let proxied = false;
  req.forEach((key, value) => {
    if (key === 'content-length') {
      if (head.lengths++ === 0) head.contentLength = value;
    } else if (key === 'content-type') {
      if (!typed) head.contentType = value;
      typed = true;
    } else if (key === 'transfer-encoding') head.encoded = true;
    else if (key === 'authorization') {
      if (head.authorization === '') head.authorization = value;
    } else if (forwarded && key === 'x-forwarded-for') {
      if (!proxied) head.forwarded = value;
      proxied = true;
    }
  });
  return head;
}

function framing(head: PostHead): string | null {
  if (head.lengths > 1) return 'more than one Content-Length header';
  if (head.encoded && head.lengths > 0) return 'both Transfer-Encoding and Content-Length';
  return null;
}

function badRequest(res: HttpResponse, state: Pending, why: string): void {
  writeJson(res, state, '400 Bad Request', errorBody(Code.InvalidRequest, `bad request: ${why}`), true);
}

function errorBody(code: number, message: string): string {
  return JSON.stringify({ jsonrpc: '2.0', id: null, error: { code, message } });
}

function respond(res: HttpResponse, state: Pending, dispatcher: Dispatcher, body: string, caller: Caller): void {
  let out: string | null | Promise<string | null>;
  try {
    out = dispatcher.handle(body, true, undefined, caller);
  } catch (e) {
    if (e instanceof RateLimitedError) {
      writeLimited(res, state, e);
      return;
    }
    if (e instanceof HttpError) {
      writeJson(res, state, e.status, errorBody(Code.Server, e.message));
      return;
    }
    throw e;
  }
  if (typeof out === 'string' || out === null) {
    writeJson(res, state, OK, out ?? '');
    return;
  }
  out.then(
    (text) => writeJson(res, state, OK, text ?? ''),
    (e: unknown) => {
      componentLogger('http').error({ err: e }, 'internal error while answering a request');
      writeJson(res, state, '500 Internal Server Error', errorBody(Code.Internal, 'internal error'));
    },
  );
}

/** Reads a POST body within the size limit, then answers it. */
function handlePost(res: HttpResponse, req: HttpRequest, dispatcher: Dispatcher, limits: HttpLimits): void {
  const state: Pending = { closed: false };
  res.onAborted(() => {
    state.closed = true;
  });
  // Read now: `req` is gone once this handler returns.
  const head = readHead(req, (limits.trustedProxies ?? 0) > 0);
  const problem = framing(head);
  if (problem !== null) {
    badRequest(res, state, problem);
    return;
  }
  const unauthorized = limits.authorize?.(head.authorization) ?? null;
  if (unauthorized !== null) {
    writeJson(res, state, '401 Unauthorized', errorBody(Code.InvalidRequest, `unauthorized: ${unauthorized}`), true);
    return;
  }
  // The address is read only if a method or a rate limit asks for it, while the response
  // is still open.
  const caller = new HttpCaller(res, head.forwarded, limits.trustedProxies ?? 0);
  const contentType = head.contentType;
  if (contentType !== '' && !contentType.toLowerCase().startsWith(JSON_TYPE)) {
    writeJson(res, state, '415 Unsupported Media Type', errorBody(Code.InvalidRequest, `invalid content type, only ${JSON_TYPE} is supported`));
    return;
  }
  const declared = Number(head.contentLength || '0');
  if (declared > limits.maxBodyBytes) {
    // Close after answering: otherwise uWS would keep reading (and discarding) the body.
    writeJson(
      res,
      state,
      '413 Payload Too Large',
      errorBody(Code.InvalidRequest, `request body of ${declared} bytes exceeds the limit of ${limits.maxBodyBytes} bytes`),
      true,
    );
    return;
  }
  let chunks: Buffer[] | null = null;
  let size = 0;
  let refused = false;
  res.onData((chunk, isLast) => {
    if (refused || state.closed) return;
    size += chunk.byteLength;
    if (size > limits.maxBodyBytes) {
      refused = true;
      writeJson(res, state, '413 Payload Too Large', errorBody(Code.InvalidRequest, `request body exceeds the limit of ${limits.maxBodyBytes} bytes`), true);
      return;
    }
    if (isLast && chunks === null) {
      // The common case: the whole body in one chunk, decoded (copied) before the
      // callback returns and uWS reuses the buffer.
      respond(res, state, dispatcher, Buffer.from(chunk).toString('utf8'), caller);
      return;
    }
    (chunks ??= []).push(Buffer.from(new Uint8Array(chunk).slice()));
    if (isLast) respond(res, state, dispatcher, Buffer.concat(chunks).toString('utf8'), caller);
  });
}

/** The guard's refusals by name (`Refusal::name` in crates/uws-guard/src/head.rs). */
const REFUSALS: Record<string, (req: HttpRequest) => { status: string; message: string; allow?: boolean }> = {
  method: (req) => ({
    status: '405 Method Not Allowed',
    message: `method ${req.getHeader('method')} not allowed: JSON-RPC is served by POST /`,
    allow: true,
  }),
  requestLine: () => ({ status: '400 Bad Request', message: 'bad request: malformed request line' }),
  missingHost: () => ({ status: '400 Bad Request', message: 'bad request: an HTTP/1.1 request needs a Host header' }),
  framing: () => ({ status: '400 Bad Request', message: 'bad request: both Transfer-Encoding and Content-Length' }),
};

/** The health report and whether the node is healthy (503 otherwise). */
export type HealthSource = () => { healthy: boolean; body: string };

export function mountHttp(app: TemplatedApp, dispatcher: Dispatcher, limits: HttpLimits, health: HealthSource): void {
  app.post('/', (res, req) => handlePost(res, req, dispatcher, limits));
  app.options('/*', (res) => {
    res.cork(() => {
      res
        .writeStatus('204 No Content')
        .writeHeader('Allow', ALLOW)
        .writeHeader('Access-Control-Allow-Origin', '*')
        .writeHeader('Access-Control-Allow-Methods', 'POST, GET, OPTIONS')
        .writeHeader('Access-Control-Allow-Headers', 'Content-Type')
        .writeHeader('Access-Control-Max-Age', '86400')
        .end();
    });
  });
  const healthCheck = (res: HttpResponse, head: boolean): void => {
    const state: Pending = { closed: false };
    const h = health();
    writeJson(res, state, h.healthy ? '200 OK' : '503 Service Unavailable', h.body, false, head);
  };
  app.get('/health', (res) => healthCheck(res, false));
  app.head('/health', (res) => healthCheck(res, true));
  app.head('/', (res) => healthCheck(res, true));
  // Requests the uWebSockets.js guard (crates/uws-guard) took off uWS's parser, which would
  // have dropped them without a word: answered here, and the connection closed.
  for (const [kind, refuse] of Object.entries(REFUSALS)) {
    app.get(`/.refused/${kind}`, (res, req) => {
      const { status, message, allow } = refuse(req);
      res.cork(() => {
        res.writeStatus(status).writeHeader('Content-Type', JSON_TYPE);
        if (allow) res.writeHeader('Allow', ALLOW);
        res.end(errorBody(Code.InvalidRequest, message), true);
      });
    });
  }
  const notFound = errorBody(Code.InvalidRequest, 'not found: JSON-RPC is served by POST /');
  app.any('/*', (res, req) => {
    const state: Pending = { closed: false };
    const method = req.getCaseSensitiveMethod();
    // Every other route is framed by uWS the same way: check it here too.
    const framing = framingProblem(req);
    if (framing !== null) return badRequest(res, state, framing);
    if (method === 'GET' || method === 'POST') return writeJson(res, state, '404 Not Found', notFound);
    if (method === 'HEAD') return writeJson(res, state, '404 Not Found', notFound, false, true);
    if (state.closed) return;
    state.closed = true;
    res.cork(() => {
      res
        .writeStatus('405 Method Not Allowed')
        .writeHeader('Allow', ALLOW)
        .writeHeader('Content-Type', JSON_TYPE)
        .end(errorBody(Code.InvalidRequest, `method ${method} not allowed: JSON-RPC is served by POST /`));
    });
  });
}
