// Shared by the flashblocks tests: the message's shape, a client of an endpoint that keeps
// every message (JSON text or brotli binary frames), and a proxy between an endpoint and a
// follower that can be frozen (connections stay open, nothing is forwarded: a stream gone
// silent, as a stalled builder or proxy looks to its followers).

import { brotliDecompressSync } from 'node:zlib';
import type { AddressInfo } from 'node:net';
import type { Hex } from 'viem';
import WebSocket, { WebSocketServer } from 'ws';

export interface Flashblock {
  payload_id: Hex;
  index: number;
  base?: { parent_hash: Hex; block_number: Hex; fee_recipient: Hex; timestamp: Hex; gas_limit: Hex; base_fee_per_gas: Hex; extra_data: Hex };
  diff: {
    state_root: Hex;
    receipts_root: Hex;
    logs_bloom: Hex;
    gas_used: Hex;
    block_hash: Hex;
    transactions: Hex[];
    withdrawals: unknown[];
    withdrawals_root: Hex;
  };
  metadata: {
    block_number: number;
    receipts: Record<Hex, Record<string, { status: Hex; cumulativeGasUsed: Hex }>>;
    new_account_balances: Record<Hex, Hex>;
  };
}

/** A client of a flashblocks endpoint that keeps every message, and the kinds of frame seen. */
export class Listener {
  readonly messages: Flashblock[] = [];
  readonly frames = new Set<'text' | 'binary'>();
  private constructor(readonly socket: WebSocket) {
    socket.on('message', (data: Buffer, binary: boolean) => {
      this.frames.add(binary ? 'binary' : 'text');
      this.messages.push(JSON.parse((binary ? brotliDecompressSync(data) : data).toString('utf8')) as Flashblock);
    });
  }

  static open(url: string): Promise<Listener> {
    return new Promise((resolve, reject) => {
      const s = new WebSocket(url);
      s.once('open', () => resolve(new Listener(s)));
      s.once('error', reject);
    });
  }

  of(block: bigint): Flashblock[] {
    return this.messages.filter((m) => BigInt(m.metadata.block_number) === block);
  }

  close(): void {
    this.socket.close();
  }
}

/** A WebSocket proxy: each client gets its own connection to `upstream` (same path), whose
 *  frames it forwards as they are (text or binary) unless frozen. Frozen, it is an upstream
 *  that went silent: open streams get nothing, and new connections are closed at once. */
export class FlashblocksProxy {
  frozen = false;
  /** Client connections accepted so far. */
  connections = 0;
  private constructor(
    private readonly server: WebSocketServer,
    private readonly upstream: string,
  ) {
    server.on('connection', (client, req) => {
      this.connections++;
      if (this.frozen) return client.close(1013, 'frozen');
      const up = new WebSocket(`${this.upstream}${req.url ?? '/'}`);
      up.on('message', (data: Buffer, binary: boolean) => {
        if (!this.frozen && client.readyState === WebSocket.OPEN) client.send(data, { binary });
      });
      up.on('close', () => client.close());
      up.on('error', () => client.close());
      client.on('close', () => up.close());
    });
  }

  static async start(upstream: string): Promise<FlashblocksProxy> {
    const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await new Promise((r) => server.once('listening', r));
    return new FlashblocksProxy(server, upstream.replace(/\/$/, ''));
  }

  get url(): string {
    return `ws://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  close(): Promise<void> {
    for (const c of this.server.clients) c.terminate();
    return new Promise((r) => this.server.close(() => r()));
  }
}
