//! Work that must not run on a JavaScript event loop, by cost class. Each class has its
//! own threads and a bounded queue: a flood of one kind (simulations, log scans) cannot
//! hold up another (calls, submissions), and a full queue answers at once with a clear
//! `Overloaded` failure instead of growing without bound.
//!
//! Within a class, jobs are served per client (the key the transport passes: the client's
//! address), taking turns: one client's flood queues behind its own jobs, not in front of
//! everyone else's. A client may hold at most a share of a class's queue, and in a class
//! of three threads or more it may run on all but one of them, so a newcomer finds a
//! thread free (docs/hostile-clients.md).

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, OnceLock};

use napi::bindgen_prelude::{Either, JsValue, Object, PromiseRaw};
use napi::Env;
use parking_lot::{Condvar, Mutex};
use preconf_chain::error::{UpstreamError, UpstreamFailure};
use preconf_chain::{ChainError, ChainResult, InternalError};

use crate::failure::{outcome, ErrorKind, NativeFailure, Outcome};

/// Runs the work and hands back what delivers its answer: the worker frees the client's
/// slot in between, so a client that sends its next request as soon as it hears back
/// never finds its previous one still counted against its share.
type Job = Box<dyn FnOnce() -> Deliver + Send>;
type Deliver = Box<dyn FnOnce() + Send>;

/// Whose job it is: a hash of the client's address, from the transport. `None` (work the
/// node does for itself, or a caller that does not say) takes turns as one client and is
/// not held to a client's share.
pub type ClientKey = Option<u32>;

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

    fn stats(self) -> &'static QueueStats {
        static STATS: [QueueStats; 6] = [const { QueueStats::new() }; 6];
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
            // Threads that wait, not compute: enough for reads of several clients at once.
            Class::Upstream => ("fork upstream read", 8, 1024),
        }
    }

    fn pool(self) -> &'static WorkPool {
        static POOLS: [OnceLock<WorkPool>; 6] = [const { OnceLock::new() }; 6];
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
    /// Refused with `overloaded` because the queue was full, or the client's share of it.
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

/// A client's jobs in one class.
#[derive(Default)]
struct ClientJobs {
    waiting: VecDeque<Job>,
    running: usize,
    /// In `Turns::order` (it has waiting jobs and a turn to come).
    in_turn: bool,
}

/// The queue of a class: each client's jobs, and whose turn comes next.
#[derive(Default)]
struct Turns {
    clients: HashMap<ClientKey, ClientJobs>,
    order: VecDeque<ClientKey>,
    waiting: usize,
}

/// Why a job was not queued.
enum Refusal {
    /// The class's queue is full.
    Full,
    /// The client already holds its share of the class (queued and running).
    ClientShare(usize),
}

/// A bounded queue its threads sleep on. One job wakes one thread: a channel shared
/// behind a mutex woke two (the receiver, then the next thread waiting for the mutex),
/// each a context switch on the core the event loop needs.
struct JobQueue {
    turns: Mutex<Turns>,
    ready: Condvar,
    /// Jobs one client may hold, queued and running.
    client_share: usize,
    /// Threads one client may run on at once.
    client_threads: usize,
}

impl JobQueue {
    fn new(threads: usize, capacity: usize) -> Self {
        JobQueue {
            turns: Mutex::default(),
            ready: Condvar::new(),
            client_share: (capacity / 4).max(1),
            // With two threads, one each would halve a lone client's throughput: there the
            // turns alone keep the order fair.
            client_threads: if threads >= 3 { threads - 1 } else { threads },
        }
    }

    /// Queues `job` for `client`, or hands it back with the reason.
    fn push(&self, client: ClientKey, job: Job, capacity: usize) -> Result<(), (Job, Refusal)> {
        let mut turns = self.turns.lock();
        if turns.waiting >= capacity {
            return Err((job, Refusal::Full));
        }
        let jobs = turns.clients.entry(client).or_default();
        if client.is_some() && jobs.waiting.len() + jobs.running >= self.client_share {
            return Err((job, Refusal::ClientShare(self.client_share)));
        }
        jobs.waiting.push_back(job);
        let queue_turn = !jobs.in_turn;
        jobs.in_turn = true;
        if queue_turn {
            turns.order.push_back(client);
        }
        turns.waiting += 1;
        drop(turns);
        self.ready.notify_one();
        Ok(())
    }

    /// The next job in turn whose client has a thread to spare; sleeps until there is one.
    fn take(&self) -> (ClientKey, Job) {
        let mut turns = self.turns.lock();
        loop {
            if let Some(taken) = self.next_in_turn(&mut turns) {
                return taken;
            }
            self.ready.wait(&mut turns);
        }
    }

