//! The leader's side: turns chain events into stream messages, in order, so that the stream
//! is always a chain a replica can follow.
//!
//! Invariants of what it hands out (given `reset` told it what the stream holds):
//! - nothing about block N before sealed block N-1;
//! - sealed blocks one after the other, none twice (those the live queue lost come from the
//!   store, which keeps each block's change set on a leader);
//! - a pre-confirmation only right after its predecessor of the same run; otherwise the whole
//!   block being built is sent as one snapshot (`reset`), taken from the published view.
//!
//! The queue is bounded and never blocks the builder: when it is full it is emptied (counted
//! as dropped), and the gaps are filled as above when publishing resumes.

use std::collections::VecDeque;
use std::sync::Arc;

use alloy_primitives::B256;

use crate::chain_state::ChainState;
use crate::changes::StateChanges;
use crate::error::{ChainError, InternalError};
use crate::events::ChainEvent;
use crate::types::{BlockData, ExecutedTx};
use crate::wire::{self as codec, Kind, RewoundTo};

/// One message to publish.
#[derive(Clone, Debug)]
pub struct Publication {
    pub kind: Kind,
    pub number: u64,
    pub index: u64,
    /// Deduplication id (JetStream `Nats-Msg-Id`): equal only for the same message.
    pub id: String,
    pub data: Vec<u8>,
}

/// The newest sealed block a stream holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamMark {
    pub number: u64,
    pub hash: B256,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PublisherStats {
    /// Events waiting to be published.
    pub queued: u64,
    pub published: u64,
    /// Events thrown away because the queue was full.
    pub dropped: u64,
    /// Sealed blocks read back from the store (the live queue had lost them).
    pub republished: u64,
    /// Whole pending blocks sent because a pre-confirmation's predecessor was not in the stream.
    pub snapshots: u64,
    /// The newest sealed block handed out (the stream's, once published).
    pub sealed: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum PublishError {
    #[error(
        "the stream holds block {stream} but this node's newest block is {head}: another leader publishes to it, \
         or this datadir is older than the stream"
    )]
    StreamAhead { stream: u64, head: u64 },
    #[error(
        "the stream's block {number} is {stream_hash} but this node's is {ours}: the stream belongs to another chain"
    )]
    StreamDiverged { number: u64, stream_hash: B256, ours: B256 },
    #[error(
        "cannot republish block {0}: its state changes were not kept (it was sealed without --publish); \
         start replicas from a copy of this datadir instead"
    )]
    MissingChangeSet(u64),
    #[error(transparent)]
    Chain(#[from] ChainError),
}

enum Item {
    Pending {
        block: Arc<BlockData>,
        first: usize,
        unix_ms: u64,
        changes: Arc<StateChanges>,
        reset: bool,
    },
    Sealed {
        block: Arc<BlockData>,
        changes: Arc<StateChanges>,
        next: Option<Opened>,
    },
    /// The head went back to `to`; `tip` was the newest block taken off.
    Rewound {
        to: RewoundTo,
        tip: B256,
    },
}

struct Opened {
    block: Arc<BlockData>,
    unix_ms: u64,
    changes: Arc<StateChanges>,
}

impl Item {
    fn number(&self) -> u64 {
        match self {
            Item::Pending { block, .. } | Item::Sealed { block, .. } => block.header.number,
            Item::Rewound { to, .. } => to.number,
        }
    }

    /// The newest sealed block the stream must hold before this item.
    fn after(&self) -> u64 {
        match self {
            Item::Rewound { to, .. } => to.number,
            other => other.number().saturating_sub(1),
        }
    }
}

/// What the stream holds, as far as this publisher knows.
struct Stream {
    sealed: u64,
    /// (block, pre-confirmation index) of the newest pending message after `sealed`.
    pending: Option<(u64, u64)>,
}

