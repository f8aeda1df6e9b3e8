//! The committer: writes each sealed block to the store in one durable transaction on its
//! own thread, so that the builder's pre-confirmation clock never waits for the disk.
//!
//! At most one block is in flight. The builder hands it over once its state root and hash
//! are known, keeps publishing pre-confirmations of the next block on top of it (readers
//! see it through `StoreSnapshot`'s tip), and waits for the commit before sealing the next
//! block, whose state root reads the trie this commit writes. Only a durable block leaves
//! the transaction journal. The builder announces `Durable` once readers see the block
//! from the store; the replication publisher waits for it before streaming the block.

use std::sync::mpsc::{self, TryRecvError};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Instant;

use crate::chain_state::ChainState;
use crate::error::{ChainError, ChainResult};
use crate::replica::{Position, POSITION_KEY};
use crate::store::InFlightBlock;

/// A sealed block to commit, with a cluster leader's log position of it (stored with the
/// block, so that a restart reads the log on right after it).
type Job = (Arc<InFlightBlock>, Option<Position>);

pub(super) struct Committer {
    jobs: Option<mpsc::Sender<Job>>,
    done: mpsc::Receiver<ChainResult<u64>>,
    thread: Option<JoinHandle<()>>,
    in_flight: bool,
}

impl Committer {
    pub fn spawn(chain: Arc<ChainState>) -> ChainResult<Self> {
        let (jobs, job_rx) = mpsc::channel::<Job>();
        let (done_tx, done) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("preconf-committer".into())
            .spawn(move || {
                for (block, position) in job_rx {
                    let result = commit(&chain, &block, position.as_ref());
                    if done_tx.send(result).is_err() {
                        break;
                    }
                    // The builder sleeps on the pool's bell between ticks: land it now.
                    chain.pool_bell().ring();
                }
            })
            .map_err(ChainError::internal)?;
        Ok(Self { jobs: Some(jobs), done, thread: Some(thread), in_flight: false })
    }

    /// Starts committing `block`. The previous one must have landed (`wait`).
    pub fn submit(&mut self, block: Arc<InFlightBlock>, position: Option<Position>) -> ChainResult<()> {
        debug_assert!(!self.in_flight, "one block in flight at a time");
        let jobs = self.jobs.as_ref().ok_or_else(gone)?;
        jobs.send((block, position)).map_err(|_| gone())?;
        self.in_flight = true;
        Ok(())
    }

    /// The outcome of the block in flight if it has landed; `None` while it is still being
    /// written or when nothing is in flight.
    pub fn poll(&mut self) -> Option<ChainResult<u64>> {
        if !self.in_flight {
            return None;
        }
        match self.done.try_recv() {
            Ok(r) => {
                self.in_flight = false;
                Some(r)
            }
            Err(TryRecvError::Empty) => None,
            Err(TryRecvError::Disconnected) => {
                self.in_flight = false;
                Some(Err(gone()))
            }
        }
    }

    /// Waits for the block in flight, if any, and returns its outcome.
    pub fn wait(&mut self) -> Option<ChainResult<u64>> {
        if !self.in_flight {
            return None;
        }
        self.in_flight = false;
        Some(self.done.recv().unwrap_or_else(|_| Err(gone())))
    }
}

impl Drop for Committer {
    fn drop(&mut self) {
        // Closing the job channel ends the thread after the block it is writing.
        self.jobs.take();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn gone() -> ChainError {
    ChainError::Internal("the committer thread is gone".into())
}

fn commit(chain: &ChainState, block: &InFlightBlock, position: Option<&Position>) -> ChainResult<u64> {
    let started = Instant::now();
    match position {
        Some(p) => {
            // A cluster's journal is written without waiting; what came before this block
            // must be on disk with it (a restart reads the log on after its position).
            if let Some(journal) = &chain.journal() {
                journal.flush().map_err(|e| ChainError::Internal(format!("pool journal: {e}")))?;
            }
            chain.store().commit_block_with_meta(block.write(), &[(POSITION_KEY, &p.encode())], true)?
        }
        None => chain.store().commit_block(block.write())?,
    }
    if let Some(journal) = &chain.journal() {
        journal.forget(block.tx_hashes.iter());
    }
    chain.metrics().commit.observe(started.elapsed().as_secs_f64());
    Ok(block.number())
}
