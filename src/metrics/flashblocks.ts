// The flashblocks follower's figures (--flashblocks-url; docs/flashblocks.md, "Following a
// sequencer"): read from the addon at scrape time, none on a node that does not follow.

import type { Registry } from 'prom-client';
import type { Chain } from '../native.js';
import { histogramSamples, registerSnapshot, type Sample } from './collectors.js';

type Status = NonNullable<ReturnType<Chain['flashblocksFollowStatus']>>;

export function registerFlashblocksFollow(registry: Registry, chain: Chain): void {
  const one = (name: string, help: string, kind: 'gauge' | 'counter', pick: (s: Status) => number): void =>
    registerSnapshot(registry, name, help, kind, (): Sample[] => {
      const s = chain.flashblocksFollowStatus();
      return s === null ? [] : [{ labels: {}, value: pick(s) }];
    });
  const hist = (name: string, help: string, pick: (s: Status) => Status['lagSeconds']): void =>
    registerSnapshot(registry, name, help, 'histogram', () => {
      const s = chain.flashblocksFollowStatus();
      return s === null ? [] : histogramSamples(name, pick(s));
    });
  one('preconf_flashblocks_connected', '1 while the flashblocks stream is connected', 'gauge', (s) => (s.connected ? 1 : 0));
  one('preconf_flashblocks_received_total', 'Flashblocks received and decoded', 'counter', (s) => s.frames);
  one('preconf_flashblocks_undecodable_total', 'Frames that were not a FlashblocksPayloadV1', 'counter', (s) => s.undecodable);
  one('preconf_flashblocks_reconnects_total', 'Connections to the flashblocks endpoint after the first', 'counter', (s) => s.reconnects);
  one('preconf_flashblocks_stale_total', 'Reconnections because the stream sent nothing for --flashblocks.stale-after', 'counter', (s) => s.stale);
  one('preconf_flashblocks_applied_total', 'Flashblocks executed and shown as the pending block', 'counter', (s) => s.applied);
  one(
    'preconf_flashblocks_dropped_total',
    'Flashblocks or followed blocks given up (missed index, not executable, passed by the head, or waited past --flashblocks.max-wait)',
    'counter',
    (s) => s.dropped,
  );
  one(
    'preconf_flashblocks_mismatches_total',
    "Executions whose roots, gas or bloom differ from the flashblock's, and canonical blocks that are not the block followed",
    'counter',
    (s) => s.mismatches,
  );
  one('preconf_flashblocks_promoted_total', 'Canonical blocks that are exactly the block the flashblocks made', 'counter', (s) => s.promoted);
  one(
    'preconf_flashblocks_reused_total',
    'Canonical blocks newPayload took from the follower as it executed them, instead of executing them again',
    'counter',
    (s) => s.reused,
  );
  one('preconf_flashblocks_pending_block', 'The block shown as pending from flashblocks (0: none, pending reads the head)', 'gauge', (s) => s.pendingNumber);
  hist(
    'preconf_flashblocks_lag_seconds',
    "From a flashblock's arrival to its state shown as pending (waiting for the canonical parent included)",
    (s) => s.lagSeconds,
  );
  hist('preconf_flashblocks_execution_seconds', "One flashblock's execution on the head (transactions and state root)", (s) => s.execSeconds);
}
