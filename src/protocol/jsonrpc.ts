// JSON-RPC 2.0 envelopes: single requests, batches and notifications. Handlers return the
// result as JSON text, which is spliced into the response without re-serialising.

import { Code, HttpError, RateLimitedError, RpcError, toRpcError, type Logger, logInternal, type Profile } from '../errors/index.js';
import type { MethodStat, RpcStats } from '../metrics/rpc.js';
import type { RateLimiter } from '../limits/rate.js';
import { BatchGate, type BatchBudget, type HeavySlots } from './batch.js';
import { idNeedsRawText, rawIds } from './ids.js';

export type Id = number | string | null;

export interface Request {
  method: string;
  params: unknown[];
}

/** What a handler knows of the request beyond its parameters. */
export interface CallContext {
  /** The client's key for the addon's work pools (its turn, its share); absent: unattributed. */
  client?: number;
}

/** `ctx` is optional so that a handler can call another (a wrapper, a forwarder) without one. */
export type Handler = (params: unknown[], ctx?: CallContext) => string | Promise<string>;

export interface Method {
  handler: Handler;
  /** Positional parameters accepted; more is an error, as in geth. */
  maxParams: number;
  /** Refused on public endpoints with HTTP 403 (eth_getBlockReceipts in --public mode). */
  forbidden?: boolean;
  /** Runs on an addon work pool in the client's turn. `heavy`: also a few at a time
   *  within a batch's budget, and counted by --rate-limit-heavy. */
  cost?: 'pooled' | 'heavy';
}

/** Who sent a request. The transport works out the client's key (limits/rate.ts
 *  `clientKey` of its address) only when a work pool or a rate limit needs it. */
export interface Caller {
  key(): number;
}

export interface DispatchLimits {
  maxBatch: number;
  /** Whose error codes to answer with (`--profile`): the product's or geth's. */
  profile?: Profile;
  /** A batch's heavy requests: how many at once, and the time they may take in all. */
  batch?: BatchBudget;
  /** Bytes of a batch's answer after which its remaining requests answer -32003 (geth's 25 MB). */
  batchMaxResponseBytes?: number;
  /** --rate-limit / --rate-limit-heavy (off unless set). */
  rate?: RateLimiter;
  /** Told of each refusal by a rate limit (metrics). */
  onRateLimited?(reason: 'rps' | 'heavy'): void;
  /** Told of each request that took `slowMs` or longer (`--log-slow-ms`): its method, its
   *  duration and the size of its answer. Never its parameters. */
  slow?: { ms: number; report(method: string, durationMs: number, responseBytes: number, failed: boolean): void };
}

export const DEFAULT_BATCH_BUDGET: BatchBudget = { concurrency: 2, budgetMs: 10_000 };
export const DEFAULT_BATCH_MAX_RESPONSE_BYTES = 25_000_000;
const NO_CLIENT: CallContext = {};

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

/** `id` is the id's JSON text (see idText). */
function errorResponse(id: string, err: RpcError): string {
  return `{"jsonrpc":"2.0","id":${id},"error":${JSON.stringify(err.toJSON())}}`;
}

function resultResponse(id: string, result: string): string {
  return `{"jsonrpc":"2.0","id":${id},"result":${result}}`;
}

const NULL_ID = 'null';

/** The body, and its raw ids once scanned (only when an id needs them). */
interface RawIds {
  body: string;
  scanned?: (string | undefined)[];
}

/** An id's JSON text: as parsed, or the request's own text where parsing changed it. */
function idText(id: Id, index: number, raw: RawIds): string {
  // A number JSON.parse gave back writes as its JSON text (String is cheaper than stringify).
  if (typeof id === 'number' && !idNeedsRawText(id)) return String(id);
  if (!idNeedsRawText(id)) return JSON.stringify(id);
  return (raw.scanned ??= rawIds(raw.body))[index] ?? JSON.stringify(id);
}

function isPromise<T>(v: T | Promise<T>): v is Promise<T> {
  return typeof v === 'object' && v !== null && typeof (v as { then?: unknown }).then === 'function';
}

