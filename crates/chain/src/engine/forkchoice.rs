//! The canonical chain as op-node's forkchoice names it, on a node the Engine API drives.
//! newPayload keeps the blocks it executed here; a forkchoice update then
//!
//! - makes a kept block the head: written to the store (its state changes and trie diff,
//!   as import writes a block), shown as `latest`, announced as a sealed block;
//! - moves the head back to an earlier canonical block, or onto a kept sibling of one:
//!   the unsafe blocks after the common ancestor are taken out of the store first
//!   (store/unwind.rs), never below `finalized` (-38002), and announced as rewound (with
//!   their transactions and receipts: `logs` subscribers get their logs as removed) before
//!   the new head;
//! - names `safe` and `finalized` (the block tags follow them from then on).
//!
//! One forkchoice or write at a time (a mutex): op-node sends them one after another.
//!
//! A node whose builder runs (sequencer mode) moves its head itself with every block it
//! seals; a forkchoice that moves it elsewhere (a block op-node got from another sequencer,
//! derivation replacing unsafe blocks) has the builder stand aside while the head is
//! written as above (engine/sequence.rs), then the builder waits for op-node's next block.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use alloy_consensus::Header;
use alloy_primitives::B256;
use parking_lot::Mutex;
use preconf_op::OpConfig;

use super::new_payload::{assemble, execute, valid, KeptBlock, NewPayload, Verdict};
use super::sequence::Mailbox;
use super::types::{ForkchoiceState, PayloadStatus};
use crate::api::blocks::load_block;
use crate::chain_state::ChainState;
use crate::error::{ChainResult, EngineError, InternalError};
use crate::events::ChainEvent;
use crate::ledger::Record;
use crate::store::{META_FINALIZED, META_SAFE};
use crate::types::BlockData;
use crate::view::ChainView;
use crate::wire::{self as codec, Kind, Position, RewoundTo, POSITION_KEY};

/// Executed blocks kept for a forkchoice to pick (op-node sends the forkchoice right after
/// the payload; a few more cover a reorg's siblings).
const KEPT_BLOCKS: usize = 64;
/// Refused blocks remembered, so their descendants are refused without their parent.
const KEPT_INVALID: usize = 64;

#[derive(Default)]
pub struct Canonical {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    kept: HashMap<B256, Arc<KeptBlock>>,
    kept_order: VecDeque<B256>,
    /// Refused block -> (its latest valid ancestor, why).
    invalid: HashMap<B256, (Option<B256>, String)>,
    invalid_order: VecDeque<B256>,
    /// `safe` and `finalized` as the last forkchoice named them (numbers on the canonical chain).
    safe: Option<u64>,
    finalized: Option<u64>,
    /// The tags the store holds as last written by a forkchoice.
    written: Option<(u64, u64)>,
}

impl Inner {
    fn keep(&mut self, block: KeptBlock) {
        let hash = block.hash();
        if self.kept.insert(hash, Arc::new(block)).is_none() {
            self.kept_order.push_back(hash);
        }
        while self.kept_order.len() > KEPT_BLOCKS {
            if let Some(old) = self.kept_order.pop_front() {
                self.kept.remove(&old);
            }
        }
    }

    /// Where `state` puts the head on `view`'s chain; `None` when its block is not known.
    fn target(&self, view: &ChainView, state: &ForkchoiceState) -> ChainResult<Option<Target>> {
        if let Some(n) = view.snapshot.block_number(&state.head)? {
            if n <= view.head_number() {
                return Ok(Some(Target::Stored(n)));
            }
        }
        Ok(match self.kept.get(&state.head) {
            // Its parent must still be canonical (a rewind since may have dropped it).
            Some(k) if view.snapshot.block_hash(k.number().saturating_sub(1))? == Some(k.parent_hash()) => {
                Some(Target::Kept(k.clone()))
            }
            _ => None,
        })
    }

