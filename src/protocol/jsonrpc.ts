// JSON-RPC 2.0 envelopes: single requests, batches and notifications. Handlers return the
// result as JSON text, which is spliced into the response without re-serialising.

import { Code, HttpError, RpcError, toRpcError, type Logger, logInternal } from '../errors/index.js';
import type { MethodStat, RpcStats } from '../metrics/rpc.js';

export type Id = number | string | null;

export interface Request {
  method: string;
  params: unknown[];
}

export type Handler = (params: unknown[]) => string | Promise<string>;

export interface Method {
  handler: Handler;
  /** Positional parameters accepted; more is an error, as in geth. */
  maxParams: number;
  /** Refused on public endpoints with HTTP 403 (eth_getBlockReceipts in --public mode). */
  forbidden?: boolean;
}

export interface DispatchLimits {
  maxBatch: number;
}

const HTTP_FORBIDDEN = '403 Forbidden';

function errorResponse(id: Id, err: RpcError): string {
  return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"error":${JSON.stringify(err.toJSON())}}`;
}

function resultResponse(id: Id, result: string): string {
  return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${result}}`;
}

function isPromise<T>(v: T | Promise<T>): v is Promise<T> {
  return typeof (v as { then?: unknown })?.then === 'function';
}

export class Dispatcher {
  constructor(
    private readonly methods: ReadonlyMap<string, Method>,
    private readonly limits: DispatchLimits,
    private readonly log: Logger = logInternal,
    /** Per-method counts and latencies for GET /metrics (one cached entry per method). */
    private readonly stats?: RpcStats,
  ) {}

  /**
   * Answers one HTTP body or WebSocket message. Returns the response text, or null when
   * nothing is to be sent (only notifications). Synchronous when every handler was.
   * `local` holds methods that exist only on this connection (eth_subscribe over WebSocket).
   * Throws HttpError when the transport must refuse the request with an HTTP status.
   */
  handle(body: string, overHttp: boolean, local?: ReadonlyMap<string, Method>): string | null | Promise<string | null> {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch (e) {
      return errorResponse(null, new RpcError(Code.ParseError, `parse error: ${(e as Error).message}`));
    }
    if (!Array.isArray(parsed)) {
      if (overHttp && this.isForbidden(parsed)) throw new HttpError(HTTP_FORBIDDEN, this.forbiddenMessage(parsed));
      return this.one(parsed, local);
    }
    if (parsed.length === 0) return errorResponse(null, new RpcError(Code.InvalidRequest, 'empty batch'));
    if (parsed.length > this.limits.maxBatch) {
      return errorResponse(
        null,
        new RpcError(Code.InvalidRequest, `batch too large: ${parsed.length} requests, limit is ${this.limits.maxBatch}`),
      );
    }
    for (const item of parsed) {
      if (overHttp && this.isForbidden(item)) throw new HttpError(HTTP_FORBIDDEN, this.forbiddenMessage(item));
    }
    const parts = parsed.map((item) => this.one(item, local));
    if (!parts.some(isPromise)) return joinBatch(parts as (string | null)[]);
    return Promise.all(parts).then(joinBatch);
  }

  private isForbidden(item: unknown): boolean {
    if (typeof item !== 'object' || item === null) return false;
    const method = (item as { method?: unknown }).method;
    return typeof method === 'string' && this.methods.get(method)?.forbidden === true;
  }

  private forbiddenMessage(item: unknown): string {
    const method = (item as { method: string }).method;
    return `${method} is not available on this public endpoint; use a dedicated node`;
  }

  /** One request object: its response, or null for a notification. */
  private one(item: unknown, local?: ReadonlyMap<string, Method>): string | null | Promise<string | null> {
    if (typeof item !== 'object' || item === null || Array.isArray(item)) {
      return errorResponse(null, new RpcError(Code.InvalidRequest, 'invalid request: a request must be a JSON object'));
    }
    const req = item as Record<string, unknown>;
    const hasId = 'id' in req;
    const id = req.id;
    if (hasId && id !== null && typeof id !== 'number' && typeof id !== 'string') {
      return errorResponse(null, new RpcError(Code.InvalidRequest, 'invalid request: id must be a number, a string or null'));
    }
    const rid = (hasId ? id : null) as Id;
    if (req.jsonrpc !== '2.0') {
      return errorResponse(rid, new RpcError(Code.InvalidRequest, 'invalid request: "jsonrpc" must be exactly "2.0"'));
    }
    if (typeof req.method !== 'string' || req.method.length === 0) {
      return errorResponse(rid, new RpcError(Code.InvalidRequest, 'invalid request: "method" must be a non-empty string'));
    }
    if (req.params !== undefined && req.params !== null && !Array.isArray(req.params)) {
      return errorResponse(rid, new RpcError(Code.InvalidRequest, 'invalid request: "params" must be an array'));
    }
    const params = (req.params ?? []) as unknown[];
    const method = local?.get(req.method) ?? this.methods.get(req.method);
    const stat = this.stats?.of(req.method);
    const started = stat === undefined ? 0 : performance.now();
    let out: string | null | Promise<string | null>;
    if (method === undefined) {
      out = errorResponse(
        rid,
        new RpcError(Code.MethodNotFound, `the method ${req.method} does not exist/is not available`),
      );
      stat?.record(started, true);
    } else if (method.forbidden === true) {
      // Over WebSocket there is no HTTP status to use; refuse in-band.
      out = errorResponse(rid, new RpcError(Code.Server, this.forbiddenMessage(req)));
      stat?.record(started, true);
    } else if (params.length > method.maxParams) {
      out = errorResponse(
        rid,
        new RpcError(Code.InvalidParams, `too many arguments, want at most ${method.maxParams}`),
      );
      stat?.record(started, true);
    } else {
      out = this.invoke(method, params, rid, stat, started);
    }
    if (!hasId) {
      // A notification: run it, answer nothing.
      if (isPromise(out)) return out.then(() => null);
      return null;
    }
    return out;
  }

  private invoke(method: Method, params: unknown[], id: Id, stat: MethodStat | undefined, started: number): string | Promise<string> {
    try {
      const result = method.handler(params);
      if (isPromise(result)) {
        return result.then(
          (r) => {
            stat?.record(started, false);
            return resultResponse(id, r);
          },
          (e: unknown) => {
            stat?.record(started, true);
            return errorResponse(id, toRpcError(e, this.log));
          },
        );
      }
      stat?.record(started, false);
      return resultResponse(id, result);
    } catch (e) {
      stat?.record(started, true);
      return errorResponse(id, toRpcError(e, this.log));
    }
  }
}

function joinBatch(parts: (string | null)[]): string | null {
  const kept = parts.filter((p): p is string => p !== null);
  return kept.length === 0 ? null : `[${kept.join(',')}]`;
}
