//! The classes of work, their threads and queues, and their counters for the metrics.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::OnceLock;

use super::queue::WorkPool;

/// A class of work: what it is called in errors, its threads and its queue.
#[derive(Clone, Copy, Debug)]
pub enum Class {
    /// eth_call, eth_estimateGas, eth_sendTransaction: short, CPU-bound.
    Calls,
    /// eth_simulateV1: up to seconds each.
    Simulate,
    /// eth_getLogs, eth_feeHistory, whole-block reads: grow with block size and range.
    Scans,
    /// eth_sendRawTransaction: mostly waits for the journal's fdatasync.
    Submit,
    /// debug_trace*: up to their timeout each, with outputs of many megabytes; kept off
    /// the calls threads so a few traces cannot hold up eth_call.
    Trace,
    /// A forked chain's reads that must wait for the upstream (a cold account, slot or
    /// block of its history): mostly waiting on the network, kept off the event loop and
    /// off the other classes' threads.
    Upstream,
}

impl Class {
    pub const ALL: [Class; 6] =
        [Class::Calls, Class::Simulate, Class::Scans, Class::Submit, Class::Trace, Class::Upstream];

    /// The class as a metrics label.
    pub fn label(self) -> &'static str {
        match self {
            Class::Calls => "calls",
            Class::Simulate => "simulate",
            Class::Scans => "scans",
            Class::Submit => "submit",
            Class::Trace => "trace",
            Class::Upstream => "upstream",
        }
    }

    pub(super) fn stats(self) -> &'static QueueStats {
        static STATS: [QueueStats; 6] = [const { QueueStats::new() }; 6];
        &STATS[self as usize]
    }

    pub(super) fn spec(self) -> (&'static str, usize, usize) {
        // (name, threads, queued jobs) — calls keep libuv's measured default of 4 threads.
        match self {
            Class::Calls => ("eth_call/eth_estimateGas", 4, 1024),
            Class::Simulate => ("eth_simulateV1", 2, 64),
            Class::Scans => ("eth_getLogs/eth_feeHistory/block", 2, 256),
            Class::Submit => ("transaction submission", 8, 4096),
            Class::Trace => ("debug_trace*", 2, 64),
            // Threads that wait, not compute: enough for reads of several clients at once.
            Class::Upstream => ("fork upstream read", 8, 1024),
        }
    }

    pub(super) fn pool(self) -> &'static WorkPool {
        static POOLS: [OnceLock<WorkPool>; 6] = [const { OnceLock::new() }; 6];
        POOLS[self as usize].get_or_init(|| WorkPool::start(self))
    }
}

/// Counters of one class, bumped per request (relaxed atomics, no allocation).
pub(super) struct QueueStats {
    /// Accepted and not yet started.
    pub(super) queued: AtomicU64,
    /// Running on a thread of the class.
    pub(super) running: AtomicU64,
    pub(super) completed: AtomicU64,
    /// Refused with `overloaded` because the queue was full, or the client's share of it.
    pub(super) rejected: AtomicU64,
}

impl QueueStats {
    const fn new() -> Self {
        Self {
            queued: AtomicU64::new(0),
            running: AtomicU64::new(0),
            completed: AtomicU64::new(0),
            rejected: AtomicU64::new(0),
        }
    }
}

/// One class's queue as the metrics see it.
pub struct QueueSnapshot {
    pub class: &'static str,
    pub threads: usize,
    pub capacity: usize,
    pub queued: u64,
    pub running: u64,
    pub completed: u64,
    pub rejected: u64,
}

/// Every class's counters, without starting pools that were never used.
pub fn snapshot() -> Vec<QueueSnapshot> {
    Class::ALL
        .iter()
        .map(|&class| {
            let (_, threads, capacity) = class.spec();
            let s = class.stats();
            QueueSnapshot {
                class: class.label(),
                threads,
                capacity,
                queued: s.queued.load(Relaxed),
                running: s.running.load(Relaxed),
                completed: s.completed.load(Relaxed),
                rejected: s.rejected.load(Relaxed),
            }
        })
        .collect()
}
