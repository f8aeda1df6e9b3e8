//! Work that must not run on a JavaScript event loop, by cost class. Each class has its
//! own threads and a bounded queue: a flood of one kind (simulations, log scans) cannot
//! hold up another (calls, submissions), and a full queue answers at once with a clear
//! `Overloaded` failure instead of growing without bound.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, OnceLock};

use napi::bindgen_prelude::Object;
use napi::Env;
use parking_lot::{Condvar, Mutex};
use preconf_chain::ChainResult;

use crate::failure::{outcome, ErrorKind, NativeFailure, Outcome};

type Job = Box<dyn FnOnce() + Send>;

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
}

impl Class {
    pub const ALL: [Class; 5] = [Class::Calls, Class::Simulate, Class::Scans, Class::Submit, Class::Trace];

    /// The class as a metrics label.
    pub fn label(self) -> &'static str {
        match self {
            Class::Calls => "calls",
            Class::Simulate => "simulate",
            Class::Scans => "scans",
            Class::Submit => "submit",
            Class::Trace => "trace",
        }
    }

    fn stats(self) -> &'static QueueStats {
        static STATS: [QueueStats; 5] = [const { QueueStats::new() }; 5];
        &STATS[self as usize]
    }

    fn spec(self) -> (&'static str, usize, usize) {
        // (name, threads, queued jobs) — calls keep libuv's measured default of 4 threads.
        match self {
            Class::Calls => ("eth_call/eth_estimateGas", 4, 1024),
            Class::Simulate => ("eth_simulateV1", 2, 64),
            Class::Scans => ("eth_getLogs/eth_feeHistory/block", 2, 256),
            Class::Submit => ("transaction submission", 8, 4096),
            Class::Trace => ("debug_trace*", 2, 64),
        }
    }

    fn pool(self) -> &'static WorkPool {
        static POOLS: [OnceLock<WorkPool>; 5] = [const { OnceLock::new() }; 5];
        POOLS[self as usize].get_or_init(|| WorkPool::start(self))
    }
}

/// Counters of one class, bumped per request (relaxed atomics, no allocation).
struct QueueStats {
    /// Accepted and not yet started.
    queued: AtomicU64,
    /// Running on a thread of the class.
    running: AtomicU64,
    completed: AtomicU64,
    /// Refused with `overloaded` because the queue was full.
    rejected: AtomicU64,
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

struct WorkPool {
    name: &'static str,
    capacity: usize,
    queue: Arc<JobQueue>,
}

/// A bounded queue its threads sleep on. One job wakes one thread: a channel shared
/// behind a mutex woke two (the receiver, then the next thread waiting for the mutex),
/// each a context switch on the core the event loop needs.
#[derive(Default)]
struct JobQueue {
    jobs: Mutex<VecDeque<Job>>,
    ready: Condvar,
}

impl JobQueue {
    /// Queues `job`, or hands it back when `capacity` jobs are already waiting.
    fn push(&self, job: Job, capacity: usize) -> Result<(), Job> {
        let mut jobs = self.jobs.lock();
        if jobs.len() >= capacity {
            return Err(job);
        }
        jobs.push_back(job);
        drop(jobs);
        self.ready.notify_one();
        Ok(())
    }

    fn take(&self) -> Job {
        let mut jobs = self.jobs.lock();
        loop {
            if let Some(job) = jobs.pop_front() {
                return job;
            }
            self.ready.wait(&mut jobs);
        }
    }
}

impl WorkPool {
    fn start(class: Class) -> Self {
        let (name, threads, capacity) = class.spec();
        let queue = Arc::new(JobQueue::default());
        for i in 0..threads {
            let queue = queue.clone();
            std::thread::Builder::new()
                .name(format!("preconf-{class:?}-{i}").to_lowercase())
                .spawn(move || loop {
                    (queue.take())()
                })
                .expect("spawn a worker thread");
        }
        WorkPool { name, capacity, queue }
    }
}

/// Runs `work`, turning a panic in the chain into an internal error: it must not take the
/// process down, on a worker thread or on an event loop.
pub fn guarded(work: impl FnOnce() -> ChainResult<String>) -> ChainResult<String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)).unwrap_or_else(|p| {
        let msg = p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()));
        Err(preconf_chain::ChainError::Internal(format!("panic: {}", msg.unwrap_or_else(|| "unknown".into()))))
    })
}

/// Runs `work` on a thread of `class`; the promise resolves with its result or failure.
pub fn run<'env>(
    env: &'env Env,
    class: Class,
    work: impl FnOnce() -> ChainResult<String> + Send + 'static,
) -> napi::Result<Object<'env>> {
    let (deferred, promise) = env.create_deferred::<Outcome, _>()?;
    let stats = class.stats();
    let job: Job = Box::new(move || {
        stats.queued.fetch_sub(1, Relaxed);
        stats.running.fetch_add(1, Relaxed);
        let out = outcome(guarded(work));
        stats.running.fetch_sub(1, Relaxed);
        stats.completed.fetch_add(1, Relaxed);
        deferred.resolve(move |_| Ok(out));
    });
    let pool = class.pool();
    // Counted before sending: a thread may start the job before try_send returns.
    stats.queued.fetch_add(1, Relaxed);
    match pool.queue.push(job, pool.capacity) {
        Ok(()) => Ok(promise),
        Err(job) => {
            stats.queued.fetch_sub(1, Relaxed);
            stats.rejected.fetch_add(1, Relaxed);
            drop(job);
            let (deferred, promise) = env.create_deferred::<Outcome, _>()?;
            let message =
                format!("server busy: {} {} requests are already queued; retry later", pool.capacity, pool.name);
            deferred.resolve(move |_| {
                Ok(napi::bindgen_prelude::Either::B(NativeFailure { kind: ErrorKind::Overloaded, message, data: None }))
            });
            Ok(promise)
        }
    }
}