export class Dispatcher {
  /** Batches seen, to give each its own key in the work pools. */
  private batches = 0;

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
  handle(body: string, overHttp: boolean, local?: ReadonlyMap<string, Method>, caller?: Caller): string | null | Promise<string | null> {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch (e) {
      return errorResponse(NULL_ID, new RpcError(Code.ParseError, `parse error: ${(e as Error).message}`));
    }
    const raw: RawIds = { body };
    if (!Array.isArray(parsed)) {
      // The method is looked up once and handed on: the forbidden check, the cost class and
      // the call all use the same entry.
      const method = this.lookup(parsed, local);
      if (overHttp && this.forbidden(parsed, method, local)) throw new HttpError(HTTP_FORBIDDEN, this.forbiddenMessage(parsed));
      const cost = method?.cost;
      // The common case, a cheap method without rate limits, needs no client.
      if (caller === undefined || (cost === undefined && this.limits.rate?.enabled !== true)) return this.one(parsed, method, NO_CLIENT, 0, raw);
      const ctx = this.context(caller, parsed, [parsed], raw, overHttp, cost !== undefined);
      if (typeof ctx === 'string') return ctx;
      if (cost === 'heavy' && ctx.client !== undefined && this.limits.rate !== undefined) {
        const rate = this.limits.rate;
        const key = ctx.client;
        if (!rate.acquireHeavy(key)) return this.refuseHeavy(parsed, raw, overHttp);
        const out = this.one(parsed, method, ctx, 0, raw);
        if (!isPromise(out)) {
          rate.releaseHeavy(key);
          return out;
        }
        return out.finally(() => rate.releaseHeavy(key));
      }
      return this.one(parsed, method, ctx, 0, raw);
    }
    if (parsed.length === 0) return errorResponse(NULL_ID, new RpcError(Code.InvalidRequest, 'empty batch'));
    if (parsed.length > this.limits.maxBatch) {
      return errorResponse(NULL_ID, new RpcError(Code.InvalidRequest, `batch too large: ${parsed.length} requests, limit is ${this.limits.maxBatch}`));
    }
    const methods = new Array<Method | undefined>(parsed.length);
    let pooled = false;
    for (let i = 0; i < parsed.length; i++) {
      const item: unknown = parsed[i];
      const method = this.lookup(item, local);
      if (overHttp && this.forbidden(item, method, local)) throw new HttpError(HTTP_FORBIDDEN, this.forbiddenMessage(item));
      if (method?.cost !== undefined) pooled = true;
      methods[i] = method;
    }
    const client = this.context(caller, parsed, parsed, raw, overHttp, pooled);
    if (typeof client === 'string') return client;
    // In the work pools a batch takes turns as a client of its own, so that the address's
    // other requests are not queued behind it; its heavy requests run a few at a time.
    const ctx: CallContext = client.client === undefined ? NO_CLIENT : { client: (client.client ^ Math.imul(++this.batches, 0x9e3779b1)) >>> 0 || 1 };
    let gate: BatchGate | undefined;
    const gateFor = (): BatchGate => (gate ??= new BatchGate(this.limits.batch ?? DEFAULT_BATCH_BUDGET, this.heavySlots(client)));
    const parts = new Array<string | null | Promise<string | null>>(parsed.length);
    let async = false;
    for (let i = 0; i < parsed.length; i++) {
      const method = methods[i];
      const part = this.one(parsed[i], method, ctx, i, raw, method?.cost === 'heavy' ? gateFor : undefined);
      if (!async && isPromise(part)) async = true;
      parts[i] = part;
    }
    const ids = (i: number): string => idText(idOf(parsed[i]), i, raw);
    const max = this.limits.batchMaxResponseBytes ?? DEFAULT_BATCH_MAX_RESPONSE_BYTES;
    if (!async) return joinBatch(parts as (string | null)[], ids, max);
    return Promise.all(parts).then((done) => joinBatch(done, ids, max));
  }

  /** The client's context, resolving its address when a pool or a rate limit needs it;
   *  or the whole answer when the client is over its request rate. */
  private context(
    caller: Caller | undefined,
    parsed: unknown,
    items: unknown[],
    raw: RawIds,
    overHttp: boolean,
    /** Some request runs on a work pool (its cost class is set). */
    pooled: boolean,
  ): CallContext | string {
    if (caller === undefined) return NO_CLIENT;
    const rate = this.limits.rate;
    const limited = rate !== undefined && rate.enabled;
    if (!limited && !pooled) return NO_CLIENT;
    const client = caller.key();
    if (limited && rate.limits.rps > 0) {
      const wait = rate.take(client, items.length);
      if (wait > 0) {
        this.limits.onRateLimited?.('rps');
        const err = new RpcError(Code.LimitExceeded, `rate limited: more than ${rate.limits.rps} requests per second from this client; retry in ${wait} s`, {
          retryAfter: wait,
        });
        const text = Array.isArray(parsed)
          ? `[${items.map((item, i) => errorResponse(idText(idOf(item), i, raw), err)).join(',')}]`
          : errorResponse(idText(idOf(parsed), 0, raw), err);
        if (overHttp) throw new RateLimitedError(wait, text);
        return text;
      }
    }
    return { client };
  }

