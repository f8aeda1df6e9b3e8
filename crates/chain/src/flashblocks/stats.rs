//! What the follower did, read at scrape time (`/metrics`).

use std::sync::atomic::{AtomicU64, Ordering};

use crate::metrics::Histogram;

/// Seconds from a flashblock's arrival to its state shown as pending (waiting for the
/// canonical parent included).
const LAG_SECONDS: &[f64] = &[0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5];
/// Seconds of one flashblock's execution (its transactions, and the state root).
const EXEC_SECONDS: &[f64] = &[0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1];

pub struct FollowStats {
    /// Flashblocks shown as pending.
    pub applied: AtomicU64,
    /// Flashblocks (or whole followed blocks) given up: out of order, not executable, the
    /// head passed them, or waited for their parent longer than the bound.
    pub dropped: AtomicU64,
    /// Executions whose roots, gas or bloom differ from what the flashblock says, and
    /// canonical blocks that are not the block the flashblocks made.
    pub mismatches: AtomicU64,
    /// Canonical blocks that are exactly the block followed (its hash named by the last
    /// flashblock).
    pub promoted: AtomicU64,
    /// Canonical blocks newPayload took from the follower as it executed them (not
    /// executed a second time).
    pub reused: AtomicU64,
    /// The block number shown as pending from flashblocks (0: none, pending reads the head).
    pub pending_number: AtomicU64,
    pub lag: Histogram,
    pub exec: Histogram,
}

impl Default for FollowStats {
    fn default() -> Self {
        Self {
            applied: AtomicU64::new(0),
            dropped: AtomicU64::new(0),
            mismatches: AtomicU64::new(0),
            promoted: AtomicU64::new(0),
            reused: AtomicU64::new(0),
            pending_number: AtomicU64::new(0),
            lag: Histogram::new(LAG_SECONDS),
            exec: Histogram::new(EXEC_SECONDS),
        }
    }
}

impl FollowStats {
    pub(crate) fn count(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }
}