pub struct Publisher {
    chain: Arc<ChainState>,
    /// This run of the leader (pre-confirmations of another run never follow these).
    build: u64,
    capacity: usize,
    queue: VecDeque<Item>,
    /// A sealed block waiting for the block opened after it (sent right behind it).
    held: Option<(Arc<BlockData>, Arc<StateChanges>)>,
    stream: Option<Stream>,
    /// The newest sealed block known to be durable: a block the live queue lost is read
    /// back from the store only once there. Live sealed blocks are streamed at once, before
    /// they are durable; a leader that crashed before its commit reads them back from the
    /// stream before it builds again (crates/replication/src/publish.rs).
    durable: u64,
    /// The newest block the last rewind published took off: a block sealed again after it
    /// (the same block rebuilt) must not share an id JetStream would drop as a duplicate.
    rewound_tip: Option<B256>,
    stats: PublisherStats,
}

impl Publisher {
    pub fn new(chain: Arc<ChainState>, build: u64, capacity: usize) -> Self {
        let durable = chain.store().head().ok().flatten().unwrap_or_default();
        Self {
            chain,
            build,
            capacity: capacity.max(1),
            queue: VecDeque::new(),
            held: None,
            stream: None,
            durable,
            rewound_tip: None,
            stats: PublisherStats::default(),
        }
    }

    pub fn stats(&self) -> PublisherStats {
        PublisherStats { queued: self.queue.len() as u64, ..self.stats }
    }

    /// Takes one chain event in; never blocks.
    pub fn on_event(&mut self, event: ChainEvent) {
        match event {
            ChainEvent::Preconfirmed { block, first_new, unix_ms, changes } => {
                self.flush_held();
                self.push(Item::Pending { block, first: first_new, unix_ms, changes, reset: false });
            }
            ChainEvent::Opened { block, unix_ms, changes } => {
                let opened = Opened { block, unix_ms, changes };
                match self.held.take() {
                    Some((sealed, sc)) if opened.block.header.number == sealed.header.number + 1 => {
                        self.push(Item::Sealed { block: sealed, changes: sc, next: Some(opened) });
                    }
                    held => {
                        if let Some((block, changes)) = held {
                            self.push(Item::Sealed { block, changes, next: None });
                        }
                        let Opened { block, unix_ms, changes } = opened;
                        self.push(Item::Pending { block, first: 0, unix_ms, changes, reset: true });
                    }
                }
            }
            ChainEvent::Sealed { block, changes } => {
                self.flush_held();
                // Driven by the Engine API, the next block opens only when op-node asks.
                if self.chain.config().preconf && !self.chain.engine_driven() {
                    // The builder opens the next block and announces it right after.
                    self.held = Some((block, changes));
                } else {
                    self.push(Item::Sealed { block, changes, next: None });
                }
            }
            ChainEvent::Durable { number } => self.durable = self.durable.max(number),
            ChainEvent::Rewound { removed } => self.rewound(&removed),
            ChainEvent::Pooled { .. } => {}
        }
    }

    /// op-node's forkchoice took `removed` off (engine/forkchoice.rs): what is queued about
    /// them is dropped, and the stream is told where the head went.
    fn rewound(&mut self, removed: &[Arc<BlockData>]) {
        let (Some(first), Some(last)) = (removed.first(), removed.last()) else { return };
        let to = RewoundTo { number: first.header.number.saturating_sub(1), hash: first.header.parent_hash };
        let tip = last.hash.unwrap_or_else(|| last.header.hash_slow());
        self.held = self.held.take().filter(|(b, _)| b.header.number <= to.number);
        self.queue.retain(|i| i.number() <= to.number);
        self.durable = self.durable.min(to.number);
        self.push(Item::Rewound { to, tip });
    }

    fn flush_held(&mut self) {
        if let Some((block, changes)) = self.held.take() {
            self.push(Item::Sealed { block, changes, next: None });
        }
    }