    fn next_in_turn(&self, turns: &mut Turns) -> Option<(ClientKey, Job)> {
        let limit = self.client_threads;
        let at = turns.order.iter().position(|c| c.is_none() || turns.clients[c].running < limit)?;
        let client = turns.order.remove(at)?;
        let jobs = turns.clients.get_mut(&client)?;
        let job = jobs.waiting.pop_front()?;
        jobs.running += 1;
        jobs.in_turn = !jobs.waiting.is_empty();
        if jobs.in_turn {
            turns.order.push_back(client);
        }
        turns.waiting -= 1;
        Some((client, job))
    }

    /// Takes the next job, runs it, frees its slot, then delivers its answer.
    fn serve_one(&self) {
        let (client, job) = self.take();
        let deliver = job();
        self.done(client);
        deliver();
    }

    /// A job of `client` finished: its thread may go to the client's next job.
    fn done(&self, client: ClientKey) {
        let mut turns = self.turns.lock();
        let Some(jobs) = turns.clients.get_mut(&client) else { return };
        jobs.running -= 1;
        // The thread that ran it takes the next job itself: no other thread needs waking.
        if jobs.running == 0 && jobs.waiting.is_empty() {
            turns.clients.remove(&client);
        }
    }
}

impl WorkPool {
    fn start(class: Class) -> Self {
        let (name, threads, capacity) = class.spec();
        let queue = Arc::new(JobQueue::new(threads, capacity));
        for i in 0..threads {
            let queue = queue.clone();
            std::thread::Builder::new()
                .name(format!("preconf-{class:?}-{i}").to_lowercase())
                .spawn(move || loop {
                    queue.serve_one();
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
        Err(InternalError::Panicked { what: "the request", message: msg.unwrap_or_else(|| "unknown".into()) }.into())
    })
}

/// A promise of a method's answer: typed, so the generated TypeScript says what it
/// resolves to (`Promise<string | NativeFailure>`).
pub type Answer<'env> = PromiseRaw<'env, Either<String, NativeFailure>>;

/// `promise` with the type it resolves to, for the generated TypeScript.
pub(crate) fn typed<'env, T>(env: &'env Env, promise: Object<'env>) -> PromiseRaw<'env, T> {
    PromiseRaw::new(env.raw(), promise.raw())
}

/// Runs `work` on a thread of `class` in `client`'s turn; the promise resolves with its
/// result or failure.
pub fn run<'env>(
    env: &'env Env,
    class: Class,
    client: ClientKey,
    work: impl FnOnce() -> ChainResult<String> + Send + 'static,
) -> napi::Result<Answer<'env>> {
    let (reply, promise) = reply(env)?;
    let job = counted(class, move || {
        let out = outcome(guarded(work));
        Box::new(move || reply(out))
    });
    answered(env, promise, push(class, client, job))
}

/// As `run`, for work that may meet a forked chain's upstream (a call, an estimate): it runs
/// first without waiting for it (memory and the fork's cache only); when it would have to
/// wait, it runs again from the start on an `upstream` thread, so that a slow upstream holds
/// those threads and never `class`'s, where the warm work of every other client runs.
pub fn run_or_defer<'env>(
    env: &'env Env,
    class: Class,
    client: ClientKey,
    work: impl Fn() -> ChainResult<String> + Send + Sync + 'static,
) -> napi::Result<Answer<'env>> {
    let (reply, promise) = reply(env)?;
    let job = counted(class, move || {
        let first = guarded(|| preconf_chain::fork::without_waiting(&work));
        if !matches!(&first, Err(ChainError::Upstream(UpstreamError { failure: UpstreamFailure::WouldWait, .. }))) {
            let out = outcome(first);
            return Box::new(move || reply(out));
        }
        // The reply goes with the job; taken back if the upstream class refuses it.
        let reply = Arc::new(Mutex::new(Some(reply)));
        let taken = reply.clone();
        let again = counted(Class::Upstream, move || {
            let out = outcome(guarded(work));
            Box::new(move || {
                if let Some(r) = taken.lock().take() {
                    r(out)
                }
            })
        });
        match push(Class::Upstream, client, again) {
            Ok(()) => Box::new(|| {}),
            Err(message) => Box::new(move || {
                if let Some(r) = reply.lock().take() {
                    r(busy(message))
                }
            }),
        }
    });
    answered(env, promise, push(class, client, job))
}

/// Resolves a promise with an outcome, from any thread.
type Reply = Box<dyn FnOnce(Outcome) + Send>;

fn reply(env: &Env) -> napi::Result<(Reply, Object<'_>)> {
    let (deferred, promise) = env.create_deferred::<Outcome, _>()?;
    Ok((Box::new(move |out| deferred.resolve(move |_| Ok(out))), promise))
}

/// `work` as a job of `class`, counted in its metrics.
fn counted(class: Class, work: impl FnOnce() -> Deliver + Send + 'static) -> Job {
    let stats = class.stats();
    Box::new(move || {
        stats.queued.fetch_sub(1, Relaxed);
        stats.running.fetch_add(1, Relaxed);
        let deliver = work();
        stats.running.fetch_sub(1, Relaxed);
        stats.completed.fetch_add(1, Relaxed);
        deliver
    })
}

