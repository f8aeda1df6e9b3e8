//! Sequencer mode (the Engine API drives the builder; engine/sequence.rs is the mailbox).
//!
//! A forkchoice update with attributes opens the block from them: their context
//! (timestamp, prevRandao, fee recipient, gas limit, beacon root, Holocene's EIP-1559
//! parameters and Jovian's minimum base fee in extraData) and their transactions first,
//! then the pool's, pre-confirmed every interval as the builder does on its own clock.
//! getPayload seals it: whatever was executed since the last pre-confirmation is published
//! as one more pre-confirmation first, so the sealed block is exactly the last one clients
//! saw. Between blocks the builder is idle: nothing is pending beyond the head, and the pool
//! waits for the next forkchoice update (pre-executing it on a context op-node has not given
//! would show clients a block that is then replaced).

use std::collections::VecDeque;
use std::sync::Arc;

use alloy_consensus::Header;
use alloy_eips::eip4895::Withdrawal;
use alloy_primitives::{Bytes, B256};
use preconf_op::block::Attributes;
use preconf_op::OpTx;
use revm::database_interface::DatabaseRef;

use super::block::{unix_now_ms, OpenBlock};
use super::tick::Executed;
use super::Builder;
use crate::engine::sequence::{Reply, Request};
use crate::engine::types::{BuiltPayload, PayloadAttributes, PayloadId};
use crate::error::{ChainResult, EngineError};
use crate::pool::PooledTx;
use crate::state::StateView;
use crate::types::{BlockData, ExecutedTx};
use crate::view::{ChainView, PendingBlock};
use crate::wire::{self as codec, Kind};

/// Sealed payloads kept for a getPayload retried.
const KEPT_SEALED: usize = 4;

/// The builder's side of sequencer mode.
#[derive(Default)]
pub(super) struct Sequencing {
    /// The payload the open block is built for; `None`: idle, nothing pending.
    job: Option<Job>,
    sealed: VecDeque<Arc<BuiltPayload>>,
}

struct Job {
    id: PayloadId,
    withdrawals: Option<Vec<Withdrawal>>,
}

impl Sequencing {
    /// A builder that starts on a block the stream shows open (a cluster's new leader):
    /// when the Engine API started that block, its job goes on here, so op-node's
    /// forkchoice with the same attributes (the same payload id) continues the block as
    /// pre-confirmed instead of starting it over, and getPayload seals it.
    pub(super) fn continuing(shown: Option<&PendingBlock>) -> Self {
        let job = shown.and_then(|p| {
            let id = p.block.payload_id?;
            // OP blocks carry an empty withdrawals list from Canyon on (withdrawalsRoot set).
            Some(Job { id, withdrawals: p.block.header.withdrawals_root.map(|_| Vec::new()) })
        });
        Self { job, sealed: VecDeque::new() }
    }
}

impl Builder {
    /// In sequencer mode with no payload to build: the builder waits for the Engine API.
    pub(super) fn idle(&self) -> bool {
        self.sequencing.as_ref().is_some_and(|s| s.job.is_none())
    }

    /// Carries out the Engine API's requests that came since the last look; `true` when a
    /// block was started (its pre-confirmation clock starts from now).
    pub(super) fn serve_engine(&mut self) -> ChainResult<bool> {
        if self.sequencing.is_none() {
            return Ok(false);
        }
        let mut started = false;
        for call in self.mailbox.drain() {
            let reply = match call.request {
                Request::Start { id, parent, attributes } => {
                    let r = self.start_payload(id, parent, &attributes);
                    started |= r.is_ok();
                    r.map(|()| Reply::Started)
                }
                Request::Seal { id } => self.seal_payload(id).map(Reply::Sealed),
                Request::StandAside { resume } => {
                    let stood = self.stand_aside();
                    let ok = stood.is_ok();
                    // Read before answering: the forkchoice writes as soon as it is answered.
                    let head = self.chain.view().head_hash();
                    super::answer(&call.reply, stood.map(|()| Reply::StoodAside))?;
                    if ok {
                        // Nothing comes back when the forkchoice failed before writing.
                        let removed = resume.recv().unwrap_or_default();
                        // A forkchoice refused (or that moved nothing) leaves the block
                        // being built as it was, pre-confirmations and all.
                        if self.chain.view().head_hash() != head {
                            self.reopen_after_move(&removed)?;
                        }
                    }
                    continue;
                }
            };
            super::answer(&call.reply, reply)?;
        }
        Ok(started)
    }