    fn refuse(&mut self, hash: B256, latest_valid: Option<B256>, reason: String) -> PayloadStatus {
        if self.invalid.insert(hash, (latest_valid, reason.clone())).is_none() {
            self.invalid_order.push_back(hash);
        }
        while self.invalid_order.len() > KEPT_INVALID {
            if let Some(old) = self.invalid_order.pop_front() {
                self.invalid.remove(&old);
            }
        }
        PayloadStatus::Invalid { latest_valid_hash: latest_valid, validation_error: reason }
    }
}

/// A canonical block's header by hash.
fn canonical(view: &ChainView, hash: &B256) -> ChainResult<Option<Header>> {
    match view.snapshot.block_number(hash)? {
        Some(n) if n <= view.head_number() => view.snapshot.header(n),
        _ => Ok(None),
    }
}

/// Where a forkchoice puts the head.
enum Target {
    /// A canonical block (the head itself, or an earlier one).
    Stored(u64),
    /// A kept block, on canonical block `number - 1`.
    Kept(Arc<KeptBlock>),
}

impl Target {
    /// The newest block of the current chain the new one keeps.
    fn base(&self) -> u64 {
        match self {
            Target::Stored(n) => *n,
            Target::Kept(k) => k.number().saturating_sub(1),
        }
    }
}

impl Canonical {
    /// engine_newPayload after its version checks.
    pub fn new_payload(&self, chain: &ChainState, op: &OpConfig, np: &NewPayload) -> ChainResult<PayloadStatus> {
        let (block, hash) = match assemble(op, np) {
            Ok(b) => b,
            Err(reason) => return Ok(PayloadStatus::Invalid { latest_valid_hash: None, validation_error: reason }),
        };
        if hash != np.payload.block_hash {
            let reason = format!("blockhash mismatch, want {:#x}, got {hash:#x}", np.payload.block_hash);
            return Ok(PayloadStatus::Invalid { latest_valid_hash: None, validation_error: reason });
        }
        let view = chain.view();
        let parent_hash = block.header.parent_hash;
        {
            let inner = self.inner.lock();
            // Known already (stored, or kept): op-node sends the block getPayload built.
            if inner.kept.contains_key(&hash) {
                return Ok(valid(hash));
            }
            if let Some((latest_valid, reason)) = inner.invalid.get(&hash) {
                let (latest_valid_hash, validation_error) = (*latest_valid, reason.clone());
                return Ok(PayloadStatus::Invalid { latest_valid_hash, validation_error });
            }
            if let Some((latest_valid, _)) = inner.invalid.get(&parent_hash) {
                let reason = format!("links to previously rejected block {parent_hash:#x}");
                return Ok(PayloadStatus::Invalid { latest_valid_hash: *latest_valid, validation_error: reason });
            }
        }
        if canonical(&view, &hash)?.is_some() {
            return Ok(valid(hash));
        }
        let Some(parent) = canonical(&view, &parent_hash)? else {
            let kept_parent = self.inner.lock().kept.contains_key(&parent_hash);
            return Ok(if kept_parent { PayloadStatus::Accepted } else { PayloadStatus::Syncing });
        };
        match execute(chain, op, &parent, block, hash)? {
            Verdict::Valid(kept) => {
                self.inner.lock().keep(kept);
                Ok(valid(hash))
            }
            Verdict::Invalid(reason) => Ok(self.inner.lock().refuse(hash, Some(parent_hash), reason)),
        }
    }

