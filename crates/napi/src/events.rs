//! Chain events delivered to JavaScript. One renderer thread per node turns each typed
//! `ChainEvent` into the payloads someone listens to (once per event, not per
//! subscription) and hands them to every event loop serving the node.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::mpsc::Receiver;
use std::sync::Arc;

use crate::NativeNode;
use napi::bindgen_prelude::FnArgs;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::Status;
use napi_derive::napi;
use parking_lot::{Mutex, RwLock};
use preconf_chain::chain_state::ChainState;
use preconf_chain::events::{ChainEvent, PoolInterest};
use preconf_rpc::render::events as render;
use preconf_rpc::render::flashblocks::FlashblocksV1;

/// What the node reports to JavaScript, one payload (JSON text) each.
#[napi(string_enum = "camelCase")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventKind {
    /// `{"number","index","txHashes"}` per pre-confirmation (always sent).
    Preconf,
    /// `{"number","hash","txHashes"}` per sealed block (always sent).
    Head,
    /// The block being built, per pre-confirmation (`newFlashblocks`).
    Flashblock,
    /// A pre-confirmed transaction with its logs (`newFlashblockTransactions`, full).
    FlashblockTx,
    /// The logs of a pre-confirmation's transactions, as one list (`pendingLogs`).
    PendingLogs,
    /// A sealed block's header (`newHeads`).
    NewHead,
    /// The logs of a sealed block, as one list (`logs`); on a rewind, those of the blocks
    /// taken off, with `removed: true`, before the new head's.
    Logs,
    /// The hash of a transaction accepted into the pool (`newPendingTransactions`).
    Pooled,
    /// The block being built as `FlashblocksPayloadV1`: index 0 when it opens, then one
    /// per pre-confirmation (the `--flashblocks.port` endpoint).
    FlashblocksV1,
}

impl EventKind {
    fn bit(self) -> u32 {
        1 << (self as u32)
    }
}

/// Called as `(kind, payload)`; weak, so a queued event never keeps the process alive.
#[napi]
pub type EventCallback =
    ThreadsafeFunction<FnArgs<(EventKind, String)>, (), FnArgs<(EventKind, String)>, Status, false, true>;

/// One JavaScript event loop's receiver and what it wants rendered.
#[derive(Default, Clone)]
pub struct EventHub {
    callback: Arc<Mutex<Option<Arc<EventCallback>>>>,
    interest: Arc<AtomicU32>,
}

impl EventHub {
    pub fn set(&self, callback: EventCallback) {
        *self.callback.lock() = Some(Arc::new(callback));
    }

    pub fn clear(&self) {
        self.callback.lock().take();
    }

    fn set_interest(&self, kinds: &[EventKind]) {
        self.interest.store(kinds.iter().fold(0, |m, k| m | k.bit()), Ordering::Relaxed);
    }

    fn emit(&self, kind: EventKind, payload: String) {
        let cb = self.callback.lock().clone();
        if let Some(cb) = cb {
            cb.call((kind, payload).into(), ThreadsafeFunctionCallMode::NonBlocking);
        }
    }
}

fn any_wants(hubs: &[EventHub], kind: EventKind) -> bool {
    matches!(kind, EventKind::Preconf | EventKind::Head)
        || hubs.iter().any(|h| h.interest.load(Ordering::Relaxed) & kind.bit() != 0)
}

/// Every event loop serving one node.
pub struct Fanout {
    hubs: RwLock<Vec<EventHub>>,
    /// On while some event loop wants `Pooled`: the chain sends none otherwise.
    pooled: PoolInterest,
    /// Logs counted so far in the block being built, and its transaction hashes rendered so
    /// far (only the renderer thread uses them).
    logs: Mutex<render::LogCursor>,
    flashblocks: Mutex<render::FlashblockCursor>,
    /// The `FlashblocksPayloadV1` stream and its state roots (renderer thread only).
    flashblocks_v1: Mutex<FlashblocksV1>,
    /// Whether the stream computes a state root (and so a block hash) per message.
    pub v1_roots: std::sync::atomic::AtomicBool,
}

impl Fanout {
    pub fn new(pooled: PoolInterest, chain: Arc<ChainState>) -> Self {
        Self {
            hubs: RwLock::default(),
            pooled,
            logs: Mutex::default(),
            flashblocks: Mutex::default(),
            flashblocks_v1: Mutex::new(FlashblocksV1::new(chain)),
            v1_roots: std::sync::atomic::AtomicBool::new(true),
        }
    }

    pub fn add(&self, hub: EventHub) {
        self.hubs.write().push(hub);
    }

