//! The committer: writes sealed blocks to the store in durable transactions on its own
//! thread, so that neither the builder's pre-confirmation clock nor a replica applying the
//! next pre-confirmations waits for the disk.
//!
//! The builder (or a replica's follower) hands each block over once its state root and hash
//! are known and goes on on top of it (readers see the blocks still being written as the
//! snapshot's tips). When the disk is slower than the block time, blocks queue up and the committer
//! writes all that are waiting in one transaction, with one fsync (reth's persistence
//! threshold): the durable watermark (`safe`, the journal's forgetting, the replica
//! publisher) then moves several blocks at once instead of falling further behind. The
//! builder waits only when `MAX_IN_FLIGHT` blocks are unwritten.
//!
//! A commit that cannot be written (too little free disk, an I/O error) is not dropped: the
//! committer reports a store fault (`ChainState::store_fault`: the builder stops sealing,
//! submissions are refused, /health says why) and tries the same blocks again until they
//! land; then the fault clears and the node goes on by itself.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, TryRecvError};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::chain_state::ChainState;
use crate::error::{Cause, ChainError, ChainResult, InternalError, StoreFault, WriteFault};
use crate::events::ChainEvent;
use crate::log;
use crate::store::{BlockWrite, InFlightBlock};
use crate::wire::{Position, POSITION_KEY};

/// Blocks sealed but not yet durable before the builder waits for the disk: a bound on
/// the memory they hold and on what a crash can take back (their transactions stay in the
/// journal until they are durable).
pub(crate) const MAX_IN_FLIGHT: usize = 16;
/// How often a commit that could not be written is tried again.
const RETRY: Duration = Duration::from_millis(500);

/// A sealed block to commit, with a cluster leader's log position of it (stored with the
/// block, so that a restart reads the log on right after it).
type Job = (Arc<InFlightBlock>, Option<Position>);

/// What one commit wrote: the newest block, and how many blocks the transaction held.
pub(crate) struct Landed {
    pub newest: u64,
    pub blocks: usize,
}

pub(crate) struct Committer {
    /// Set at shutdown: a commit that cannot be written is tried once more, not forever.
    stopping: Arc<AtomicBool>,
    jobs: Option<mpsc::Sender<Job>>,
    done: mpsc::Receiver<ChainResult<Landed>>,
    thread: Option<JoinHandle<()>>,
    /// Handed over and not landed yet, oldest first.
    in_flight: Vec<Arc<InFlightBlock>>,
}

impl Committer {
    /// `on_landed` runs on the committer thread after each commit: it wakes whoever polls.
    pub fn spawn(chain: Arc<ChainState>, on_landed: impl Fn() + Send + 'static) -> ChainResult<Self> {
        let (jobs, job_rx) = mpsc::channel::<Job>();
        let (done_tx, done) = mpsc::channel();
        let stopping = Arc::new(AtomicBool::new(false));
        let stop = stopping.clone();
        let thread = std::thread::Builder::new()
            .name("preconf-committer".into())
            .spawn(move || {
                while let Ok(first) = job_rx.recv() {
                    // Everything that queued up behind the first: one transaction.
                    let mut batch = vec![first];
                    while batch.len() < MAX_IN_FLIGHT {
                        match job_rx.try_recv() {
                            Ok(job) => batch.push(job),
                            Err(_) => break,
                        }
                    }
                    let result = commit_until_written(&chain, &batch, &stop);
                    if done_tx.send(result).is_err() {
                        break;
                    }
                    on_landed();
                }
            })
            .map_err(|e| InternalError::Spawn(Cause::new(e)))?;
        Ok(Self { stopping, jobs: Some(jobs), done, thread: Some(thread), in_flight: Vec::new() })
    }

    /// From now on a commit that fails is reported, not retried (shutdown).
    pub fn stop_retrying(&self) {
        self.stopping.store(true, Ordering::Relaxed);
    }

    /// The blocks handed over and not yet durable, oldest first.
    pub fn in_flight(&self) -> &[Arc<InFlightBlock>] {
        &self.in_flight
    }

    /// Whether the builder must wait for a commit before handing over another block.
    pub fn full(&self) -> bool {
        self.in_flight.len() >= MAX_IN_FLIGHT
    }

    /// Starts committing `block` (after those in flight).
    pub fn submit(&mut self, block: Arc<InFlightBlock>, position: Option<Position>) -> ChainResult<()> {
        let jobs = self.jobs.as_ref().ok_or_else(gone)?;
        jobs.send((block.clone(), position)).map_err(|_| gone())?;
        self.in_flight.push(block);
        Ok(())
    }

    /// The outcome of a commit that has landed, if one has; `None` while nothing landed.
    pub fn poll(&mut self) -> Option<ChainResult<Landed>> {
        if self.in_flight.is_empty() {
            return None;
        }
        match self.done.try_recv() {
            Ok(r) => Some(self.landed(r)),
            Err(TryRecvError::Empty) => None,
            Err(TryRecvError::Disconnected) => Some(self.landed(Err(gone()))),
        }
    }