/// Queues `job` on `class`; when its queue (or the client's share of it) is full, the job is
/// dropped and the refusal's message returned.
fn push(class: Class, client: ClientKey, job: Job) -> Result<(), String> {
    let (pool, stats) = (class.pool(), class.stats());
    // Counted before sending: a thread may start the job before try_send returns.
    stats.queued.fetch_add(1, Relaxed);
    let Err((job, why)) = pool.queue.push(client, job, pool.capacity) else { return Ok(()) };
    stats.queued.fetch_sub(1, Relaxed);
    stats.rejected.fetch_add(1, Relaxed);
    drop(job);
    Err(match why {
        Refusal::Full => {
            format!("server busy: {} {} requests are already queued; retry later", pool.capacity, pool.name)
        }
        Refusal::ClientShare(share) => format!(
            "server busy: this client already has {share} {} requests queued or running (its share); retry later",
            pool.name
        ),
    })
}

fn busy(message: String) -> Outcome {
    Either::B(NativeFailure { kind: ErrorKind::Overloaded, message, data: None })
}

/// The promise of a queued job, or one already resolved with the refusal.
fn answered<'env>(env: &'env Env, promise: Object<'env>, queued: Result<(), String>) -> napi::Result<Answer<'env>> {
    match queued {
        Ok(()) => Ok(typed(env, promise)),
        Err(message) => {
            let (reply, promise) = reply(env)?;
            reply(busy(message));
            Ok(typed(env, promise))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    fn job(log: &Arc<Mutex<Vec<u32>>>, tag: u32) -> Job {
        let log = log.clone();
        Box::new(move || {
            log.lock().push(tag);
            Box::new(|| {})
        })
    }

    #[test]
    fn clients_take_turns_and_a_flood_keeps_a_thread_free() {
        let q = JobQueue::new(4, 1024);
        let log = Arc::new(Mutex::new(Vec::new()));
        for _ in 0..10 {
            assert!(q.push(Some(1), job(&log, 1), 1024).is_ok());
        }
        // Client 1 may run on three of the four threads.
        let held: Vec<_> = (0..3).map(|_| q.take()).collect();
        assert!(held.iter().all(|(c, _)| *c == Some(1)));
        assert!(q.next_in_turn(&mut q.turns.lock()).is_none(), "the fourth thread stays free");
        // A newcomer is served at once, before the flood's next job.
        assert!(q.push(Some(2), job(&log, 2), 1024).is_ok());
        let (client, run) = q.take();
        assert_eq!(client, Some(2));
        run()();
        q.done(client);
        assert_eq!(*log.lock(), vec![2]);
    }

    #[test]
    fn a_client_holds_at_most_its_share_of_the_queue() {
        let q = JobQueue::new(4, 16);
        let log = Arc::new(Mutex::new(Vec::new()));
        for _ in 0..4 {
            assert!(q.push(Some(7), job(&log, 7), 16).is_ok());
        }
        assert!(matches!(q.push(Some(7), job(&log, 7), 16), Err((_, Refusal::ClientShare(4)))));
        assert!(q.push(Some(8), job(&log, 8), 16).is_ok());
        // Unattributed work has no share.
        let n = AtomicUsize::new(0);
        for _ in 0..5 {
            if q.push(None, job(&log, 0), 16).is_ok() {
                n.fetch_add(1, Relaxed);
            }
        }
        assert_eq!(n.load(Relaxed), 5);
    }

    #[test]
    fn a_slot_is_free_before_the_client_hears_back() {
        // One job's share: the client's next request, sent when the answer arrives, must fit.
        let q = Arc::new(JobQueue::new(2, 4));
        let log = Arc::new(Mutex::new(Vec::new()));
        let next_fitted = Arc::new(Mutex::new(None));
        let (queue, fitted) = (q.clone(), next_fitted.clone());
        let first: Job = Box::new(move || {
            Box::new(move || {
                let next = Box::new(|| -> Deliver { Box::new(|| {}) });
                *fitted.lock() = Some(queue.push(Some(3), next, 4).is_ok());
            })
        });
        assert!(q.push(Some(3), first, 4).is_ok());
        assert!(matches!(q.push(Some(3), job(&log, 3), 4), Err((_, Refusal::ClientShare(1)))));
        q.serve_one();
        assert_eq!(*next_fitted.lock(), Some(true), "the answer went out while the slot was still taken");
    }

    #[test]
    fn a_panic_in_a_request_is_an_internal_error_with_its_message() {
        let e = guarded(|| panic!("boom")).unwrap_err();
        assert!(matches!(e, preconf_chain::ChainError::Internal(InternalError::Panicked { .. })), "{e:?}");
        assert_eq!(e.to_string(), "the request panicked: boom");
    }
}
