// WebSocket transport on the same uWebSockets.js app and port: every JSON-RPC method, plus
// eth_subscribe / eth_unsubscribe. Each connection has a bounded send buffer: one that falls
// too far behind is closed with 1008 and a reason, so nobody else waits for it.
//
// uWS notes (measured): above its own maxBackpressure uWS drops messages silently, and even
// the close frame. So uWS's limit is set far above ours and we police the buffered amount.
//
// Subscription messages are queued per connection and written once per event-loop turn,
// corked (one syscall per socket however many events the turn delivered): at 10 ms
// pre-confirmations a subscriber gets 100+ messages a second.

import type { TemplatedApp, WebSocket } from 'uWebSockets.js';
import uWS from './uws.js';
import { Code, RpcError } from '../errors/index.js';
import type { Caller, Dispatcher, Method } from '../protocol/jsonrpc.js';
import { SUBSCRIPTION_KINDS, type Subscriber, type SubscriptionHub, type SubscriptionKind } from '../subscriptions/hub.js';
import { topicFilter } from '../validation/filter.js';
import { argPath, bool, fail, isObject } from '../validation/primitives.js';
import { forwardedClient } from './client.js';
import { clientKey } from '../limits/rate.js';
import { guardWebsocket } from '../native.js';
import { componentLogger } from '../log/index.js';

export interface WsLimits {
  maxConnections: number;
  maxSubscriptions: number;
  /** Unsent bytes after which a connection is closed as too slow. */
  maxBackpressureBytes: number;
  maxPayloadBytes: number;
  /** Seat the uWebSockets.js guard on the WebSocket context (off: --no-uws-guard). */
  guard?: boolean;
  /** As HttpLimits.trustedProxies: whose X-Forwarded-For to believe at the upgrade. */
  trustedProxies?: number;
}

/** What the transport reports as it happens (metrics). */
export interface WsEvents {
  slowSubscriberDropped(): void;
}

export const CLOSE_TOO_SLOW = 1008;
const UWS_HARD_LIMIT = 1024 * 1024 * 1024;

interface ConnState {
  session?: Session;
  /** The client's address, read at the upgrade (the request is gone afterwards). */
  address?: string;
}

const decoder = new TextDecoder();

/** Sessions with queued messages, written together at the end of this event-loop turn. */
const unflushed = new Set<Session>();
let flushScheduled = false;

function flushAll(): void {
  flushScheduled = false;
  const sessions = [...unflushed];
  unflushed.clear();
  for (const s of sessions) s.flush();
}

/** One WebSocket connection: its subscriptions and its send policy. */
class Session implements Subscriber {
  closed = false;
  readonly subscriptions = new Set<string>();
  readonly methods: Map<string, Method>;
  readonly caller: Caller;
  private queued: string[] = [];

  constructor(
    private readonly ws: WebSocket<ConnState>,
    private readonly hub: SubscriptionHub,
    private readonly limits: WsLimits,
    private readonly events?: WsEvents,
    address = '',
  ) {
    let key: number | undefined;
    this.caller = { key: () => (key ??= clientKey(address)) };
    this.methods = new Map<string, Method>([
      ['eth_subscribe', { maxParams: 2, handler: (p) => this.subscribe(p) }],
      ['eth_unsubscribe', { maxParams: 1, handler: (p) => this.unsubscribe(p) }],
    ]);
  }

  /** Queues a subscription message; it goes out corked with the others of this turn. */
  send(text: string): void {
    if (this.closed) return;
    this.queued.push(text);
    if (this.queued.length > 1) return;
    unflushed.add(this);
    if (!flushScheduled) {
      flushScheduled = true;
      setImmediate(flushAll);
    }
  }

  /** A response: at once, after any queued subscription messages (order is kept). */
  reply(text: string): void {
    if (this.closed) return;
    if (this.queued.length > 0) {
      this.queued.push(text);
      return this.flush();
    }
    this.ws.cork(() => this.ws.send(text, false));
    this.police();
  }

  flush(): void {
    const texts = this.queued;
    if (this.closed || texts.length === 0) return;
    this.queued = [];
    unflushed.delete(this);
    this.ws.cork(() => {
      for (const t of texts) this.ws.send(t, false);
    });
    this.police();
  }

  /** The slow-consumer policy: too much unsent and the connection is closed. */
  private police(): void {
    const buffered = this.ws.getBufferedAmount();
    if (buffered > this.limits.maxBackpressureBytes) {
      this.events?.slowSubscriberDropped();
      this.close(CLOSE_TOO_SLOW, `subscriber too slow: ${buffered} bytes unsent (limit ${this.limits.maxBackpressureBytes})`);
    }
  }

  close(code: number, reason: string): void {
    if (this.closed) return;
    this.closed = true;
    this.queued = [];
    unflushed.delete(this);
    this.ws.end(code, reason);
  }

