// What one event loop counts: JSON-RPC requests, errors and latencies per method (HTTP and
// WebSocket alike), its WebSocket connections and subscriptions, and the slow subscribers
// it closed. Every loop has its own registry; the main thread sums them (node.ts).

import { Counter, Gauge, Registry } from 'prom-client';
import { cumulate, histogramSamples, registerSnapshot, type Sample } from './collectors.js';
import { LATENCY_BUCKETS, RpcStats } from './rpc.js';

/** Where the WebSocket figures come from (known once the transport is mounted). */
export interface WsFigures {
  connections(): number;
  /** Subscriptions by kind (newHeads, logs, ...). */
  subscriptions(): Iterable<[string, number]>;
}

export class LoopMetrics {
  readonly registry = new Registry();
  readonly rpc: RpcStats;
  private ws?: WsFigures;
  private readonly dropped: Counter;
  private readonly limited: Counter<'reason'>;

  constructor(methods: Iterable<string>) {
    this.rpc = new RpcStats(methods);
    const rpc = this.rpc;
    registerSnapshot(this.registry, 'preconf_rpc_requests_total', 'JSON-RPC requests answered, by method (unknown methods count as "other")', 'counter', () =>
      rpc.used().map((s) => ({ labels: { method: s.method }, value: s.requests })),
    );
    registerSnapshot(this.registry, 'preconf_rpc_errors_total', 'JSON-RPC requests answered with an error, by method', 'counter', () =>
      rpc.used().map((s) => ({ labels: { method: s.method }, value: s.errors })),
    );
    const latency = 'preconf_rpc_request_duration_seconds';
    registerSnapshot(this.registry, latency, 'Time from parsing a JSON-RPC request to its response text, by method', 'histogram', () =>
      rpc
        .used()
        .flatMap((s): Sample[] =>
          histogramSamples(latency, { bounds: LATENCY_BUCKETS, cumulative: cumulate(s.buckets), sum: s.seconds, count: s.requests }, { method: s.method }),
        ),
    );
    const self = this;
    new Gauge({
      name: 'preconf_ws_connections',
      help: 'Open WebSocket connections',
      registers: [this.registry],
      collect() {
        this.set(self.ws?.connections() ?? 0);
      },
    });
    new Gauge({
      name: 'preconf_ws_subscriptions',
      help: 'Active eth_subscribe subscriptions, by kind',
      labelNames: ['kind'],
      registers: [this.registry],
      collect() {
        for (const [kind, n] of self.ws?.subscriptions() ?? []) this.set({ kind }, n);
      },
    });
    this.dropped = new Counter({
      name: 'preconf_ws_slow_subscribers_dropped_total',
      help: 'WebSocket connections closed (1008) for falling more than --ws-max-backpressure bytes behind',
      registers: [this.registry],
    });
    this.limited = new Counter({
      name: 'preconf_rate_limited_total',
      help: 'Requests refused by --rate-limit ("rps", HTTP 429) or --rate-limit-heavy ("heavy")',
      labelNames: ['reason'],
      registers: [this.registry],
    });
    // Present (at 0) from the start, so a dashboard sees the series before the first refusal.
    this.limited.inc({ reason: 'rps' }, 0);
    this.limited.inc({ reason: 'heavy' }, 0);
  }

  /** Connects the WebSocket figures once the transport exists. */
  observeWebSocket(figures: WsFigures): void {
    this.ws = figures;
  }

  slowSubscriberDropped(): void {
    this.dropped.inc();
  }

  rateLimited(reason: 'rps' | 'heavy'): void {
    this.limited.inc({ reason });
  }
}