  /** The entry of the method a request names (the connection's own first), if any. */
  private lookup(item: unknown, local: ReadonlyMap<string, Method> | undefined): Method | undefined {
    if (typeof item !== 'object' || item === null) return undefined;
    const name = (item as { method?: unknown }).method;
    if (typeof name !== 'string') return undefined;
    return local?.get(name) ?? this.methods.get(name);
  }

  /** Refused over HTTP on a public endpoint: judged by the node's own table. */
  private forbidden(item: unknown, method: Method | undefined, local: ReadonlyMap<string, Method> | undefined): boolean {
    return local === undefined ? method?.forbidden === true : this.isForbidden(item);
  }

  private heavyRefusal(): RpcError {
    const n = this.limits.rate?.limits.heavy ?? 0;
    return new RpcError(
      Code.LimitExceeded,
      `rate limited: ${n} heavy requests (eth_call, eth_estimateGas, eth_createAccessList, eth_simulateV1, debug_trace*, eth_getLogs) already in flight from this client; retry in 1 s`,
      { retryAfter: 1 },
    );
  }

  private refuseHeavy(parsed: unknown, raw: RawIds, overHttp: boolean): string {
    this.limits.onRateLimited?.('heavy');
    const text = errorResponse(idText(idOf(parsed), 0, raw), this.heavyRefusal());
    if (overHttp) throw new RateLimitedError(1, text);
    return text;
  }

