//! Between ticks the builder executes pooled transactions as they arrive; at each tick it
//! publishes what it executed as the next pre-confirmation. Publishing is then a constant,
//! small step, so pre-confirmations go out on the clock whatever a burst of transactions
//! costs to execute (docs/architecture.md, "The clock").

use std::time::{Duration, Instant};

use alloy_primitives::B256;

use super::block::{unix_now_ms, Outcome};
use super::Builder;
use crate::error::DropReason;
use crate::pool::BestTxs;
use crate::wire::{self as codec, Kind};

/// What the builder executed since the last pre-confirmation.
#[derive(Default)]
pub struct Executed {
    /// Included in the open block, still in the pool until the pre-confirmation is published.
    pub included: Vec<B256>,
    /// Time spent executing them (part of the pre-confirmation's tick duration).
    time: Duration,
    /// (open block, pool arrivals) at the last pass that ran out of candidates: nothing new
    /// to try until a transaction arrives or a block opens.
    exhausted: Option<(u64, u64)>,
}

impl Builder {
    /// Executes what the pool offers on top of the open block until `stop_at` (at least one
    /// transaction per pass, so short intervals still make progress).
    pub(super) fn execute_pool(&mut self, stop_at: Instant) {
        let number = self.block.header.number;
        let exhausted = self.executed.exhausted;
        let queues = self.chain.read_pool(|pool| {
            let state = (number, pool.arrivals());
            (exhausted != Some(state)).then(|| (state, pool.snapshot()))
        });
        let Some((state, queues)) = queues else { return };
        self.executed.exhausted = Some(state);
        let started = Instant::now();
        let base_fee = self.block.header.base_fee_per_gas.unwrap_or_default();
        let block = &mut self.block;
        // Transactions executed since the last pre-confirmation are still pooled; their
        // senders' state nonces have moved past them, so they are not offered again.
        let mut candidates = BestTxs::new(queues, base_fee, |sender| block.nonce_of(sender));
        let mut tried = false;
        let mut dropped: Vec<(B256, DropReason)> = Vec::new();
        while let Some(ptx) = candidates.next() {
            // The Engine API waiting (getPayload's seal) cuts the pass short too.
            if tried && (Instant::now() >= stop_at || self.mailbox.waiting()) {
                self.executed.exhausted = None; // the next pass carries on
                break;
            }
            tried = true;
            match self.block.execute(&ptx) {
                Outcome::Included => self.executed.included.push(ptx.hash),
                Outcome::NoRoom => candidates.skip_sender(&ptx.sender),
                Outcome::Invalid(reason) => {
                    candidates.skip_sender(&ptx.sender);
                    dropped.push((ptx.hash, reason));
                }
            }
        }
        if !dropped.is_empty() {
            self.chain.drop_from_pool(&dropped);
        }
        self.executed.time += started.elapsed();
    }

    /// Publishes what was executed since the last tick as the next pre-confirmation;
    /// `due` is when the tick was (none for the last one at shutdown).
    pub(super) fn preconfirm(&mut self, due: Option<Instant>) {
        let tick = Instant::now();
        self.block.preconf_index += 1;
        let view = self.with_pending((*self.chain.view()).clone());
        if let Some(p) = view.pending.clone() {
            self.block.warm.preconfirmed(&p.tick);
            // A cluster's leader shows it only once the log holds it.
            let (first, term) = (self.block.announced, self.term());
            let encode = || codec::encode_pending(&p.block, term, unix_now_ms(), false, first, &p.tick);
            if self.record(Kind::Pending, p.number(), p.preconf_index(), encode).is_err() {
                return;
            }
        }
        let included = std::mem::take(&mut self.executed.included);
        self.chain.publish_including(view, included.iter().copied());
        // Measured before the announcement, so whoever hears of it finds it counted.
        let metrics = self.chain.metrics();
        metrics.preconf_txs.observe(included.len() as f64);
        let spent = std::mem::take(&mut self.executed.time) + tick.elapsed();
        metrics.preconf_tick.observe(spent.as_secs_f64());
        if let Some(due) = due {
            metrics.tick_delay.observe(Instant::now().saturating_duration_since(due).as_secs_f64());
        }
        self.announce_preconf();
    }
}
