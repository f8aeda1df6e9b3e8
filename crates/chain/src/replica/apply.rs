//! The replica's side: applies stream messages to its own store and pending view, in stream
//! order, and publishes views and chain events exactly as the leader's builder did.
//!
//! A sealed block is checked before it is written: its number and parent follow this
//! replica's head, and its hash, transactions root, receipts root, bloom, gas, ommers and
//! withdrawals roots, and its state root — computed from its change set over this replica's
//! own trie — match its header. A mismatch stops the replica for good (it keeps serving what
//! it has, and reports why). A block that passes is shown at once and written by the
//! committer thread (commit.rs, as the builder's blocks are), so the pre-confirmations after
//! it do not wait for the disk; the stream position is written in the same transaction as
//! the newest block of each commit, and `safe` moves when the commit lands.

mod rewind;

use std::sync::Arc;
use std::time::Instant;

use alloy_primitives::{Bytes, B256};

use super::verify::{check, verify_block, Refused};
use crate::api::submit::Submission;
use crate::chain_state::ChainState;
use crate::changes::StateChanges;
use crate::commit::{Committer, Landed};
use crate::error::{Cause, ChainError, ChainResult, Fault};
use crate::events::ChainEvent;
use crate::store::{trie, InFlightBlock, StoreSnapshot, StoredBody, StoredReceipts};
use crate::types::{BlockData, ExecutedTx};
use crate::view::{ChainView, PendingBlock};
use crate::warm::WarmTrie;
use crate::wire::{self as codec, Message, PendingUpdate, Position, SealedBlock, TermStart, POSITION_KEY};

/// What applying one message did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Applied {
    Sealed {
        number: u64,
    },
    Pending {
        number: u64,
        index: u64,
    },
    /// Transactions a clustered leader accepted: `admitted` of them entered this node's pool
    /// (the others were pooled already, or included since).
    Txs {
        admitted: usize,
    },
    /// A clustered leader's term starts here.
    Term(TermStart),
    /// The leader's head moved back to block `number`; `removed` blocks were taken off.
    Rewound {
        number: u64,
        removed: usize,
    },
    /// Already applied (redelivered, or replayed from before the head): nothing changed.
    Duplicate,
    /// A pre-confirmation that does not follow this replica's pending block (its predecessor
    /// was never published, or belongs to another run of the leader): the sealed block, or
    /// the next snapshot, brings the state instead.
    Skipped(Skip),
}

/// Why a pre-confirmation was not applied.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Skip {
    #[error("pre-confirmations are off on this node")]
    PreconfsOff,
    #[error("block {number} does not follow head {head}")]
    NotNextBlock { number: u64, head: u64 },
    #[error("pre-confirmation {number}.{index} does not follow this replica's pending block")]
    NotNextPreconf { number: u64, index: u64 },
}

/// The blocks a replica applied could not be stored: it stops (nothing may follow them).
#[derive(Debug, thiserror::Error)]
#[error("the blocks applied could not be stored: {0}")]
struct NotStored(ChainError);

