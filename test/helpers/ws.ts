// A raw JSON-RPC WebSocket client (the `ws` package) for tests that need control over
// reading: subscription streams, and a consumer that stops reading.

import WebSocket from 'ws';

export interface Notification {
  subscription: string;
  result: any;
}

export class RawWs {
  readonly socket: WebSocket;
  private nextId = 1;
  private readonly pending = new Map<number, (msg: any) => void>();
  readonly notifications: Notification[] = [];
  private listeners: ((n: Notification) => void)[] = [];
  closeInfo?: { code: number; reason: string };

  private constructor(socket: WebSocket) {
    this.socket = socket;
    socket.on('message', (data) => {
      const msg = JSON.parse(data.toString());
      if (Array.isArray(msg)) {
        const first = msg.find((m) => typeof m.id === 'number');
        if (first) this.pending.get(first.id)?.(msg);
        return;
      }
      if (msg.method === 'eth_subscription') {
        this.notifications.push(msg.params);
        for (const l of this.listeners) l(msg.params);
        return;
      }
      this.pending.get(msg.id)?.(msg);
      this.pending.delete(msg.id);
    });
    socket.on('close', (code, reason) => (this.closeInfo = { code, reason: reason.toString() }));
  }

  static open(url: string): Promise<RawWs> {
    return new Promise((resolve, reject) => {
      const s = new WebSocket(url);
      s.once('open', () => resolve(new RawWs(s)));
      s.once('error', reject);
    });
  }

  request(method: string, params: unknown[] = []): Promise<any> {
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.pending.set(id, resolve);
      this.socket.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    });
  }

  /** A request whose params are given as JSON text (for input JSON.stringify cannot write,
   *  such as nesting deeper than its recursion allows). */
  requestText(method: string, params: string): Promise<any> {
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.pending.set(id, resolve);
      this.socket.send(`{"jsonrpc":"2.0","id":${id},"method":${JSON.stringify(method)},"params":${params}}`);
    });
  }

  batch(calls: [string, unknown[]][]): Promise<any[]> {
    const ids = calls.map(() => this.nextId++);
    return new Promise((resolve) => {
      this.pending.set(ids[0]!, resolve);
      this.socket.send(JSON.stringify(calls.map(([method, params], i) => ({ jsonrpc: '2.0', id: ids[i], method, params }))));
    });
  }

  /** Waits for a notification of `subscription` that satisfies `pred`. */
  waitFor(subscription: string, pred: (result: any) => boolean = () => true, timeoutMs = 10_000): Promise<any> {
    const seen = this.notifications.find((n) => n.subscription === subscription && pred(n.result));
    if (seen) return Promise.resolve(seen.result);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no matching notification for ${subscription}`)), timeoutMs);
      const l = (n: Notification) => {
        if (n.subscription === subscription && pred(n.result)) {
          clearTimeout(timer);
          this.listeners = this.listeners.filter((x) => x !== l);
          resolve(n.result);
        }
      };
      this.listeners.push(l);
    });
  }

  /** Calls `listener` with every later notification of `subscription`. */
  on(subscription: string, listener: (result: any) => void): void {
    this.listeners.push((n) => {
      if (n.subscription === subscription) listener(n.result);
    });
  }

  of(subscription: string): any[] {
    return this.notifications.filter((n) => n.subscription === subscription).map((n) => n.result);
  }

  /** Closes the socket and resolves once it is closed. */
  close(): Promise<void> {
    if (this.socket.readyState === WebSocket.CLOSED) return Promise.resolve();
    const closed = new Promise<void>((resolve) => this.socket.once('close', () => resolve()));
    this.socket.close();
    return closed;
  }
}
