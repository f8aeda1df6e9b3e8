// The whole node's figures for GET /metrics. The main thread answers every scrape: it asks
// each worker loop for its registry (as JSON, over the worker's message port), sums them
// with its own (prom-client's aggregation: counters, histograms and gauges add up), and
// appends what exists once per process: the addon's figures and Node.js' default metrics.
// A scrape that lands on a worker loop is forwarded to the main thread, so every loop
// answers with the same, whole-node figures.

import type { MessagePort, Worker } from 'node:worker_threads';
import { AggregatorRegistry, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import type { Chain, NativeMetrics } from '../native.js';
import { histogramSamples, registerSnapshot, type Sample } from './collectors.js';
import { registerFlashblocksFollow } from './flashblocks.js';
import type { LoopMetrics } from './loop.js';

export const CONTENT_TYPE = Registry.PROMETHEUS_CONTENT_TYPE;

/** How long the main thread waits for a worker loop's figures before leaving them out. */
const WORKER_TIMEOUT_MS = 2_000;

/** Messages between the main thread and worker loops (on the workers' own ports). */
export type MetricsMessage =
  | { metrics: 'collect'; id: number } // main -> worker: send your registry
  | { metrics: 'collected'; id: number; data: unknown[] } // worker -> main
  | { metrics: 'scrape'; id: number } // worker -> main: a scrape arrived on the worker
  | { metrics: 'scraped'; id: number; text?: string; error?: string }; // main -> worker

/** Node.js' default metrics (CPU, memory, GC, event-loop lag of the main thread): one set
 *  per process, however many nodes it runs (the tests start several). */
let defaults: Registry | undefined;
function processDefaults(): Registry {
  if (defaults === undefined) {
    defaults = new Registry();
    collectDefaultMetrics({ register: defaults });
  }
  return defaults;
}

const isMetricsMessage = (m: unknown): m is MetricsMessage => typeof m === 'object' && m !== null && typeof (m as { metrics?: unknown }).metrics === 'string';

export class NodeMetrics {
  private readonly workers = new Set<Worker>();
  private readonly waiting = new Map<number, (data: unknown[] | null) => void>();
  private nextId = 1;
  /** Figures that exist once per node: the addon's (read once per scrape). */
  private readonly nodeWide = new Registry();
  private native?: NativeMetrics;
  private loopsReporting = 0;

  constructor(
    private readonly chain: Chain,
    private readonly own: LoopMetrics,
  ) {
    this.registerNative();
    const self = this;
    new Gauge({
      name: 'preconf_event_loops_reporting',
      help: 'Event loops whose figures this scrape includes (--threads; fewer means a loop did not answer in time)',
      registers: [this.nodeWide],
      collect() {
        this.set(self.loopsReporting);
      },
    });
  }

  /** A worker loop: answer its forwarded scrapes and ask it for its figures. */
  attach(worker: Worker): void {
    this.workers.add(worker);
    worker.once('exit', () => this.workers.delete(worker));
    worker.on('message', (m: unknown) => {
      if (!isMetricsMessage(m)) return;
      if (m.metrics === 'collected') this.waiting.get(m.id)?.(m.data);
      else if (m.metrics === 'scrape') {
        this.scrape().then(
          (text) => worker.postMessage({ metrics: 'scraped', id: m.id, text } satisfies MetricsMessage),
          (e: unknown) => worker.postMessage({ metrics: 'scraped', id: m.id, error: String(e) } satisfies MetricsMessage),
        );
      }
    });
  }

  async scrape(): Promise<string> {
    const parts = await Promise.all([this.own.registry.getMetricsAsJSON(), ...[...this.workers].map((w) => this.collect(w))]);
    const loops = parts.filter((p): p is unknown[] => p !== null);
    this.loopsReporting = loops.length;
    this.native = this.chain.metrics();
    const summed = AggregatorRegistry.aggregate(loops);
    return `${await summed.metrics()}\n${await this.nodeWide.metrics()}\n${await processDefaults().metrics()}`;
  }

  private collect(worker: Worker): Promise<unknown[] | null> {
    const id = this.nextId++;
    return new Promise((resolve) => {
      const done = (data: unknown[] | null): void => {
        clearTimeout(timer);
        this.waiting.delete(id);
        resolve(data);
      };
      const timer = setTimeout(() => done(null), WORKER_TIMEOUT_MS);
      this.waiting.set(id, done);
      worker.postMessage({ metrics: 'collect', id } satisfies MetricsMessage);
    });
  }

  private registerNative(): void {
    const n = (): NativeMetrics => this.native ?? this.chain.metrics();
    const hist = (name: string, help: string, pick: (m: NativeMetrics) => Parameters<typeof histogramSamples>[1]): void =>
      registerSnapshot(this.nodeWide, name, help, 'histogram', () => histogramSamples(name, pick(n())));
    hist(
      'preconf_builder_tick_duration_seconds',
      'Wall time of one pre-confirmation: executing pooled transactions and publishing',
      (m) => m.preconfTickSeconds,
    );
    hist(
      'preconf_builder_tick_delay_seconds',
      'How late each pre-confirmation was published after its tick was due (waking, transactions run at the tick, publishing)',
      (m) => m.tickDelaySeconds,
    );
    hist('preconf_builder_seal_duration_seconds', 'Wall time of one seal on the builder: state root, hash, publishing the new head', (m) => m.sealSeconds);
    hist(
      'preconf_store_commit_duration_seconds',
      'Wall time of one durable store commit of one or more sealed blocks (committer thread, off the pre-confirmation clock)',
      (m) => m.commitSeconds,
    );
    hist('preconf_store_commit_blocks', 'Sealed blocks written per durable commit (above 1 when the disk fell behind the block time)', (m) => m.commitBlocks);
    hist('preconf_builder_preconf_transactions', 'Transactions added per pre-confirmation', (m) => m.preconfTransactions);
    registerSnapshot(this.nodeWide, 'preconf_pool_transactions', 'Pooled transactions: pending (executable) and queued (after a nonce gap)', 'gauge', () => [
      { labels: { state: 'pending' }, value: n().poolPending },
      { labels: { state: 'queued' }, value: n().poolQueued },
    ]);
    registerSnapshot(this.nodeWide, 'preconf_store_size_bytes', 'Size of the store: its file, or with --ephemeral the memory it holds', 'gauge', () => {
      const bytes = n().storeBytes;
      return bytes === undefined || bytes === null ? [] : [{ labels: {}, value: bytes }];
    });
    registerSnapshot(
      this.nodeWide,
      'preconf_store_live_bytes',
      'Bytes of keys and values the store holds (flat on a node with --history-blocks; the file grows in steps and never shrinks)',
      'gauge',
      () => [{ labels: {}, value: n().storeLiveBytes }],
    );
    registerSnapshot(this.nodeWide, 'preconf_head_block', 'Number of the newest sealed block', 'gauge', () => [{ labels: {}, value: n().head }]);
    registerSnapshot(
      this.nodeWide,
      'preconf_durable_block',
      'Number of the newest durable sealed block (safe): the head minus the blocks still being committed',
      'gauge',
      () => [{ labels: {}, value: n().durableHead }],
    );
    registerSnapshot(
      this.nodeWide,
      'preconf_history_oldest_block',
      'Oldest block whose body, receipts and state are kept (0 on an archive node; --history-blocks)',
      'gauge',
      () => [{ labels: {}, value: n().historyFrom }],
    );
    const queues = (name: string, help: string, kind: 'gauge' | 'counter', pick: (q: NativeMetrics['workQueues'][number]) => number): void =>
      registerSnapshot(this.nodeWide, name, help, kind, () => n().workQueues.map((q): Sample => ({ labels: { class: q.class }, value: pick(q) })));
    queues('preconf_work_queue_depth', 'Requests accepted by a cost class and waiting for one of its threads', 'gauge', (q) => q.queued);
    queues('preconf_work_queue_capacity', 'Queue length of a cost class above which requests are refused with -32005', 'gauge', (q) => q.capacity);
    queues('preconf_work_running', 'Requests running on the threads of a cost class', 'gauge', (q) => q.running);
    queues('preconf_work_completed_total', 'Requests a cost class has finished', 'counter', (q) => q.completed);
    this.registerReplication();
    registerFlashblocksFollow(this.nodeWide, this.chain);
    queues(
      'preconf_work_rejected_total',
      'Requests refused with -32005 (server busy) because the queue of their cost class was full',
      'counter',
      (q) => q.rejected,
    );
  }

  /** A cluster node's leadership figures (none on a node that does not replicate). */
  private registerReplication(): void {
    const status = (): ReturnType<Chain['replicationStatus']> => this.chain.replicationStatus();
    const one = (
      name: string,
      help: string,
      kind: 'gauge' | 'counter',
      pick: (s: NonNullable<ReturnType<Chain['replicationStatus']>>) => number | null | undefined,
    ): void =>
      registerSnapshot(this.nodeWide, name, help, kind, () => {
        const s = status();
        const v = s === null ? undefined : pick(s);
        return v === undefined || v === null ? [] : [{ labels: {}, value: v }];
      });
    one('preconf_cluster_term', 'The newest leader term this node knows of', 'gauge', (s) => s.term);
    one('preconf_cluster_leader', '1 while this node leads, else 0', 'gauge', (s) => (s.role === 'leader' ? 1 : 0));
    one('preconf_cluster_elections_total', 'Leases this node took (elections it won)', 'counter', (s) => s.elections);
    one(
      'preconf_cluster_fenced_total',
      "Times the stream refused this node's append because another leader had written (it stepped down)",
      'counter',
      (s) => s.fenced,
    );
    one(
      'preconf_cluster_stalled_total',
      'Times this node gave the lease up because it sealed no block within the lease and two block times',
      'counter',
      (s) => s.stalled,
    );
    one('preconf_cluster_leaderless_seconds_total', 'Time this node knew of no leader, summed', 'counter', (s) => s.leaderlessTotalMs / 1000);
    one('preconf_cluster_takeover_seconds', "Duration of this node's last takeover: from taking the lease to building", 'gauge', (s) =>
      s.lastTakeoverMs === undefined || s.lastTakeoverMs === null ? null : s.lastTakeoverMs / 1000,
    );
    one('preconf_replication_applied_sequence', 'The stream sequence this node applied last', 'gauge', (s) => s.applied);
  }
}

/**
 * The worker side: answers the main thread's requests for this loop's figures, and returns
 * the scrape function this loop's GET /metrics uses (forwarded to the main thread).
 */
export function workerMetrics(port: MessagePort, own: LoopMetrics): () => Promise<string> {
  const waiting = new Map<number, { resolve(text: string): void; reject(e: Error): void }>();
  let nextId = 1;
  port.on('message', (m: unknown) => {
    if (!isMetricsMessage(m)) return;
    if (m.metrics === 'collect') {
      void own.registry.getMetricsAsJSON().then((data) => port.postMessage({ metrics: 'collected', id: m.id, data } satisfies MetricsMessage));
    } else if (m.metrics === 'scraped') {
      const w = waiting.get(m.id);
      waiting.delete(m.id);
      if (m.text !== undefined) w?.resolve(m.text);
      else w?.reject(new Error(m.error ?? 'metrics scrape failed'));
    }
  });
  return () =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      const timer = setTimeout(() => {
        waiting.delete(id);
        reject(new Error('the main thread did not answer the metrics scrape'));
      }, 2 * WORKER_TIMEOUT_MS);
      waiting.set(id, {
        resolve: (text) => (clearTimeout(timer), resolve(text)),
        reject: (e) => (clearTimeout(timer), reject(e)),
      });
      port.postMessage({ metrics: 'scrape', id } satisfies MetricsMessage);
    });
}