#[derive(Clone, Debug, thiserror::Error)]
pub enum ApplyError {
    /// The message is not the one after the last applied: re-read from `expected`.
    #[error("stream gap: expected message {expected}, got {got}")]
    Gap { expected: u64, got: u64 },
    /// Fatal: the replica stopped and serves what it has.
    #[error("replica stopped at stream message {seq}: {reason}")]
    Stopped { seq: u64, reason: Cause },
    #[error(transparent)]
    Chain(#[from] ChainError),
}

pub struct Follower {
    chain: Arc<ChainState>,
    /// Where replicated transactions enter the pool.
    submit: Arc<Submission>,
    stream: String,
    /// Sequence of the last applied message (0: none yet; the next one is taken as is).
    last_seq: u64,
    /// Run of the leader that built the current pending block.
    build: Option<u64>,
    stopped: Option<ApplyError>,
    /// Writes the applied blocks to the store, batched while the disk is behind.
    committer: Committer,
    /// The open block's number and its trie with its pre-confirmations applied.
    warm: Option<(u64, WarmTrie)>,
    /// Sealed blocks whose state root had to be computed again from the parent alone.
    recomputed_roots: u64,
}

impl Follower {
    /// Resumes after the position stored with the head, when it is a position in `stream`.
    /// `on_landed` runs on the committer thread after each commit: the caller then calls
    /// `land` (a replica that receives nothing more still moves `safe`).
    pub fn new(
        chain: Arc<ChainState>,
        submit: Arc<Submission>,
        stream: String,
        on_landed: impl Fn() + Send + 'static,
    ) -> Result<Self, ChainError> {
        let stored = chain.store().meta(POSITION_KEY)?.and_then(|b| Position::decode(&b));
        let last_seq = stored.filter(|p| p.stream == stream).map_or(0, |p| p.seq);
        let committer = Committer::spawn(chain.clone(), on_landed)?;
        // An OP leader's op-node may take unsafe blocks back (a rewind in the stream): a
        // replica takes them off its store by their change sets, so it keeps them as the
        // leader does.
        if chain.spec().op().is_some() {
            chain.store().keep_change_sets(true);
        }
        Ok(Self {
            chain,
            submit,
            stream,
            last_seq,
            build: None,
            stopped: None,
            committer,
            warm: None,
            recomputed_roots: 0,
        })
    }

    /// Sealed blocks whose state root did not match the one running over their
    /// pre-confirmations and was computed again from the parent (a block that differs from
    /// what was pre-confirmed, or a bug): each is logged too.
    pub fn recomputed_roots(&self) -> u64 {
        self.recomputed_roots
    }

    /// Shows the commits that landed: their blocks read from the store, `safe` up to them.
    pub fn land(&mut self) -> Result<(), ChainError> {
        while let Some(landed) = self.committer.poll() {
            self.show(landed)?;
        }
        Ok(())
    }

    /// Shows a landed commit. A commit given up (only at shutdown) leaves blocks shown that
    /// the store lacks: nothing more may be written after them, so the follower stops.
    fn show(&mut self, landed: ChainResult<Landed>) -> Result<(), ChainError> {
        let shown = self.committer.show(&self.chain, landed);
        if let Err(e) = &shown {
            let reason = Cause::new(NotStored(e.clone()));
            self.stopped = Some(ApplyError::Stopped { seq: self.last_seq, reason });
        }
        shown
    }

    /// Waits until every applied block is durable (before this node builds on them).
    pub fn settle(&mut self) -> Result<(), ChainError> {
        while let Some(landed) = self.committer.wait() {
            self.show(landed)?;
        }
        Ok(())
    }

    /// At shutdown: `settle`, with a commit that fails reported rather than tried again.
    pub fn close(&mut self) -> Result<(), ChainError> {
        self.committer.stop_retrying();
        self.settle()
    }

    /// Sealed blocks applied and not yet durable.
    pub fn in_flight(&self) -> usize {
        self.committer.in_flight().len()
    }

    /// Follows on after this node led the stream up to `last_seq` in term `build`: what it
    /// showed is exactly what the stream holds up to there.
    pub fn resume_after_leading(&mut self, last_seq: u64, build: u64) {
        self.last_seq = last_seq;
        self.build = Some(build);
    }

    /// Reads on from stream message `seq`, wherever the stored position was (a leader
    /// reading its stream back is placed by its head).
    pub fn read_from(&mut self, seq: u64) {
        self.last_seq = seq.saturating_sub(1);
    }

    /// Why this follower stopped for good (a block that does not match), if it did.
    pub fn stopped(&self) -> Option<&ApplyError> {
        self.stopped.as_ref()
    }

    pub fn stream(&self) -> &str {
        &self.stream
    }

    /// This node's newest sealed block, and its hash.
    pub fn head(&self) -> u64 {
        self.chain.view().head_number()
    }

