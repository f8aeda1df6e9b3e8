// Fan-out of builder events to subscribers. The addon renders each payload once (only for
// kinds someone listens to); here it is wrapped once per subscription id and handed to
// each connection, which polices its own backpressure. Also wakes eth_sendRawTransactionSync
// callers when their transaction is pre-confirmed.

import type { Chain, EventKind } from '../native.js';
import { matchesLog, type TopicFilter } from '../validation/filter.js';

export const SUBSCRIPTION_KINDS = ['newHeads', 'logs', 'newPendingTransactions', 'newFlashblocks', 'newFlashblockTransactions', 'pendingLogs'] as const;
export type SubscriptionKind = (typeof SUBSCRIPTION_KINDS)[number];

/** A WebSocket connection as the hub sees it. */
export interface Subscriber {
  /** Sends one text frame; the connection closes itself if it falls too far behind. */
  send(text: string): void;
  readonly closed: boolean;
}

interface Subscription {
  id: string;
  kind: SubscriptionKind;
  subscriber: Subscriber;
  full: boolean;
  filter?: TopicFilter;
}

interface LogJson {
  address: string;
  topics: string[];
}

const envelope = (id: string, result: string): string => `{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"${id}","result":${result}}}`;

function newId(): string {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return `0x${Buffer.from(bytes).toString('hex')}`;
}

export class SubscriptionHub {
  private readonly subs = new Map<string, Subscription>();
  private readonly byKind = new Map<SubscriptionKind, Set<Subscription>>(SUBSCRIPTION_KINDS.map((k) => [k, new Set()]));
  /** Transaction hash -> callbacks waiting for its pre-confirmation (or inclusion). */
  private readonly txWaiters = new Map<string, Set<() => void>>();
  private interest = '';

  constructor(private readonly chain: Chain) {
    chain.subscribeEvents((kind, payload) => this.onEvent(kind, payload));
  }

  subscribe(subscriber: Subscriber, kind: SubscriptionKind, full: boolean, filter?: TopicFilter): string {
    const sub: Subscription = { id: newId(), kind, subscriber, full, filter };
    this.subs.set(sub.id, sub);
    this.byKind.get(kind)!.add(sub);
    this.updateInterest();
    return sub.id;
  }

  unsubscribe(subscriber: Subscriber, id: string): boolean {
    const sub = this.subs.get(id);
    if (!sub || sub.subscriber !== subscriber) return false;
    this.subs.delete(id);
    this.byKind.get(sub.kind)!.delete(sub);
    this.updateInterest();
    return true;
  }

  /** Forgets every subscription of a connection that went away. */
  drop(subscriber: Subscriber, ids: Iterable<string>): void {
    for (const id of ids) this.unsubscribe(subscriber, id);
  }

  count(): number {
    return this.subs.size;
  }

  /** Subscriptions by kind (for the metrics). */
  countByKind(): Array<[SubscriptionKind, number]> {
    return [...this.byKind].map(([kind, subs]) => [kind, subs.size]);
  }

  /**
   * Resolves when `hash` is pre-confirmed (or sealed), false after `timeoutMs`. The caller
   * checks for an existing receipt right after registering, in the same tick.
   */
  waitForTx(hash: string, timeoutMs: number): Promise<boolean> {
    return new Promise((resolve) => {
      const done = (ok: boolean): void => {
        clearTimeout(timer);
        const set = this.txWaiters.get(hash);
        set?.delete(wake);
        if (set?.size === 0) this.txWaiters.delete(hash);
        resolve(ok);
      };
      const wake = (): void => done(true);
      const timer = setTimeout(() => done(false), timeoutMs);
      let set = this.txWaiters.get(hash);
      if (!set) this.txWaiters.set(hash, (set = new Set()));
      set.add(wake);
    });
  }

  private updateInterest(): void {
    const has = (k: SubscriptionKind, pred: (s: Subscription) => boolean = () => true): boolean => {
      for (const s of this.byKind.get(k)!) if (pred(s)) return true;
      return false;
    };
    const kinds: EventKind[] = [];
    if (has('newHeads')) kinds.push('newHead');
    if (has('logs')) kinds.push('logs');
    if (has('newFlashblocks')) kinds.push('flashblock');
    if (has('newFlashblockTransactions', (s) => s.full)) kinds.push('flashblockTx');
    if (has('pendingLogs')) kinds.push('pendingLogs');
    if (has('newPendingTransactions')) kinds.push('pooled');
    const key = kinds.join();
    if (key !== this.interest) {
      this.interest = key;
      this.chain.setEventInterest(kinds);
    }
  }

  private sendAll(kind: SubscriptionKind, result: string, pred?: (s: Subscription) => boolean): void {
    for (const s of this.byKind.get(kind)!) {
      if (s.subscriber.closed || (pred && !pred(s))) continue;
      s.subscriber.send(envelope(s.id, result));
    }
  }

  private sendLogs(kind: SubscriptionKind, payload: string): void {
    const subs = this.byKind.get(kind)!;
    if (subs.size === 0) return;
    const logs = JSON.parse(payload) as LogJson[];
    const texts = new Array<string | undefined>(logs.length);
    for (const s of subs) {
      if (s.subscriber.closed) continue;
      logs.forEach((log, i) => {
        if (s.filter && !matchesLog(s.filter, log)) return;
        s.subscriber.send(envelope(s.id, (texts[i] ??= JSON.stringify(log))));
      });
    }
  }

  private wake(hashes: string[]): void {
    for (const h of hashes) {
      const set = this.txWaiters.get(h);
      if (set) for (const wake of [...set]) wake();
    }
  }

  private onEvent(kind: EventKind, payload: string): void {
    switch (kind) {
      case 'preconf':
      case 'head': {
        const needHashes = this.txWaiters.size > 0 || (kind === 'preconf' && this.byKind.get('newFlashblockTransactions')!.size > 0);
        if (!needHashes) return;
        const summary = JSON.parse(payload) as { txHashes: string[] };
        if (this.txWaiters.size > 0) this.wake(summary.txHashes);
        if (kind === 'preconf') {
          for (const h of summary.txHashes) this.sendAll('newFlashblockTransactions', `"${h}"`, (s) => !s.full);
        }
        return;
      }
      case 'flashblock':
        return this.sendAll('newFlashblocks', payload);
      case 'flashblockTx':
        return this.sendAll('newFlashblockTransactions', payload, (s) => s.full);
      case 'pendingLogs':
        return this.sendLogs('pendingLogs', payload);
      case 'newHead':
        return this.sendAll('newHeads', payload);
      case 'logs':
        // A sealed block's logs, or on a rewind those of the blocks taken off (`removed:
        // true`, sent before the new head's): filtered alike.
        return this.sendLogs('logs', payload);
      case 'pooled':
        return this.sendAll('newPendingTransactions', payload);
    }
  }
}
