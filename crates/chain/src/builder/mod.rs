//! The block builder: a thread that, every pre-confirmation interval, executes the pool's
//! executable transactions on top of the block being built and publishes a new immutable
//! view; every `block_time` it seals the block (roots, state root, hash), commits it to
//! the store in one transaction, and opens the next one.
//!
//! Inputs: the shared chain state (pool, store with its persisted trie, spec, config).
//! Outputs: published views, `ChainEvent`s, sealed blocks in the store. It owns its thread
//! and nothing owns it but its handle.

mod block;
mod seal;

use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use alloy_primitives::B256;

use crate::chain_state::ChainState;
use crate::error::{ChainError, ChainResult};
use crate::events::ChainEvent;
use crate::pool::BestTxs;
use crate::view::{ChainView, PendingBlock};
use block::{unix_now_ms, OpenBlock, Outcome};

pub struct BuilderHandle {
    stop: mpsc::Sender<()>,
    thread: Option<JoinHandle<()>>,
}

impl BuilderHandle {
    /// Stops the builder after its current step; it seals the open block if it holds
    /// transactions, so a clean shutdown leaves nothing only pre-confirmed.
    pub fn stop(mut self) {
        self.join();
    }

    fn join(&mut self) {
        let _ = self.stop.send(());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for BuilderHandle {
    fn drop(&mut self) {
        self.join();
    }
}

/// Starts the builder on its own thread; returns once the first block is open.
pub fn spawn(chain: Arc<ChainState>) -> ChainResult<BuilderHandle> {
    let (stop, stop_rx) = mpsc::channel();
    let (ready_tx, ready_rx) = mpsc::sync_channel(1);
    // revm's EVM is not Send: the builder is created on its own thread and stays there.
    let thread = std::thread::Builder::new()
        .name("preconf-builder".into())
        .spawn(move || match Builder::new(chain) {
            Ok(mut builder) => {
                let _ = ready_tx.send(Ok(()));
                builder.run(stop_rx);
            }
            Err(e) => {
                let _ = ready_tx.send(Err(e));
            }
        })
        .map_err(ChainError::internal)?;
    ready_rx.recv().map_err(ChainError::internal)??;
    Ok(BuilderHandle { stop, thread: Some(thread) })
}

struct Builder {
    chain: Arc<ChainState>,
    block: OpenBlock,
    /// The layers of the block being built, as published so far.
    published: Option<Arc<PendingBlock>>,
}

impl Builder {
    fn new(chain: Arc<ChainState>) -> ChainResult<Self> {
        let view = chain.view();
        let block = OpenBlock::open(&chain, &view)?;
        let mut b = Self { chain, block, published: None };
        let view = b.with_pending((*view).clone());
        b.chain.publish(view);
        b.announce_open();
        Ok(b)
    }

    fn run(&mut self, stop: mpsc::Receiver<()>) {
        let interval = Duration::from_millis(self.chain.config.preconf_interval_ms.max(1));
        let per_block = self.chain.config.preconfs_per_block();
        let mut next = Instant::now() + interval;
        loop {
            match stop.recv_timeout(next.saturating_duration_since(Instant::now())) {
                Ok(()) | Err(RecvTimeoutError::Disconnected) => break,
                Err(RecvTimeoutError::Timeout) => {}
            }
            next += interval;
            let now = Instant::now();
            if next < now {
                // Fell behind (a long seal): skip the missed ticks instead of bursting.
                next = now + interval;
            }
            self.preconfirm();
            if self.block.preconf_index >= per_block {
                if let Err(e) = self.seal() {
                    eprintln!("[preconf-node] builder stopped: cannot seal block {}: {e}", self.block.header.number);
                    self.chain.set_unhealthy(format!("builder stopped: {e}"));
                    return;
                }
            }
        }
        if !self.block.txs.is_empty() {
            if let Err(e) = self.seal() {
                eprintln!("[preconf-node] could not seal the open block at shutdown: {e}");
            }
        }
    }

    /// Executes what the pool has and publishes the next pre-confirmation.
    fn preconfirm(&mut self) {
        let tick = Instant::now();
        let base_fee = self.block.header.base_fee_per_gas.unwrap_or_default();
        // Copy the queues under the lock; nonces are read from state after releasing it.
        let queues = self.chain.pool.lock().snapshot();
        let block = &mut self.block;
        let mut candidates = BestTxs::new(queues, base_fee, |sender| block.nonce_of(sender));
        let mut included: Vec<B256> = Vec::new();
        let mut dropped: Vec<(B256, String)> = Vec::new();
        // Hold the cadence: whatever does not fit in three quarters of an interval waits
        // for the next pre-confirmation.
        let budget = Duration::from_millis(self.chain.config.preconf_interval_ms.max(1) * 3 / 4);
        let started = Instant::now();
        while let Some(ptx) = candidates.next() {
            if started.elapsed() > budget {
                break;
            }
            match self.block.execute(&ptx) {
                Outcome::Included => included.push(ptx.hash),
                Outcome::NoRoom => candidates.skip_sender(&ptx.sender),
                Outcome::Invalid(reason) => {
                    candidates.skip_sender(&ptx.sender);
                    dropped.push((ptx.hash, reason));
                }
            }
        }
        self.block.preconf_index += 1;
        let view = self.with_pending((*self.chain.view()).clone());
        {
            // Publish and take the included transactions out of the pool together: a
            // reader combining the two never sees a transaction in neither.
            let mut pool = self.chain.pool.lock();
            self.chain.publish(view);
            for h in &included {
                pool.remove(h);
            }
            for (h, reason) in &dropped {
                pool.drop_tx(h, reason.clone());
            }
        }
        if let Some(journal) = &self.chain.journal {
            journal.forget(dropped.iter().map(|(h, _)| h));
        }
        // Measured before the announcement, so whoever hears of it finds it counted.
        let metrics = &self.chain.metrics;
        metrics.preconf_txs.observe(included.len() as f64);
        metrics.preconf_tick.observe(tick.elapsed().as_secs_f64());
        self.announce_preconf();
    }

    /// `view` with the open block as its pending block: one more overlay layer holding
    /// what changed since the last pre-confirmation.
    fn with_pending(&mut self, mut view: ChainView) -> ChainView {
        if !self.chain.config.preconf {
            view.pending = None;
            return view;
        }
        let b = &mut self.block;
        let layer = Arc::new(std::mem::take(&mut b.tick));
        let header = b.current_header();
        let pending = Arc::new(match &self.published {
            Some(p) => p.next(header, &b.txs[p.block.txs.len()..], b.preconf_index, layer),
            None => PendingBlock::start(header, b.txs.clone(), b.preconf_index, layer),
        });
        self.published = Some(pending.clone());
        view.pending = Some(pending);
        view
    }

    /// Tells listeners about the block just opened (pre-confirmation 0).
    fn announce_open(&self) {
        let Some(p) = &self.published else { return };
        let changes = p.overlay.layers().last().cloned().unwrap_or_default();
        self.chain.events.send(ChainEvent::Opened { block: p.block.clone(), unix_ms: unix_now_ms(), changes });
    }

    /// Tells listeners about the pre-confirmation just published.
    fn announce_preconf(&mut self) {
        let Some(p) = &self.published else { return };
        let first_new = self.block.announced;
        self.block.announced = self.block.txs.len();
        let changes = p.overlay.layers().last().cloned().unwrap_or_default();
        self.chain.events.send(ChainEvent::Preconfirmed {
            block: p.block.clone(),
            first_new,
            unix_ms: unix_now_ms(),
            changes,
        });
    }
}