    pub fn head_hash(&self) -> B256 {
        self.chain.view().head_hash()
    }

    /// The position stored with the head in this follower's stream (`None`: not known,
    /// look the head up in the stream).
    pub fn position(&self) -> Option<u64> {
        (self.last_seq > 0).then_some(self.last_seq)
    }

    pub fn last_seq(&self) -> u64 {
        self.last_seq
    }

    /// Applies the message at stream sequence `seq`.
    pub fn apply(&mut self, seq: u64, data: &[u8]) -> Result<Applied, ApplyError> {
        if let Some(e) = &self.stopped {
            return Err(e.clone());
        }
        self.land()?;
        if self.last_seq != 0 {
            // The head's own message again, for the block opened with it (see `reopen`).
            let reopen = seq == self.last_seq && self.needs_open_block();
            if seq <= self.last_seq && !reopen {
                return Ok(Applied::Duplicate);
            }
            if seq > self.last_seq + 1 {
                return Err(ApplyError::Gap { expected: self.last_seq + 1, got: seq });
            }
        }
        let applied = match codec::decode(data) {
            Ok(Message::Pending(update)) => Ok(self.apply_pending(*update)),
            Ok(Message::Sealed(block)) => self.apply_sealed(seq, *block),
            Ok(Message::Txs(raw)) => Ok(self.apply_txs(raw)),
            Ok(Message::Term(term)) => {
                self.build = Some(term.term);
                Ok(Applied::Term(term))
            }
            Ok(Message::Rewound(to)) => self.apply_rewound(seq, to),
            Err(e) => Err(Refused::Decode(e)),
        };
        match applied {
            Ok(applied) => {
                self.last_seq = seq;
                Ok(applied)
            }
            Err(Refused::Store(e)) => Err(ApplyError::Chain(e)),
            Err(refused) => Err(self.stop(seq, Cause::new(refused))),
        }
    }

    fn stop(&mut self, seq: u64, reason: Cause) -> ApplyError {
        let fields = serde_json::json!({ "seq": seq, "reason": reason.to_string() });
        crate::log::error("replica", &format!("REPLICA STOPPED at stream message {seq}: {reason}"), fields);
        self.chain.set_unhealthy(Fault::ReplicaStopped(reason.clone()));
        let e = ApplyError::Stopped { seq, reason };
        self.stopped = Some(e.clone());
        e
    }

    /// Whether this node shows no block being built (it just started: a view opened from
    /// the store has none) although the stream has one.
    fn needs_open_block(&self) -> bool {
        self.chain.config().preconf && !self.chain.config().follow_flashblocks && self.chain.view().pending.is_none()
    }

    /// The block opened with the head's seal, from the head's own message read again: a
    /// restarted node must continue the block being built, not wait for a new one (its
    /// next pre-confirmations would not follow anything it shows).
    fn reopen(&mut self, view: &ChainView, next: Option<PendingUpdate>) {
        let Some(u) = next.filter(|u| u.header.parent_hash == view.head_hash()) else { return };
        self.build = Some(u.build);
        let layer = Arc::new(u.changes);
        self.warm(u.header.number, &view.snapshot, &layer);
        let pending = Arc::new(PendingBlock::start(u.header, u.txs, 0, layer.clone()).with_payload_id(u.payload_id));
        let mut opened = view.clone();
        opened.pending = Some(pending.clone());
        self.chain.publish(opened);
        self.chain.events().send(ChainEvent::Opened {
            block: pending.block.clone(),
            unix_ms: u.unix_ms,
            changes: layer,
        });
    }

    fn apply_txs(&mut self, raw: Vec<Bytes>) -> Applied {
        let admitted = raw.into_iter().filter(|r| self.submit.admit_replicated(r.clone()).is_ok()).count();
        Applied::Txs { admitted }
    }