  private subscribe(p: unknown[]): string {
    const kind = p[0];
    if (typeof kind !== 'string' || !(SUBSCRIPTION_KINDS as readonly string[]).includes(kind)) {
      throw fail(argPath(0), `unsupported subscription type ${JSON.stringify(kind)} (one of ${SUBSCRIPTION_KINDS.join(', ')})`);
    }
    if (this.subscriptions.size >= this.limits.maxSubscriptions) {
      throw new RpcError(Code.LimitExceeded, `too many subscriptions on this connection (limit ${this.limits.maxSubscriptions})`);
    }
    let full = false;
    let filter;
    const k = kind as SubscriptionKind;
    if (k === 'logs' || k === 'pendingLogs') {
      if (p[1] !== undefined && p[1] !== null) {
        if (!isObject(p[1])) throw fail(argPath(1), 'filter must be an object with address and topics');
        filter = topicFilter(p[1], argPath(1));
      }
    } else if (k === 'newFlashblockTransactions' || k === 'newPendingTransactions') {
      if (p[1] !== undefined && p[1] !== null) full = bool(p[1], argPath(1), 'full transactions flag');
      if (k === 'newPendingTransactions' && full) {
        throw fail(argPath(1), 'newPendingTransactions streams hashes only');
      }
    } else if (p.length > 1) {
      throw fail(argPath(1), `${k} takes no parameters`);
    }
    const id = this.hub.subscribe(this, k, full, filter);
    this.subscriptions.add(id);
    return JSON.stringify(id);
  }

  private unsubscribe(p: unknown[]): string {
    if (typeof p[0] !== 'string') throw fail(argPath(0), 'subscription id must be a string');
    const ok = this.subscriptions.delete(p[0]) && this.hub.unsubscribe(this, p[0]);
    return ok ? 'true' : 'false';
  }

  dispose(): void {
    this.closed = true;
    this.queued = [];
    unflushed.delete(this);
    this.hub.drop(this, this.subscriptions);
    this.subscriptions.clear();
  }
}

export interface WebSocketServer {
  connections(): number;
  /** Closes every connection with 1001 (going away), for a clean shutdown. */
  closeAll(reason: string): void;
}

export function mountWebSocket(app: TemplatedApp, dispatcher: Dispatcher, hub: SubscriptionHub, limits: WsLimits, events?: WsEvents): WebSocketServer {
  let open = 0;
  const sessions = new Set<Session>();
  // The uWebSockets.js guard (crates/uws-guard) on this app's WebSocket context, which only
  // an upgrade handler is given: seated at the first upgrade, before its frames are read.
  let guarded = limits.guard !== true;
  const guard = (context: unknown): void => {
    guarded = true;
    try {
      guardWebsocket(context, limits.maxPayloadBytes);
    } catch (e) {
      componentLogger('rpc').warn({ err: (e as Error).message }, 'WebSocket protocol errors will drop the connection without a close frame');
    }
  };
  app.ws<ConnState>('/*', {
    compression: uWS.DISABLED,
    maxPayloadLength: limits.maxPayloadBytes,
    maxBackpressure: UWS_HARD_LIMIT,
    closeOnBackpressureLimit: false,
    idleTimeout: 120,
    sendPingsAutomatically: true,
    upgrade: (res, req, context) => {
      if (!guarded) guard(context);
      if (open >= limits.maxConnections) {
        res.writeStatus('503 Service Unavailable').end(`too many WebSocket connections (limit ${limits.maxConnections})`);
        return;
      }
      const forwarded = limits.trustedProxies ? req.getHeader('x-forwarded-for') : '';
      const address = forwardedClient(forwarded, limits.trustedProxies ?? 0) ?? decoder.decode(res.getRemoteAddressAsText());
      res.upgrade<ConnState>(
        { address },
        req.getHeader('sec-websocket-key'),
        req.getHeader('sec-websocket-protocol'),
        req.getHeader('sec-websocket-extensions'),
        context,
      );
    },
    open: (ws) => {
      open++;
      const session = new Session(ws, hub, limits, events, ws.getUserData().address);
      sessions.add(session);
      ws.getUserData().session = session;
    },
    message: (ws, message) => {
      const session = ws.getUserData().session!;
      const text = Buffer.from(message).toString('utf8');
      let out;
      try {
        out = dispatcher.handle(text, false, session.methods, session.caller);
      } catch (e) {
        out = JSON.stringify({ jsonrpc: '2.0', id: null, error: new RpcError(Code.Internal, String(e)).toJSON() });
      }
      if (typeof out === 'string') session.reply(out);
      else if (out !== null) {
        void out.then((text) => {
          if (text !== null) session.reply(text);
        });
      }
    },
    close: (ws) => {
      open--;
      const session = ws.getUserData().session;
      if (session) {
        sessions.delete(session);
        session.dispose();
      }
    },
  });
  return {
    connections: () => open,
    closeAll: (reason) => {
      for (const s of [...sessions]) s.close(1001, reason);
    },
  };
}
