//! The chain's shared state: what the builder (the only writer) and the read side are
//! both given. A leaf: it knows nothing of either, and owns no thread.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use alloy_primitives::{Address, B256};
use arc_swap::ArcSwap;
use parking_lot::{Mutex, RwLock};

use crate::config::ChainConfig;
use crate::doorbell::Doorbell;
use crate::error::{ChainError, DropReason, Fault, WriteFault};
use crate::events::EventBus;
use crate::followed::{FollowedBlock, FollowedBlocks};
use crate::ledger::Ledger;
use crate::metrics::ChainMetrics;
use crate::pool::{journal::Journal, Added, Pool, PooledTx};
use crate::spec::ChainSpec;
use crate::store::Store;
use crate::view::ChainView;

/// Why a cluster's node is not ready to serve right after it starts.
pub const STARTING: &str = "starting: catching up with the stream";

pub struct ChainState {
    spec: Arc<ChainSpec>,
    config: ChainConfig,
    store: Arc<Store>,
    view: ArcSwap<ChainView>,
    /// Transactions waiting to be executed. The pool and the published view change
    /// together only through `publish_including` (under this lock), and readers that combine
    /// the two (`with_pool`) take it before loading the view, so no read sees a transaction
    /// gone from the pool but not yet in the view.
    pool: Mutex<Pool>,
    /// Durable record of accepted transactions (`None` with an in-memory store).
    journal: Option<Journal>,
    /// Rung when the pool gains a transaction: whoever executes the pool (the builder)
    /// sleeps on it between ticks instead of polling.
    pool_bell: Arc<Doorbell>,
    events: EventBus,
    /// The builder's tick and seal measurements (read at scrape time).
    metrics: ChainMetrics,
    unhealthy: Mutex<Option<Fault>>,
    /// Why the store cannot write right now (disk full, I/O error): no sealing, no new
    /// transactions, until a commit lands again.
    store_fault: Mutex<Option<WriteFault>>,
    /// Why replication (publishing to or following a stream) is degraded, if it is.
    replication: Mutex<Option<String>>,
    /// A clustered node's ledger while it leads: submissions and the builder write to it
    /// before anything is shown. `None` on a follower (which forwards transactions).
    ledger: RwLock<Option<Arc<dyn Ledger>>>,
    /// Set once the node shuts down: a commit that cannot be written is given up, not
    /// retried until the disk has room.
    closing: AtomicBool,
    /// The fee recipient of the block the builder has open, shown or not (`None` until it
    /// opens one, and on a node without a builder).
    next_coinbase: RwLock<Option<Address>>,
    /// A flashblocks follower's inbox, while one runs: newPayload asks it for the block it
    /// followed before executing the payload again.
    follower: RwLock<Option<Arc<dyn FollowedBlocks>>>,
}

impl ChainState {
    pub(crate) fn new(
        spec: Arc<ChainSpec>,
        config: ChainConfig,
        store: Arc<Store>,
        view: ChainView,
        pool: Pool,
        journal: Option<Journal>,
    ) -> Self {
        let starting = (config.cluster || config.publish).then(|| STARTING.to_string());
        Self {
            spec,
            config,
            store,
            view: ArcSwap::from_pointee(view),
            pool: Mutex::new(pool),
            journal,
            pool_bell: Arc::default(),
            events: EventBus::default(),
            metrics: ChainMetrics::default(),
            unhealthy: Mutex::new(None),
            store_fault: Mutex::new(None),
            closing: AtomicBool::new(false),
            // A cluster's node shows nothing until it caught up with the stream: before it
            // read the stream, its pending block could be older than one a client saw.
            replication: Mutex::new(starting),
            ledger: RwLock::new(None),
            next_coinbase: RwLock::new(None),
            follower: RwLock::new(None),
        }
    }

    pub(crate) fn set_follower(&self, follower: Option<Arc<dyn FollowedBlocks>>) {
        *self.follower.write() = follower;
    }

    /// The block a flashblocks follower executed on `parent`, if it is block `hash` (the
    /// header it computed, state root included, hashes to it): newPayload stores it without
    /// executing it again. `None` when no follower runs or it followed another block.
    pub fn followed_block(&self, parent: B256, hash: B256) -> Option<FollowedBlock> {
        let follower = self.follower.read().clone()?;
        follower.take(parent, hash)
    }