    fn push(&mut self, item: Item) {
        if self.queue.len() >= self.capacity {
            // A rewind cannot be read back from the store: it stays.
            let before = self.queue.len();
            self.queue.retain(|i| matches!(i, Item::Rewound { .. }));
            self.stats.dropped += (before - self.queue.len()) as u64;
        }
        self.queue.push_back(item);
    }

    /// Tells the publisher what the stream holds (after connecting, or when the stream was
    /// created anew): its newest sealed block, or `None` for an empty stream, which then
    /// starts at the oldest block this node can republish.
    pub fn reset(&mut self, mark: Option<StreamMark>) -> Result<(), PublishError> {
        let head = self.chain.view().head_number();
        let sealed = match mark {
            // From what the store holds: the newest sealed block may still be in flight.
            None => {
                let durable = self.chain.store().head()?.unwrap_or_default();
                self.chain.store().change_sets_from(durable)?.saturating_sub(1)
            }
            Some(m) if m.number > head => return Err(PublishError::StreamAhead { stream: m.number, head }),
            Some(m) => {
                let ours = self.chain.view().snapshot.block_hash(m.number)?.unwrap_or_default();
                if ours != m.hash {
                    return Err(PublishError::StreamDiverged { number: m.number, stream_hash: m.hash, ours });
                }
                m.number
            }
        };
        self.stream = Some(Stream { sealed, pending: None });
        self.stats.sealed = sealed;
        Ok(())
    }

    /// The next message to publish, or `None` when there is nothing (yet). The caller
    /// publishes it before asking for the next one: once handed out, it counts as published.
    pub fn next_publication(&mut self) -> Result<Option<Publication>, PublishError> {
        let out = self.produce()?;
        if out.is_some() {
            self.stats.published += 1;
        }
        Ok(out)
    }

    fn produce(&mut self) -> Result<Option<Publication>, PublishError> {
        loop {
            let Some(stream) = &self.stream else { return Ok(None) };
            let (sealed, stream_pending) = (stream.sealed, stream.pending);
            let Some(front) = self.queue.front() else { return Ok(None) };
            let number = front.number();
            if front.after() > sealed {
                // The stream lacks sealed blocks before this one: they come from the store.
                if sealed + 1 > self.durable {
                    return Ok(None); // resumes on the `Durable` event
                }
                let publication = self.republish(sealed + 1)?;
                self.stats.republished += 1;
                self.mark_sealed(sealed + 1, false);
                return Ok(Some(publication));
            }
            let item = self.queue.pop_front().expect("front exists");
            let stale = match &item {
                // Nothing after the block it goes back to is in the stream: nothing to undo.
                Item::Rewound { .. } => number == sealed && stream_pending.is_none(),
                _ => number <= sealed, // the stream already has this block sealed
            };
            if stale {
                continue;
            }
            if let Some(p) = self.publish_item(item) {
                return Ok(Some(p));
            }
        }
    }

    fn mark_sealed(&mut self, number: u64, opens_next: bool) {
        self.stats.sealed = number;
        if let Some(stream) = &mut self.stream {
            stream.sealed = number;
            stream.pending = opens_next.then_some((number + 1, 0));
        }
    }

    fn mark_pending(&mut self, number: u64, index: u64) {
        if let Some(stream) = &mut self.stream {
            stream.pending = Some((number, index));
        }
    }