    pub fn remove(&self, hub: &EventHub) {
        let mut hubs = self.hubs.write();
        hubs.retain(|h| !Arc::ptr_eq(&h.interest, &hub.interest));
        self.pooled.set(any_wants(&hubs, EventKind::Pooled));
    }

    /// What `hub`'s event loop wants rendered from now on.
    pub fn set_interest(&self, hub: &EventHub, kinds: &[EventKind]) {
        // Under the write lock, so two loops changing their interest at once cannot leave
        // the chain's switch at the older answer.
        let hubs = self.hubs.write();
        hub.set_interest(kinds);
        self.pooled.set(any_wants(&hubs, EventKind::Pooled));
    }

    fn wants(&self, kind: EventKind) -> bool {
        any_wants(&self.hubs.read(), kind)
    }

    fn emit(&self, kind: EventKind, payload: String) {
        let hubs = self.hubs.read();
        if let Some((last, rest)) = hubs.split_last() {
            for h in rest {
                h.emit(kind, payload.clone());
            }
            last.emit(kind, payload);
        }
    }

    /// Renders and delivers events until the node's event bus goes away.
    pub fn run(self: Arc<Self>, events: Receiver<ChainEvent>) {
        for event in events {
            self.deliver(&event);
        }
    }

    fn deliver(&self, event: &ChainEvent) {
        match event {
            ChainEvent::Preconfirmed { block, first_new, unix_ms, changes } => {
                self.emit(EventKind::Preconf, render::preconf_summary(block, *first_new));
                if self.wants(EventKind::FlashblocksV1) {
                    let with_roots = self.v1_roots.load(Ordering::Relaxed);
                    if let Some(payload) = self.flashblocks_v1.lock().preconfirmed(block, changes, with_roots) {
                        self.emit(EventKind::FlashblocksV1, payload);
                    }
                }
                if self.wants(EventKind::Flashblock) {
                    let payload = self.flashblocks.lock().flashblock(block, *unix_ms);
                    self.emit(EventKind::Flashblock, payload);
                }
                let (txs, logs) = (self.wants(EventKind::FlashblockTx), self.wants(EventKind::PendingLogs));
                let first_log = if txs || logs { self.logs.lock().first_log(block, *first_new) } else { 0 };
                if txs {
                    for tx in render::flashblock_txs(block, *first_new, first_log) {
                        self.emit(EventKind::FlashblockTx, tx);
                    }
                }
                if logs {
                    if let Some(logs) = render::logs(block, *first_new, first_log) {
                        self.emit(EventKind::PendingLogs, logs);
                    }
                }
            }
            ChainEvent::Sealed { block, .. } => {
                self.emit(EventKind::Head, render::head_summary(block));
                if self.wants(EventKind::FlashblocksV1) {
                    if let Some(payload) = self.flashblocks_v1.lock().stream.sealed(block) {
                        self.emit(EventKind::FlashblocksV1, payload);
                    }
                }
                if self.wants(EventKind::NewHead) {
                    self.emit(EventKind::NewHead, render::new_head(block));
                }
                if self.wants(EventKind::Logs) {
                    if let Some(logs) = render::logs(block, 0, 0) {
                        self.emit(EventKind::Logs, logs);
                    }
                }
            }
            // Geth's order on a reorg: the old chain's logs as removed, then the new head's
            // (its `Sealed` comes next).
            ChainEvent::Rewound { removed } => {
                if self.wants(EventKind::Logs) {
                    if let Some(logs) = render::removed_logs(removed) {
                        self.emit(EventKind::Logs, logs);
                    }
                }
            }
            // Pollers see the block just opened; subscriptions announce pre-confirmations,
            // the flashblocks stream its index 0.
            ChainEvent::Opened { block, changes, .. } => {
                if self.wants(EventKind::FlashblocksV1) {
                    let with_roots = self.v1_roots.load(Ordering::Relaxed);
                    let payload = self.flashblocks_v1.lock().opened(block, changes, with_roots);
                    self.emit(EventKind::FlashblocksV1, payload);
                }
            }
            ChainEvent::Durable { .. } => {}
            ChainEvent::Pooled { hash } => {
                if self.wants(EventKind::Pooled) {
                    self.emit(EventKind::Pooled, format!("\"{hash:#x}\""));
                }
            }
        }
    }
}

#[napi]
impl NativeNode {
    /// Whether the `flashblocksV1` messages carry a state root and block hash per
    /// pre-confirmation (on unless `--flashblocks.disable-state-root`).
    #[napi]
    pub fn set_flashblocks_state_root(&self, on: bool) {
        self.fanout.v1_roots.store(on, Ordering::Relaxed);
    }
}
