//! A class's queue: each client's jobs taking turns, bounded in total and per client, and
//! the threads that serve it.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use parking_lot::{Condvar, Mutex};

use super::{Class, ClientKey};

/// Runs the work and hands back what delivers its answer: the worker frees the client's
/// slot in between, so a client that sends its next request as soon as it hears back
/// never finds its previous one still counted against its share.
pub(super) type Job = Box<dyn FnOnce() -> Deliver + Send>;
pub(super) type Deliver = Box<dyn FnOnce() + Send>;

/// A class's queue and its threads' shared state.
pub(super) struct WorkPool {
    pub(super) name: &'static str,
    pub(super) capacity: usize,
    pub(super) queue: Arc<JobQueue>,
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
pub(super) enum Refusal {
    /// The class's queue is full.
    Full,
    /// The client already holds its share of the class (queued and running).
    ClientShare(usize),
}

/// A bounded queue its threads sleep on. One job wakes one thread: a channel shared
/// behind a mutex woke two (the receiver, then the next thread waiting for the mutex),
/// each a context switch on the core the event loop needs.
pub(super) struct JobQueue {
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
    pub(super) fn push(&self, client: ClientKey, job: Job, capacity: usize) -> Result<(), (Job, Refusal)> {
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
    pub(super) fn start(class: Class) -> Self {
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

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
}
