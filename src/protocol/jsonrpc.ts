// JSON-RPC 2.0 envelopes: single requests, batches and notifications. Handlers return the
// result as JSON text, which is spliced into the response without re-serialising.

import { Code, HttpError, RpcError, toRpcError, type Logger, logInternal, type Profile } from '../errors/index.js';
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
  /** Whose error codes to answer with (`--profile`): the product's or geth's. */
  profile?: Profile;
}

const HTTP_FORBIDDEN = '403 Forbidden';

/**
 * How deeply a request may nest. No method takes parameters nested more than 8 levels
 * (eth_simulateV1: blockStateCalls[].calls[].accessList[].storageKeys[]); 32 leaves room.
 * Deeper input is refused before any handler sees it, because validators, error messages
 * and the addon's deserialiser all recurse, and a stack overflow there would surface as
 * an internal error. JSON.parse itself copes with any depth the body limit allows.
 *
 * geth parses with Go's encoding/json, which stops at 10,000 levels and answers -32700
 * ("exceeded max depth"); below that, a badly typed argument is -32602. We refuse from 33
 * levels on, as invalid params (-32602, naming the argument) or, for a member other than
 * params, as an invalid request (-32600): the body is valid JSON, so not a parse error.
 */
export const MAX_NESTING = 32;

/** Whether `v` nests objects/arrays more than `levels` deep. Recursion is bounded by
 *  `levels`, and it stops at the first container past the limit. */
function nestsDeeper(v: unknown, levels: number): boolean {
  if (typeof v !== 'object' || v === null) return false;
  if (levels === 0) return true;
  if (Array.isArray(v)) {
    for (const x of v) if (nestsDeeper(x, levels - 1)) return true;
    return false;
  }
  for (const key in v) if (nestsDeeper((v as Record<string, unknown>)[key], levels - 1)) return true;
  return false;
}

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
    for (const key in req) {
      // jsonrpc, id and method are scalars by now; only an unknown member can nest.
      if (key !== 'params' && nestsDeeper(req[key], MAX_NESTING)) {
        const name = JSON.stringify(key.length > 40 ? `${key.slice(0, 40)}...` : key);
        return errorResponse(rid, new RpcError(Code.InvalidRequest, `invalid request: member ${name} is nested more than ${MAX_NESTING} levels deep`));
      }
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
      const deep = params.findIndex((p) => nestsDeeper(p, MAX_NESTING));
      if (deep === -1) out = this.invoke(method, params, rid, stat, started);
      else {
        out = errorResponse(rid, new RpcError(Code.InvalidParams, `invalid argument ${deep}: nested more than ${MAX_NESTING} levels deep`));
        stat?.record(started, true);
      }
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
            return errorResponse(id, toRpcError(e, this.log, this.limits.profile));
          },
        );
      }
      stat?.record(started, false);
      return resultResponse(id, result);
    } catch (e) {
      stat?.record(started, true);
      return errorResponse(id, toRpcError(e, this.log, this.limits.profile));
    }
  }
}

function joinBatch(parts: (string | null)[]): string | null {
  const kept = parts.filter((p): p is string => p !== null);
  return kept.length === 0 ? null : `[${kept.join(',')}]`;
}