    /// A forkchoice is about to move the head to a block this builder did not build: every
    /// sealed block is landed first, so the store holds the chain the forkchoice rewinds.
    /// Replicas are told by the forkchoice (a cluster's ledger) or by the chain events it
    /// sends (`--publish`): the stream's rewind message, then the new head.
    fn stand_aside(&mut self) -> ChainResult<()> {
        self.land_all()
    }

    /// After the forkchoice wrote the new head: the block being built is dropped, its pool
    /// transactions and the user transactions of the blocks taken off (`removed`) go back to
    /// the pool (as geth's pool takes a reorg's), and the builder waits for op-node's next
    /// block on the new head.
    fn reopen_after_move(&mut self, removed: &[Arc<BlockData>]) -> ChainResult<()> {
        let view = self.chain.view();
        self.return_to_pool(&view);
        let state = view.state_at(view.head_number());
        for block in removed {
            for etx in block.txs.iter() {
                self.repool(&state, etx);
            }
        }
        if let Some(seq) = self.sequencing.as_mut() {
            seq.job = None;
            // A getPayload retried for a block taken off would hand op-node a block that is
            // no longer on the chain.
            seq.sealed.retain(|p| view.snapshot.block_number(&p.hash).ok().flatten().is_some());
        }
        self.block = OpenBlock::open(&self.chain, &view)?;
        self.executed = Executed::default();
        self.published = None;
        Ok(())
    }

    fn start_payload(&mut self, id: PayloadId, parent: B256, attributes: &PayloadAttributes) -> ChainResult<()> {
        let seq = self.sequencing.as_ref().expect("sequencer mode");
        // op-node may send the same attributes twice: the job goes on (or is already sealed).
        if seq.job.as_ref().is_some_and(|j| j.id == id) || seq.sealed.iter().any(|p| p.id == id) {
            return Ok(());
        }
        let view = self.chain.view();
        if view.head_hash() != parent {
            return Err(EngineError::NotSequencing("the forkchoice head is not this node's head").into());
        }
        let header = attributes_header(&self.chain, &view, attributes)?;
        let block = OpenBlock::from_attributes(&self.chain, &view, header, &attributes.transactions)?;
        self.return_to_pool(&view);
        self.block = block;
        self.executed = Executed::default();
        self.published = None;
        let job = Job { id, withdrawals: attributes.withdrawals.clone() };
        self.sequencing.as_mut().expect("sequencer mode").job = Some(job);

        let mut view = self.with_pending((*view).clone());
        if let Some(p) = view.pending.as_mut() {
            // The flashblocks' payload id is the one op-node asks getPayload for.
            let block = BlockData { payload_id: Some(id), ..(*p.block).clone() };
            let mut tagged = (**p).clone();
            tagged.block = Arc::new(block);
            *p = Arc::new(tagged);
            self.published = Some(p.clone());
        }
        if let Some(p) = view.pending.clone() {
            let term = self.term();
            let encode = || codec::encode_pending(&p.block, term, unix_now_ms(), true, 0, &p.tick);
            if let Err(e) = self.record(Kind::Pending, p.number(), 0, encode) {
                return Err(EngineError::NotSequencing(leader_lost(&e)).into());
            }
        }
        self.chain.publish(view);
        self.announce_open();
        Ok(())
    }