    /// The ledger this node leads with, if it leads a cluster.
    pub(crate) fn ledger(&self) -> Option<Arc<dyn Ledger>> {
        self.ledger.read().clone()
    }

    /// Starts (`Some`) or ends (`None`) leading with a ledger.
    pub(crate) fn set_ledger(&self, ledger: Option<Arc<dyn Ledger>>) {
        *self.ledger.write() = ledger;
    }

    /// The current view; cheap (an atomic load), held for the length of one request.
    pub fn view(&self) -> Arc<ChainView> {
        self.view.load_full()
    }

    /// Publishes a new view that changes nothing the pool holds (a landed commit, a
    /// replica's new pending block without transactions).
    pub fn publish(&self, view: ChainView) {
        self.view.store(Arc::new(view));
    }

    /// Publishes `view`, which includes `included`, and takes those transactions out of the
    /// pool in the same step: a reader combining pool and view never sees a transaction in
    /// neither (a pre-confirmation, a seal, a replica applying either).
    pub(crate) fn publish_including(&self, view: ChainView, included: impl IntoIterator<Item = B256>) {
        let mut pool = self.pool.lock();
        self.view.store(Arc::new(view));
        for h in included {
            pool.remove(&h);
        }
    }

    /// Publishes the current view changed by `change`, under the pool lock that every
    /// writer of a new pending block holds (`publish_including`, `publish_on_head`): a
    /// landed commit must not put back a pending block replaced in the meantime.
    pub(crate) fn update_view(&self, change: impl FnOnce(&mut ChainView)) {
        let _pool = self.pool.lock();
        let mut view = (*self.view()).clone();
        change(&mut view);
        self.view.store(Arc::new(view));
    }

    /// `publish_including`, only while the head is still `head`: a writer of the pending
    /// block only (a flashblocks follower) beside the one that moves the head must not put
    /// an older head back. Whether it published.
    pub(crate) fn publish_on_head(
        &self,
        head: B256,
        view: ChainView,
        included: impl IntoIterator<Item = B256>,
    ) -> bool {
        let mut pool = self.pool.lock();
        if self.view.load().head_hash() != head {
            return false;
        }
        self.view.store(Arc::new(view));
        for h in included {
            pool.remove(&h);
        }
        true
    }

    /// Admits a validated transaction to the pool and rings the bell: the one way in, so no
    /// arrival leaves the builder asleep until its next tick.
    pub(crate) fn add_to_pool(&self, tx: PooledTx, state_nonce: u64) -> Result<Added, ChainError> {
        let added = self.pool.lock().add(tx, state_nonce)?;
        self.pool_bell.ring();
        Ok(added)
    }

    /// Whether the pool would take `tx` (nothing changes).
    pub(crate) fn pool_accepts(&self, tx: &PooledTx, state_nonce: u64) -> Result<(), ChainError> {
        self.pool.lock().check(tx, state_nonce)
    }

    /// Drops transactions that can never execute as they are (or that a test method
    /// dropped), with the reason, from the pool and its journal; those that were pooled.
    pub(crate) fn drop_from_pool(&self, dropped: &[(B256, DropReason)]) -> Vec<B256> {
        let mut pool = self.pool.lock();
        let removed = dropped.iter().filter(|(h, reason)| pool.drop_tx(h, reason.clone()).is_some()).map(|(h, _)| *h);
        let removed = removed.collect();
        drop(pool);
        if let Some(journal) = &self.journal {
            journal.forget(dropped.iter().map(|(h, _)| h));
        }
        removed
    }

    /// Publishes `view` and empties the pool in the same step, each transaction dropped
    /// with `reason`, also from the journal (`evm_revert`, `anvil_reset`: what the pool held
    /// was sent against a state that is gone). The hashes dropped.
    pub(crate) fn publish_emptying_pool(&self, view: ChainView, reason: DropReason) -> Vec<B256> {
        let mut pool = self.pool.lock();
        let hashes: Vec<B256> = pool.snapshot().into_iter().flat_map(|(_, q)| q.into_iter().map(|t| t.hash)).collect();
        for h in &hashes {
            pool.drop_tx(h, reason.clone());
        }
        self.view.store(Arc::new(view));
        drop(pool);
        if let Some(journal) = &self.journal {
            journal.forget(hashes.iter());
        }
        hashes
    }