  /** The batch's way to the client's allowance of heavy requests, when one is set. */
  private heavySlots(ctx: CallContext): HeavySlots | undefined {
    const rate = this.limits.rate;
    const key = ctx.client;
    if (rate === undefined || rate.limits.heavy <= 0 || key === undefined) return undefined;
    return {
      acquire: () => rate.acquireHeavy(key),
      release: () => rate.releaseHeavy(key),
      refusal: () => {
        this.limits.onRateLimited?.('heavy');
        return this.heavyRefusal();
      },
    };
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

  /** One request object (item `index` of the body): its response, or null for a
   *  notification. `method`: the entry its "method" names (looked up by the caller).
   *  `gate`: a heavy request of a batch, run in its turn. */
  private one(
    item: unknown,
    method: Method | undefined,
    ctx: CallContext,
    index: number,
    raw: RawIds,
    gate?: () => BatchGate,
  ): string | null | Promise<string | null> {
    if (typeof item !== 'object' || item === null || Array.isArray(item)) {
      return errorResponse(NULL_ID, new RpcError(Code.InvalidRequest, 'invalid request: a request must be a JSON object'));
    }
    const req = item as Record<string, unknown>;
    const hasId = 'id' in req;
    const id = req.id;
    if (hasId && id !== null && typeof id !== 'number' && typeof id !== 'string') {
      return errorResponse(NULL_ID, new RpcError(Code.InvalidRequest, 'invalid request: id must be a number, a string or null'));
    }
    const rid = hasId ? idText(id as Id, index, raw) : NULL_ID;
    if (req.jsonrpc !== '2.0') {
      return errorResponse(rid, new RpcError(Code.InvalidRequest, 'invalid request: "jsonrpc" must be exactly "2.0"'));
    }
    const name = req.method;
    if (typeof name !== 'string' || name.length === 0) {
      return errorResponse(rid, new RpcError(Code.InvalidRequest, 'invalid request: "method" must be a non-empty string'));
    }
    if (req.params !== undefined && req.params !== null && !Array.isArray(req.params)) {
      return errorResponse(rid, new RpcError(Code.InvalidRequest, 'invalid request: "params" must be an array'));
    }
    for (const key in req) {
      // jsonrpc, id and method are scalars by now; only an unknown member can nest.
      if (key !== 'params' && nestsDeeper(req[key], MAX_NESTING)) {
        const member = JSON.stringify(key.length > 40 ? `${key.slice(0, 40)}...` : key);
        return errorResponse(rid, new RpcError(Code.InvalidRequest, `invalid request: member ${member} is nested more than ${MAX_NESTING} levels deep`));
      }
    }
    const params = (req.params ?? []) as unknown[];
    const stat = this.stats?.of(name);
    // One clock reading here and one at the answer serve both the latency histogram and the
    // slow-request log.
    const started = stat === undefined && this.limits.slow === undefined ? 0 : performance.now();
    let out: string | null | Promise<string | null>;
    if (method === undefined) {
      out = this.finish(name, stat, started, errorResponse(rid, new RpcError(Code.MethodNotFound, `the method ${name} does not exist/is not available`)), true);
    } else if (method.forbidden === true) {
      // Over WebSocket there is no HTTP status to use; refuse in-band.
      out = this.finish(name, stat, started, errorResponse(rid, new RpcError(Code.Server, this.forbiddenMessage(req))), true);
    } else if (params.length > method.maxParams) {
      out = this.finish(
        name,
        stat,
        started,
        errorResponse(rid, new RpcError(Code.InvalidParams, `too many arguments, want at most ${method.maxParams}`)),
        true,
      );
    } else {
      const deep = firstNestedTooDeep(params);
      if (deep === -1) {
        out =
          gate === undefined
            ? this.invoke(name, method, params, rid, ctx, stat, started)
            : gate().run(
                () => this.invoke(name, method, params, rid, ctx, stat, started),
                (why) => this.finish(name, stat, started, errorResponse(rid, why), true),
              );
      } else {
        out = this.finish(
          name,
          stat,
          started,
          errorResponse(rid, new RpcError(Code.InvalidParams, `invalid argument ${deep}: nested more than ${MAX_NESTING} levels deep`)),
          true,
        );
      }
    }
    if (!hasId) {
      // A notification: run it, answer nothing.
      if (isPromise(out)) return out.then(() => null);
      return null;
    }
    return out;
  }

  private invoke(
    name: string,
    method: Method,
    params: unknown[],
    id: string,
    ctx: CallContext,
    stat: MethodStat | undefined,
    started: number,
  ): string | Promise<string> {
    try {
      const result = method.handler(params, ctx);
      if (typeof result === 'string') return this.finish(name, stat, started, resultResponse(id, result), false);
      return result.then(
        (r) => this.finish(name, stat, started, resultResponse(id, r), false),
        (e: unknown) => this.finish(name, stat, started, errorResponse(id, toRpcError(e, this.log, this.limits.profile)), true),
      );
    } catch (e) {
      return this.finish(name, stat, started, errorResponse(id, toRpcError(e, this.log, this.limits.profile)), true);
    }
  }

  /** Records an answered request (metrics, the slow-request log) and returns its text. */
  private finish(name: string, stat: MethodStat | undefined, started: number, text: string, failed: boolean): string {
    const slow = this.limits.slow;
    if (stat === undefined && slow === undefined) return text;
    const now = performance.now();
    stat?.record(now - started, failed);
    if (slow !== undefined && now - started >= slow.ms) slow.report(name, now - started, text.length, failed);
    return text;
  }
}

/** The index of the first parameter nested more than MAX_NESTING deep, or -1. */
function firstNestedTooDeep(params: unknown[]): number {
  for (let i = 0; i < params.length; i++) if (nestsDeeper(params[i], MAX_NESTING)) return i;
  return -1;
}

function idOf(item: unknown): Id {
  if (typeof item !== 'object' || item === null) return null;
  const id = (item as { id?: unknown }).id;
  return typeof id === 'number' || typeof id === 'string' ? id : null;
}

/** The batch's answer; past `maxBytes`, the remaining answers become -32003 (as in geth). */
function joinBatch(parts: (string | null)[], ids: (index: number) => string, maxBytes: number): string | null {
  const kept: string[] = [];
  let bytes = 0;
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i];
    if (part === null || part === undefined) continue;
    if (bytes > maxBytes) {
      kept.push(errorResponse(ids(i), new RpcError(Code.ResponseTooLarge, `response too large: the batch's answer passed ${maxBytes} bytes`)));
      continue;
    }
    bytes += part.length;
    kept.push(part);
  }
  return kept.length === 0 ? null : `[${kept.join(',')}]`;
}