    fn apply_pending(&mut self, u: PendingUpdate) -> Applied {
        if !self.chain.config().preconf || self.chain.config().follow_flashblocks {
            return Applied::Skipped(Skip::PreconfsOff);
        }
        let view = self.chain.view();
        let (number, index) = (u.header.number, u.preconf_index);
        if number != view.head_number() + 1 || u.header.parent_hash != view.head_hash() {
            return match number <= view.head_number() {
                true => Applied::Duplicate,
                false => Applied::Skipped(Skip::NotNextBlock { number, head: view.head_number() }),
            };
        }
        let layer = Arc::new(u.changes);
        let (pending, first_new) = if u.reset {
            let first_new = match &view.pending {
                // A snapshot of the block this replica already shows: announce only what is new.
                Some(p) if p.number() == number && is_prefix(&p.block.txs, &u.txs) => p.block.txs.len(),
                _ => 0,
            };
            (PendingBlock::start(u.header, u.txs, index, layer.clone()).with_payload_id(u.payload_id), first_new)
        } else {
            match &view.pending {
                Some(p)
                    if p.number() == number
                        && p.preconf_index() + 1 == index
                        && self.build == Some(u.build)
                        && p.block.txs.len() as u64 == u.first =>
                {
                    (p.next(u.header, &u.txs, index, layer.clone()), u.first as usize)
                }
                _ => return Applied::Skipped(Skip::NotNextPreconf { number, index }),
            }
        };
        self.build = Some(u.build);
        let pending = Arc::new(pending);
        let mut next = (*view).clone();
        next.pending = Some(pending.clone());
        self.chain.publish_including(next, pending.block.txs[first_new..].iter().map(|t| t.hash()));
        let block = pending.block.clone();
        self.chain.events().send(match (u.reset, index) {
            (true, 0) => ChainEvent::Opened { block, unix_ms: u.unix_ms, changes: layer.clone() },
            _ => ChainEvent::Preconfirmed { block, first_new, unix_ms: u.unix_ms, changes: layer.clone() },
        });
        if u.reset {
            // A snapshot replaces what this replica had of the block: so does its trie.
            self.warm = None;
        }
        self.warm(number, &view.snapshot, &layer);
        Applied::Pending { number, index }
    }