    /// A block started and not sealed gives way to another (op-node started over): the
    /// pool transactions it pre-confirmed go back to the pool.
    fn return_to_pool(&mut self, view: &ChainView) {
        if self.sequencing.as_ref().is_none_or(|s| s.job.is_none()) && self.published.is_none() {
            return;
        }
        let state = view.state_at(view.head_number());
        for etx in &self.block.txs[self.block.opening..] {
            self.repool(&state, etx);
        }
    }

    /// A user transaction back into the pool against `state`; deposits are op-node's to send
    /// again.
    fn repool(&self, state: &StateView, etx: &ExecutedTx) {
        let OpTx::Eth(tx) = &etx.tx else { return };
        let nonce = state.basic_ref(etx.sender).ok().flatten().map_or(0, |a| a.nonce);
        let raw = Bytes::from(etx.tx.encoded_2718());
        // Already pooled (executed, not yet pre-confirmed) or no longer valid: skipped.
        let _ = self.chain.add_to_pool(PooledTx::new(tx.clone(), raw, etx.sender), nonce);
    }

    fn seal_payload(&mut self, id: PayloadId) -> ChainResult<Arc<BuiltPayload>> {
        let seq = self.sequencing.as_ref().expect("sequencer mode");
        if let Some(p) = seq.sealed.iter().find(|p| p.id == id) {
            return Ok(p.clone());
        }
        if seq.job.as_ref().is_none_or(|j| j.id != id) {
            return Err(EngineError::UnknownPayload.into());
        }
        // Executed since the last pre-confirmation: shown first, so that the block sealed
        // is exactly the last pre-confirmation clients saw.
        if !self.executed.included.is_empty() {
            self.preconfirm(None);
        }
        if let Some(e) = &self.fenced {
            return Err(EngineError::NotSequencing(leader_lost(e)).into());
        }
        let number = self.block.header.number;
        self.seal()?;
        let head = self.chain.view().head.clone();
        if head.header.number != number || self.fenced.is_some() {
            return Err(EngineError::NotSequencing("the block could not be sealed: this node no longer leads").into());
        }
        let job = self.sequencing.as_mut().expect("sequencer mode").job.take().expect("the job sealed");
        let payload = Arc::new(BuiltPayload {
            id,
            header: head.header.clone(),
            hash: head.hash.unwrap_or_else(|| head.header.hash_slow()),
            transactions: head.txs.iter().map(|t| Bytes::from(t.tx.encoded_2718())).collect(),
            withdrawals: job.withdrawals,
            block_value: crate::engine::build::priority_fees(
                &head.header,
                head.txs.iter().map(|t| (&t.tx, t.gas_used)),
            ),
        });
        let kept = &mut self.sequencing.as_mut().expect("sequencer mode").sealed;
        if kept.len() == KEPT_SEALED {
            kept.pop_front();
        }
        kept.push_back(payload.clone());
        Ok(payload)
    }
}

fn leader_lost(_: &crate::ledger::LedgerError) -> &'static str {
    "this node no longer leads the cluster"
}

/// The header of the block op-node's attributes describe on `view`'s head, before any
/// transaction: crates/op's, as a block built exactly from the attributes has it (the base
/// fee, extraData and each fork's fields for the attributes' timestamp).
fn attributes_header(
    chain: &crate::chain_state::ChainState,
    view: &ChainView,
    a: &PayloadAttributes,
) -> ChainResult<Header> {
    let op = chain.spec().op().ok_or(EngineError::NotAnOpChain)?;
    let parent = &view.head.header;
    let attributes = Attributes {
        timestamp: a.timestamp,
        prev_randao: a.prev_randao,
        fee_recipient: a.fee_recipient,
        parent_beacon_block_root: a.parent_beacon_block_root,
        gas_limit: a.gas_limit.unwrap_or(parent.gas_limit),
        transactions: Vec::new(),
        eip1559_params: a.eip1559_params,
        min_base_fee: a.min_base_fee,
    };
    Ok(preconf_op::header::attributes_header(op, parent, view.head_hash(), &attributes))
}
