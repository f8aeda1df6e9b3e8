// HTTP transport on uWebSockets.js: POST / carries JSON-RPC, GET /health is for load
// balancers. uWS rules kept here: onAborted is registered before any async work, body
// chunks are copied before the callback returns, `req` is never touched after the handler
// returns, and every multi-part write is corked.

import type { HttpRequest, HttpResponse, TemplatedApp } from 'uWebSockets.js';
import { HttpError } from '../errors/index.js';
import type { Dispatcher } from '../protocol/jsonrpc.js';

export interface HttpLimits {
  maxBodyBytes: number;
}

interface Pending {
  closed: boolean;
}

const JSON_TYPE = 'application/json';

function writeJson(res: HttpResponse, state: Pending, status: string, body: string, closeConnection = false): void {
  if (state.closed) return;
  state.closed = true; // answered: the response object must not be touched again
  res.cork(() => {
    res
      .writeStatus(status)
      .writeHeader('Content-Type', JSON_TYPE)
      .writeHeader('Access-Control-Allow-Origin', '*')
      .end(body, closeConnection);
  });
}

function errorBody(code: number, message: string): string {
  return JSON.stringify({ jsonrpc: '2.0', id: null, error: { code, message } });
}

function respond(res: HttpResponse, state: Pending, dispatcher: Dispatcher, body: string): void {
  let out: string | null | Promise<string | null>;
  try {
    out = dispatcher.handle(body, true);
  } catch (e) {
    if (e instanceof HttpError) {
      writeJson(res, state, e.status, errorBody(-32000, e.message));
      return;
    }
    throw e;
  }
  if (typeof out === 'string' || out === null) {
    writeJson(res, state, '200 OK', out ?? '');
    return;
  }
  out.then(
    (text) => writeJson(res, state, '200 OK', text ?? ''),
    (e: unknown) => {
      console.error('[preconf-node] internal error while answering a request', e);
      writeJson(res, state, '500 Internal Server Error', errorBody(-32603, 'internal error'));
    },
  );
}

/** Reads a POST body within the size limit, then answers it. */
function handlePost(res: HttpResponse, req: HttpRequest, dispatcher: Dispatcher, limits: HttpLimits): void {
  const state: Pending = { closed: false };
  res.onAborted(() => {
    state.closed = true;
  });
  const contentType = req.getHeader('content-type');
  if (contentType !== '' && !contentType.toLowerCase().startsWith(JSON_TYPE)) {
    writeJson(res, state, '415 Unsupported Media Type', errorBody(-32600, `invalid content type, only ${JSON_TYPE} is supported`));
    return;
  }
  const declared = Number(req.getHeader('content-length') || '0');
  if (declared > limits.maxBodyBytes) {
    // Close after answering: otherwise uWS would keep reading (and discarding) the body.
    writeJson(
      res,
      state,
      '413 Payload Too Large',
      errorBody(-32600, `request body of ${declared} bytes exceeds the limit of ${limits.maxBodyBytes} bytes`),
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
      writeJson(
        res,
        state,
        '413 Payload Too Large',
        errorBody(-32600, `request body exceeds the limit of ${limits.maxBodyBytes} bytes`),
        true,
      );
      return;
    }
    if (isLast && chunks === null) {
      // The common case: the whole body in one chunk, decoded (copied) before the
      // callback returns and uWS reuses the buffer.
      respond(res, state, dispatcher, Buffer.from(chunk).toString('utf8'));
      return;
    }
    (chunks ??= []).push(Buffer.from(new Uint8Array(chunk).slice()));
    if (isLast) respond(res, state, dispatcher, Buffer.concat(chunks).toString('utf8'));
  });
}

/** The health report and whether the node is healthy (503 otherwise). */
export interface HealthSource {
  (): { healthy: boolean; body: string };
}

export function mountHttp(app: TemplatedApp, dispatcher: Dispatcher, limits: HttpLimits, health: HealthSource): void {
  app.post('/', (res, req) => handlePost(res, req, dispatcher, limits));
  app.options('/*', (res) => {
    res.cork(() => {
      res
        .writeStatus('204 No Content')
        .writeHeader('Access-Control-Allow-Origin', '*')
        .writeHeader('Access-Control-Allow-Methods', 'POST, GET, OPTIONS')
        .writeHeader('Access-Control-Allow-Headers', 'Content-Type')
        .writeHeader('Access-Control-Max-Age', '86400')
        .end();
    });
  });
  app.get('/health', (res) => {
    const state: Pending = { closed: false };
    const h = health();
    writeJson(res, state, h.healthy ? '200 OK' : '503 Service Unavailable', h.body);
  });
  app.any('/*', (res) => {
    const state: Pending = { closed: false };
    writeJson(res, state, '404 Not Found', errorBody(-32600, 'not found: JSON-RPC is served by POST /'));
  });
}