    /// Moves the head (and `safe`, `finalized`) where `state` says; the new head's header,
    /// or `None` when the head is not known (SYNCING). On a node with a builder of its own
    /// a head that is already the builder's is only looked up; any other move is written
    /// with the builder standing aside.
    pub fn forkchoice(
        &self,
        chain: &ChainState,
        builder: &Mailbox,
        state: &ForkchoiceState,
    ) -> ChainResult<Option<Header>> {
        let mut inner = self.inner.lock();
        let mut view = chain.view();
        let Some(mut target) = inner.target(&view, state)? else { return Ok(None) };
        // The builder's own blocks are already the head; any other move is written here
        // while it stands aside, on the chain as it is once its sealed blocks landed.
        let building = chain.config().build;
        let moves = matches!(target, Target::Kept(_)) || target.base() < view.head_number();
        let aside = match building && moves {
            true => Some(builder.stand_aside(chain.pool_bell())?),
            false => None,
        };
        if aside.is_some() {
            view = chain.view();
            target = match inner.target(&view, state)? {
                Some(t) => t,
                None => return Ok(None),
            };
        }
        let (safe, finalized) =
            (number_in(&view, &target, state, state.safe)?, number_in(&view, &target, state, state.finalized)?);
        let (safe, finalized) = match (safe, finalized) {
            (Some(Err(())), _) => return Err(EngineError::InvalidForkchoiceState("safe block not canonical").into()),
            (_, Some(Err(()))) => {
                return Err(EngineError::InvalidForkchoiceState("finalized block not canonical").into())
            }
            (s, f) => (s.map(|r| r.unwrap_or_default()), f.map(|r| r.unwrap_or_default())),
        };
        if let (Some(s), Some(f)) = (safe, finalized) {
            if f > s {
                return Err(EngineError::InvalidForkchoiceState("finalized block after the safe block").into());
            }
        }
        if building && aside.is_none() {
            return match target {
                Target::Stored(n) => view.snapshot.header(n),
                Target::Kept(k) => Ok(Some(k.write.header.clone())),
            };
        }
        let store = chain.store();
        let current = view.head_number();
        let base = target.base();
        let mut removed = Vec::new();
        if base < current {
            let finalized_now = inner.finalized.unwrap_or(0);
            if base < finalized_now {
                return Err(EngineError::InvalidForkchoiceState("the head would move below the finalized block").into());
            }
            if store.change_sets_from(current)? > base + 1 {
                return Err(EngineError::InvalidForkchoiceState(
                    "the unsafe chain can be rewound only over blocks the Engine API wrote",
                )
                .into());
            }
            // Read before they go: subscribers are sent their logs as removed.
            removed = (base + 1..=current)
                .map(|n| load_block(&view.snapshot, n)?.map(Arc::new).ok_or(InternalError::MissingBlock(n).into()))
                .collect::<ChainResult<_>>()?;
            let to = RewoundTo { number: base, hash: view.snapshot.block_hash(base)?.unwrap_or_default() };
            let position = record(chain, Kind::Rewound, base, || codec::encode_rewound(to))?;
            let at = position_meta(&position);
            let meta: Vec<(&str, &[u8])> = at.iter().map(|(key, value)| (*key, value.as_slice())).collect();
            store.unwind_to_with_meta(base, &meta)?;
        }
        let head_number = match &target {
            Target::Stored(n) => *n,
            Target::Kept(k) => k.number(),
        };
        if safe.is_some() {
            inner.safe = safe;
        }
        if finalized.is_some() {
            inner.finalized = finalized;
        }
        // The tags as the forkchoice names them, written with the block (writing a block
        // clears them) or alone when they changed.
        let tags = (inner.safe.is_some() || inner.finalized.is_some()).then(|| {
            let f = inner.finalized.unwrap_or(0).min(head_number);
            (inner.safe.unwrap_or(f).min(head_number).max(f), f)
        });
        // What a rewind needs of every block the Engine API writes (store/unwind.rs).
        store.keep_change_sets(true);
        let committed = match &target {
            Target::Kept(k) => {
                let position =
                    record(chain, Kind::Sealed, k.number(), || codec::encode_sealed(&k.data, &k.write.changes, None))?;
                let bytes = tags.map(|(s, f)| (s.to_be_bytes(), f.to_be_bytes()));
                let mut meta: Vec<(&str, &[u8])> = match &bytes {
                    Some((s, f)) => vec![(META_SAFE, s.as_slice()), (META_FINALIZED, f.as_slice())],
                    None => Vec::new(),
                };
                let at = position_meta(&position);
                meta.extend(at.iter().map(|(key, value)| (*key, value.as_slice())));
                store.commit_block_with_meta(k.write.write(), &meta, true)?;
                inner.kept.remove(&k.hash());
                Some(k.clone())
            }
            Target::Stored(_) => None,
        };
        let rewound = base < current;
        if let Some((s, f)) = tags {
            if committed.is_none() && (rewound || inner.written != tags) {
                store.set_fork_choice(s, f)?;
            }
        }
        inner.written = tags;
        let taken_off = removed.clone();
        let header = self.publish(chain, &view, head_number, committed, inner.finalized, removed)?;
        if let Some(aside) = aside {
            aside.resume(taken_off);
        }
        Ok(header)
    }