    /// Reads the pool, and the view it is consistent with (see `pool`). Keep `read` short:
    /// the builder waits for it.
    pub(crate) fn with_pool<R>(&self, read: impl FnOnce(&Pool) -> R) -> (R, Arc<ChainView>) {
        let pool = self.pool.lock();
        let view = self.view();
        (read(&pool), view)
    }

    /// Reads the pool alone (the builder, choosing what to execute).
    pub(crate) fn read_pool<R>(&self, read: impl FnOnce(&Pool) -> R) -> R {
        read(&self.pool.lock())
    }

    pub fn spec(&self) -> &Arc<ChainSpec> {
        &self.spec
    }

    pub fn config(&self) -> &ChainConfig {
        &self.config
    }

    pub fn store(&self) -> &Arc<Store> {
        &self.store
    }

    /// The pool journal, on a node with a datadir.
    pub fn journal(&self) -> Option<&Journal> {
        self.journal.as_ref()
    }

    /// What the builder sleeps on between ticks.
    /// Whether blocks come only from the Engine API (`--authrpc.*` on an OP chain): the
    /// builder then seals nothing on its own clock.
    pub fn engine_driven(&self) -> bool {
        self.config.engine_driven && self.spec.op().is_some()
    }

    pub(crate) fn pool_bell(&self) -> &Arc<Doorbell> {
        &self.pool_bell
    }

    pub fn events(&self) -> &EventBus {
        &self.events
    }

    pub fn metrics(&self) -> &ChainMetrics {
        &self.metrics
    }

    pub fn chain_id(&self) -> u64 {
        self.spec.chain_id()
    }

    /// Fee recipient of built blocks, unless the test methods set another.
    pub fn coinbase(&self) -> Address {
        Address::ZERO
    }

    /// The fee recipient of the block being built (eth_coinbase where no pending block is
    /// shown).
    pub(crate) fn next_coinbase(&self) -> Address {
        self.next_coinbase.read().unwrap_or_else(|| self.coinbase())
    }

    /// The builder opened a block crediting `coinbase`.
    pub(crate) fn set_next_coinbase(&self, coinbase: Address) {
        *self.next_coinbase.write() = Some(coinbase);
    }

    pub(crate) fn set_unhealthy(&self, fault: Fault) {
        *self.unhealthy.lock() = Some(fault);
    }

    /// Replication's own state: `None` once it is healthy again.
    pub fn set_replication_health(&self, reason: Option<String>) {
        *self.replication.lock() = reason;
    }

    /// Why the node itself is broken (its builder or its follower stopped), replication's
    /// own state aside: such a node must not lead.
    pub fn fault(&self) -> Option<Fault> {
        self.unhealthy.lock().clone()
    }

    /// Sets or clears the store fault; returns the one it replaces.
    pub(crate) fn set_store_fault(&self, reason: Option<WriteFault>) -> Option<WriteFault> {
        std::mem::replace(&mut *self.store_fault.lock(), reason)
    }

    pub fn begin_closing(&self) {
        self.closing.store(true, Ordering::Relaxed);
    }

    pub(crate) fn closing(&self) -> bool {
        self.closing.load(Ordering::Relaxed)
    }

    /// Why the store cannot write, while it cannot.
    pub fn store_fault(&self) -> Option<WriteFault> {
        self.store_fault.lock().clone()
    }

    /// `None` while healthy, or why the node is degraded.
    pub fn health(&self) -> Option<String> {
        let reasons: Vec<String> = [
            self.unhealthy.lock().as_ref().map(|f| f.to_string()),
            self.store_fault().map(|f| f.to_string()),
            self.replication.lock().clone(),
        ]
        .into_iter()
        .flatten()
        .collect();
        (!reasons.is_empty()).then(|| reasons.join("; "))
    }
}