    /// An item about the block right after the stream's newest sealed one.
    fn publish_item(&mut self, item: Item) -> Option<Publication> {
        let stream_pending = self.stream.as_ref().and_then(|s| s.pending);
        match item {
            Item::Rewound { to, tip } => {
                let id = format!("w.{}.{tip:x}", to.number);
                let data = codec::encode_rewound(to);
                self.mark_sealed(to.number, false);
                self.rewound_tip = Some(tip);
                Some(Publication { kind: Kind::Rewound, number: to.number, index: 0, id, data })
            }
            Item::Sealed { block, changes, next } => {
                let opened = next.as_ref().map(|o| (&*o.block, self.build, o.unix_ms, &*o.changes));
                let p = self.sealed_publication(&block, &changes, opened);
                self.mark_sealed(p.number, next.is_some());
                Some(p)
            }
            Item::Pending { block, first, unix_ms, changes, reset } => {
                let number = block.header.number;
                let index = block.preconf_index.unwrap_or_default();
                let p = match stream_pending {
                    _ if reset => self.pending_publication(&block, unix_ms, true, 0, &changes),
                    Some((n, i)) if n == number && i + 1 == index => {
                        self.pending_publication(&block, unix_ms, false, first, &changes)
                    }
                    Some((n, i)) if n == number && i >= index => return None, // a snapshot covered it
                    _ => self.snapshot(number)?,
                };
                self.mark_pending(p.number, p.index);
                Some(p)
            }
        }
    }

    fn pending_publication(
        &self,
        block: &BlockData,
        unix_ms: u64,
        reset: bool,
        first: usize,
        changes: &StateChanges,
    ) -> Publication {
        let number = block.header.number;
        let index = block.preconf_index.unwrap_or_default();
        let tag = if reset { 'r' } else { 'p' };
        Publication {
            kind: Kind::Pending,
            number,
            index,
            id: format!("{tag}.{number}.{index}.{:x}{}", self.build, self.after_rewind()),
            data: codec::encode_pending(block, self.build, unix_ms, reset, first, changes),
        }
    }

    fn sealed_publication(
        &self,
        block: &BlockData,
        changes: &StateChanges,
        next: Option<(&BlockData, u64, u64, &StateChanges)>,
    ) -> Publication {
        let number = block.header.number;
        let hash = block.hash.unwrap_or_else(|| block.header.hash_slow());
        // The same sealed block is the same message, live or read back from the store
        // (after a rewind, until a restart, the id names it: see `rewound_tip`).
        let id = format!("s.{number}.{hash:x}{}", self.after_rewind());
        Publication { kind: Kind::Sealed, number, index: 0, id, data: codec::encode_sealed(block, changes, next) }
    }

    /// What sets a message's id apart from one before the last rewind (about the same block
    /// number, maybe the same block rebuilt).
    fn after_rewind(&self) -> String {
        self.rewound_tip.map(|tip| format!(".{tip:x}")).unwrap_or_default()
    }

    /// The whole block being built, when the view is still at block `number`.
    fn snapshot(&mut self, number: u64) -> Option<Publication> {
        let view = self.chain.view();
        let pending = view.pending.as_ref()?;
        if pending.number() != number || view.head_number() + 1 != number {
            return None;
        }
        let mut changes = StateChanges::default();
        for layer in pending.overlay.layers() {
            changes.extend((**layer).clone());
        }
        self.stats.snapshots += 1;
        Some(self.pending_publication(&pending.block, super::unix_now_ms(), true, 0, &changes))
    }

    /// Sealed block `number` read back from the store.
    fn republish(&self, number: u64) -> Result<Publication, PublishError> {
        let view = self.chain.view();
        let snap = &view.snapshot;
        let missing = || ChainError::from(InternalError::MissingBlock(number));
        let header = snap.header(number)?.ok_or_else(missing)?;
        let hash = snap.block_hash(number)?.ok_or_else(missing)?;
        let body = snap.body(number)?.ok_or_else(missing)?;
        let receipts = snap.receipts(number)?.ok_or_else(missing)?;
        let txs = ExecutedTx::from_stored(&body.txs, &receipts.receipts)?;
        let changes = self.chain.store().change_set(number)?.ok_or(PublishError::MissingChangeSet(number))?;
        let block = BlockData {
            header,
            hash: Some(hash),
            txs: txs.into(),
            preconf_index: None,
            ommers: body.ommers,
            withdrawals: body.withdrawals,
            payload_id: None,
        };
        Ok(self.sealed_publication(&block, &changes, None))
    }
}