    fn apply_sealed(&mut self, seq: u64, b: SealedBlock) -> Result<Applied, Refused> {
        let started = Instant::now();
        // Up to `MAX_IN_FLIGHT` blocks wait for the disk; past that this one waits too.
        if self.committer.full() {
            if let Some(landed) = self.committer.wait() {
                self.show(landed)?;
            }
        }
        let view = self.chain.view();
        let head = view.head_number();
        let number = b.header.number;
        if number <= head {
            let ours = view.snapshot.block_hash(number).ok().flatten().unwrap_or_default();
            if ours != b.hash {
                return Err(Refused::Diverged { number, ours, theirs: b.hash });
            }
            if number == head && self.needs_open_block() {
                self.reopen(&view, b.next);
            }
            return Ok(Applied::Duplicate);
        }
        if number > head + 1 {
            return Err(Refused::Missing { head, number });
        }
        check(number, "parent hash", view.head_hash(), b.header.parent_hash)?;
        verify_block(&b)?;
        // Over the head's trie: the stored one with the blocks still being committed on top.
        let cold = || -> Result<_, Refused> {
            let reader = view.snapshot.trie_reader_at(u64::MAX)?;
            Ok(trie::state_root(&&*reader, &b.changes)?)
        };
        let (state_root, trie) = match self.warm.take().filter(|(n, _)| *n == number) {
            Some((_, mut warm)) => match warm.state_root(&b.changes)? {
                (root, trie) if root == b.header.state_root => (root, trie),
                (root, _) => {
                    // The running trie followed pre-confirmations the block does not match
                    // (or a bug): only a root computed from the parent alone can refuse it.
                    crate::log::warn(
                        "replica",
                        "the state root from the pre-confirmations differs from the sealed block's; computing it from the parent",
                        serde_json::json!({ "number": number, "ours": root.to_string(), "theirs": b.header.state_root.to_string() }),
                    );
                    self.recomputed_roots += 1;
                    cold()?
                }
            },
            None => cold()?,
        };
        check(number, "state root", state_root, b.header.state_root)?;

        let body = StoredBody {
            txs: b.txs.iter().map(|t| t.stored_tx()).collect(),
            ommers: b.ommers.clone(),
            withdrawals: b.withdrawals.clone(),
        };
        let receipts = StoredReceipts { receipts: b.txs.iter().map(|t| Bytes::from(t.receipt_2718())).collect() };
        let tx_hashes: Vec<B256> = b.txs.iter().map(|t| t.hash()).collect();
        let changes = Arc::new(b.changes);
        // The stream holds it (a leader that lost it reads it back from there, a cluster's
        // leader wrote it there first): safe here as soon as it is shown.
        let tip = InFlightBlock::new(b.header.clone(), b.hash, body, receipts, tx_hashes, changes.clone(), trie)
            .durable_upstream();
        // The committer flushes the pool's journal before it stores the position (what was
        // admitted before it survives with it) and forgets the block's transactions after.
        let position = Position { stream: self.stream.clone(), seq };
        self.committer.submit(Arc::new(tip), Some(position))?;

        let head = Arc::new(BlockData {
            header: b.header,
            hash: Some(b.hash),
            txs: b.txs.into(),
            preconf_index: None,
            ommers: b.ommers,
            withdrawals: b.withdrawals,
            payload_id: None,
        });
        // The block opened with the seal, published in the same view (as the leader does).
        let opened = match b.next {
            Some(u)
                if self.chain.config().preconf
                    && !self.chain.config().follow_flashblocks
                    && u.header.parent_hash == b.hash
                    && u.header.number == number + 1 =>
            {
                self.build = Some(u.build);
                let layer = Arc::new(u.changes);
                let block = PendingBlock::start(u.header, u.txs, 0, layer.clone()).with_payload_id(u.payload_id);
                Some((Arc::new(block), u.unix_ms, layer))
            }
            _ => None,
        };
        let snapshot = self.chain.store().snapshot_with_tips(self.committer.in_flight().to_vec())?;
        let parent = snapshot.clone();
        let sealed_view = ChainView {
            snapshot,
            finalized: number.saturating_sub(self.chain.config().finality_depth),
            head: head.clone(),
            pending: opened.as_ref().map(|(p, _, _)| p.clone()),
            codes: view.codes.clone(),
        };
        self.chain.publish_including(sealed_view, head.txs.iter().map(|t| t.hash()));
        self.chain.metrics().seal.observe(started.elapsed().as_secs_f64());
        self.chain.events().send(ChainEvent::Sealed { block: head, changes });
        let layer = match opened {
            Some((p, unix_ms, changes)) => {
                self.chain.events().send(ChainEvent::Opened {
                    block: p.block.clone(),
                    unix_ms,
                    changes: changes.clone(),
                });
                changes
            }
            None => Default::default(),
        };
        self.warm(number + 1, &parent, &layer);
        Ok(Applied::Sealed { number })
    }
}

impl Follower {
    /// Applies `layer`, what a pre-confirmation of block `number` (opened on `parent`)
    /// changed, to the block's trie, so checking the seal's state root hashes only what
    /// changed after the last pre-confirmation.
    fn warm(&mut self, number: u64, parent: &Arc<StoreSnapshot>, layer: &StateChanges) {
        if !matches!(&self.warm, Some((n, _)) if *n == number) {
            self.warm = Some((number, WarmTrie::new(parent.clone())));
        }
        if let Some((_, warm)) = &mut self.warm {
            warm.advance(layer);
        }
    }
}

/// Whether `known` (the replica's pending transactions) begins `all` (a snapshot's).
fn is_prefix(known: &[Arc<ExecutedTx>], all: &[Arc<ExecutedTx>]) -> bool {
    known.len() <= all.len() && known.iter().zip(all).all(|(a, b)| a.hash() == b.hash())
}