    /// Waits for the next commit to land; `None` when nothing is in flight.
    pub fn wait(&mut self) -> Option<ChainResult<Landed>> {
        if self.in_flight.is_empty() {
            return None;
        }
        let r = self.done.recv().unwrap_or_else(|_| Err(gone()));
        Some(self.landed(r))
    }

    /// A commit landed: readers now read its blocks from the store (`safe` moves up to the
    /// newest), then listeners hear it is durable, in that order, so a replica never holds
    /// a block its leader would not call safe.
    pub fn show(&self, chain: &ChainState, landed: ChainResult<Landed>) -> ChainResult<()> {
        let Landed { newest, .. } = landed?;
        let snapshot = chain.store().snapshot_with_tips(self.in_flight.clone())?;
        chain.update_view(|view| view.snapshot = snapshot);
        chain.events().send(ChainEvent::Durable { number: newest });
        Ok(())
    }

    fn landed(&mut self, r: ChainResult<Landed>) -> ChainResult<Landed> {
        match &r {
            Ok(l) => self.in_flight.retain(|b| b.number() > l.newest),
            Err(_) => self.in_flight.clear(),
        }
        r
    }
}

impl Drop for Committer {
    fn drop(&mut self) {
        // Closing the job channel ends the thread after the blocks it is writing.
        self.stop_retrying();
        self.jobs.take();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn gone() -> ChainError {
    InternalError::ThreadGone("committer").into()
}

/// Commits `batch`, retrying while the store cannot write, with the fault reported.
fn commit_until_written(chain: &ChainState, batch: &[Job], stopping: &AtomicBool) -> ChainResult<Landed> {
    loop {
        match check_free_space(chain).and_then(|()| commit(chain, batch)) {
            Ok(landed) => {
                if let Some(was) = chain.set_store_fault(None) {
                    let fields = json!({ "after": was.to_string(), "blocks": landed.blocks, "newest": landed.newest });
                    log::info("store", "the store writes again: sealing resumes", fields);
                }
                return Ok(landed);
            }
            Err(e) => {
                let reason = WriteFault::from(e.clone());
                if chain.set_store_fault(Some(reason.clone())).is_none() {
                    let first = batch.first().map_or(0, |(b, _)| b.number());
                    log::error(
                        "store",
                        "cannot commit: sealing stopped, transactions refused until the store writes again",
                        json!({ "reason": reason.to_string(), "block": first, "blocks": batch.len() }),
                    );
                }
                if stopping.load(Ordering::Relaxed) || chain.closing() {
                    return Err(e);
                }
                std::thread::sleep(RETRY);
            }
        }
    }
}

/// `StoreFault` when the datadir's file system has less free space than
/// `--min-free-disk-mb`: the commit waits rather than filling the disk (redb refuses every
/// later write once one has failed, until the process restarts).
fn check_free_space(chain: &ChainState) -> ChainResult<()> {
    let (Some(dir), min) = (chain.config().datadir.as_deref(), chain.config().min_free_disk_bytes) else {
        return Ok(());
    };
    if min == 0 {
        return Ok(());
    }
    match free_bytes(dir) {
        Some(free) if free < min => {
            Err(StoreFault::DiskFull { free_mib: free >> 20, dir: dir.display().to_string(), min_mib: min >> 20 }
                .into())
        }
        _ => Ok(()),
    }
}

/// Bytes available to this process on the file system holding `dir`.
fn free_bytes(dir: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let path = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    let mut stat: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `path` is a valid C string and `stat` a writable statvfs the call fills in.
    let rc = unsafe { libc::statvfs(path.as_ptr(), &mut stat) };
    (rc == 0).then(|| stat.f_bavail as u64 * stat.f_frsize as u64)
}

fn commit(chain: &ChainState, batch: &[Job]) -> ChainResult<Landed> {
    let started = Instant::now();
    let writes: Vec<BlockWrite<'_>> = batch.iter().map(|(b, _)| b.write()).collect();
    // A cluster leader stores the log position of the newest block it commits.
    match batch.last().and_then(|(_, p)| p.as_ref()) {
        Some(p) => {
            // A cluster's journal is written without waiting; what came before these
            // blocks must be on disk with them (a restart reads the log on after them).
            if let Some(journal) = chain.journal() {
                journal.flush().map_err(|e| StoreFault::Journal(Cause::new(e)))?;
            }
            chain.store().commit_blocks(&writes, &[(POSITION_KEY, &p.encode())], true)?
        }
        None => chain.store().commit_blocks(&writes, &[], true)?,
    }
    if let Some(journal) = chain.journal() {
        journal.forget(batch.iter().flat_map(|(b, _)| b.tx_hashes.iter()));
    }
    chain.metrics().commit.observe(started.elapsed().as_secs_f64());
    chain.metrics().commit_blocks.observe(batch.len() as f64);
    let newest = batch.last().map_or(0, |(b, _)| b.number());
    Ok(Landed { newest, blocks: batch.len() })
}