    /// Shows the chain as the store now holds it; announces the blocks a rewind took off,
    /// then the head that moved.
    fn publish(
        &self,
        chain: &ChainState,
        before: &ChainView,
        head_number: u64,
        committed: Option<Arc<KeptBlock>>,
        finalized: Option<u64>,
        removed: Vec<Arc<BlockData>>,
    ) -> ChainResult<Option<Header>> {
        let moved = !removed.is_empty() || committed.is_some();
        let snapshot = chain.store().snapshot()?;
        let head = match &committed {
            Some(k) => k.data.clone(),
            None => Arc::new(load_block(&snapshot, head_number)?.ok_or(InternalError::MissingBlock(head_number))?),
        };
        let header = head.header.clone();
        let view = ChainView {
            snapshot,
            head: head.clone(),
            pending: None,
            finalized: finalized.unwrap_or(before.finalized).min(head_number),
            codes: before.codes.clone(),
        };
        chain.publish_including(view, head.txs.iter().map(|t| t.hash()));
        if !removed.is_empty() {
            chain.events().send(ChainEvent::Rewound { removed });
        }
        if moved {
            let changes = committed.map(|k| k.write.changes.clone()).unwrap_or_default();
            chain.events().send(ChainEvent::Sealed { block: head, changes });
            chain.events().send(ChainEvent::Durable { number: head_number });
        }
        Ok(Some(header))
    }
}

/// A cluster's leader writes a move of its head to its ledger before anybody sees it, as
/// its builder does its own blocks: replicas, and the leader after it, take the same blocks
/// off and follow the same chain. The log position, when written.
fn record(
    chain: &ChainState,
    kind: Kind,
    number: u64,
    encode: impl FnOnce() -> Vec<u8>,
) -> ChainResult<Option<Position>> {
    let Some(ledger) = chain.ledger() else { return Ok(None) };
    match ledger.append(Record { kind, number, index: 0, data: encode() }) {
        Ok(seq) => Ok(Some(Position { stream: ledger.stream().to_string(), seq })),
        Err(_) => Err(EngineError::NotSequencing("this node no longer leads the cluster").into()),
    }
}

/// The stream position stored with the head it leads to.
fn position_meta(position: &Option<Position>) -> Vec<(&'static str, Vec<u8>)> {
    position.iter().map(|p| (POSITION_KEY, p.encode())).collect()
}

/// A safe or finalized hash as a block number on the chain the forkchoice makes: `None`
/// for the zero hash (not known yet), `Err` for a block not on that chain.
fn number_in(
    view: &ChainView,
    target: &Target,
    state: &ForkchoiceState,
    hash: B256,
) -> ChainResult<Option<Result<u64, ()>>> {
    if hash.is_zero() {
        return Ok(None);
    }
    if hash == state.head {
        return Ok(Some(Ok(match target {
            Target::Stored(n) => *n,
            Target::Kept(k) => k.number(),
        })));
    }
    Ok(Some(match view.snapshot.block_number(&hash)? {
        Some(n) if n <= target.base() => Ok(n),
        _ => Err(()),
    }))
}
