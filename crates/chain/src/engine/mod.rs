//! The Engine API's chain side: forkchoice updates with payload attributes start payload
//! jobs, getPayload hands back what a job built. The protocol (JWT, JSON-RPC, parameter
//! shapes) is TypeScript's (src/engine/), the JSON crates/rpc's (`engine`); this module
//! keeps the rules: which method version serves which fork, what attributes must carry,
//! the payload id, and the blocks built for op-node.
//!
//! - [`types`]: forkchoice state, attributes, statuses, built payloads.
//! - [`payload_id`]: the id derived from the parent and the attributes.
//! - [`build`]: a block of exactly the attributes' transactions (`noTxPool`), on the
//!   parent's stored state.
//! - [`rules`]: the version and fork checks.
//! - [`bodies`]: getPayloadBodies' reads of stored blocks.
//! - [`sequence`]: sequencer mode (`noTxPool: false`), the builder's block from the
//!   attributes and the pool, sealed at getPayload.
//! - [`new_payload`]: newPayload's checks and execution of a received block.
//! - [`forkchoice`]: the head, `safe` and `finalized` a forkchoice names, kept blocks
//!   written, the unsafe chain rewound.

pub mod bodies;
pub mod build;
pub mod forkchoice;
pub mod new_payload;
pub mod payload_id;
pub mod rules;
pub mod sequence;
pub mod types;

use std::collections::VecDeque;
use std::sync::Arc;

use alloy_consensus::Header;
use parking_lot::Mutex;

use crate::chain_state::ChainState;
use crate::error::{ChainResult, EngineError};
use types::{BuiltPayload, ForkchoiceOutcome, ForkchoiceState, PayloadAttributes, PayloadId, PayloadStatus, Version};

/// Payloads kept for getPayload: op-node asks for a payload right after starting it; a few
/// are kept so that a retried getPayload still finds its block.
const KEPT_PAYLOADS: usize = 16;

pub struct Engine {
    chain: Arc<ChainState>,
    payloads: Mutex<VecDeque<Arc<BuiltPayload>>>,
    /// Payloads the builder builds from the attributes and the pool (`noTxPool: false`).
    sequencing: sequence::Jobs,
    canonical: forkchoice::Canonical,
    /// Where those requests go: the builder's (whichever runs) mailbox.
    mailbox: Arc<sequence::Mailbox>,
}

impl Engine {
    pub fn new(chain: Arc<ChainState>, mailbox: Arc<sequence::Mailbox>) -> Self {
        Self {
            chain,
            payloads: Mutex::new(VecDeque::new()),
            sequencing: Default::default(),
            canonical: Default::default(),
            mailbox,
        }
    }

    /// The mailbox a builder serving sequencer mode reads.
    pub fn mailbox(&self) -> &Arc<sequence::Mailbox> {
        &self.mailbox
    }

    /// `engine_forkchoiceUpdatedV{version}`.
    pub fn forkchoice_updated(
        &self,
        version: Version,
        state: ForkchoiceState,
        attributes: Option<PayloadAttributes>,
    ) -> ChainResult<ForkchoiceOutcome> {
        let op = self.chain.spec().op().ok_or(EngineError::NotAnOpChain)?.clone();
        if let Some(a) = &attributes {
            rules::check_attributes_version(version, a)?;
        }
        // The head, safe and finalized move (forkchoice.rs).
        let Some(head) = self.canonical.forkchoice(&self.chain, &self.mailbox, &state)? else {
            // Not known: the node cannot follow yet, and builds nothing.
            return Ok(ForkchoiceOutcome { status: PayloadStatus::Syncing, payload_id: None });
        };
        let valid = PayloadStatus::Valid { latest_valid_hash: state.head };
        let Some(attributes) = attributes else {
            return Ok(ForkchoiceOutcome { status: valid, payload_id: None });
        };
        rules::check_attributes(&op, version, &head, &attributes)?;
        let id = payload_id::payload_id(&state.head, &attributes, version);
        if !attributes.no_tx_pool && self.chain.engine_driven() {
            self.sequencing.start(&self.chain, &self.mailbox, id, state.head, attributes)?;
            return Ok(ForkchoiceOutcome { status: valid, payload_id: Some(id) });
        }
        if self.payload(&id).is_none() {
            let built = self.build(&op, id, &head, &attributes)?;
            let mut kept = self.payloads.lock();
            if kept.len() == KEPT_PAYLOADS {
                kept.pop_front();
            }
            kept.push_back(Arc::new(built));
        }
        Ok(ForkchoiceOutcome { status: valid, payload_id: Some(id) })
    }

    fn build(
        &self,
        op: &preconf_op::OpConfig,
        id: PayloadId,
        parent: &Header,
        attributes: &PayloadAttributes,
    ) -> ChainResult<BuiltPayload> {
        let state = self.chain.view().state_at(parent.number);
        let block = build::build_exact(op, parent, attributes, state)?;
        Ok(build::built_payload(id, block, attributes))
    }

    /// `engine_newPayloadV{version}`: the block checked and executed on its parent, kept
    /// for a forkchoice (new_payload.rs).
    pub fn new_payload(&self, version: Version, payload: new_payload::NewPayload) -> ChainResult<PayloadStatus> {
        let op = self.chain.spec().op().ok_or(EngineError::NotAnOpChain)?;
        new_payload::check_version(op, version, &payload)?;
        self.canonical.new_payload(&self.chain, op, &payload)
    }

    fn payload(&self, id: &PayloadId) -> Option<Arc<BuiltPayload>> {
        self.payloads.lock().iter().rev().find(|p| p.id == *id).cloned()
    }

    /// `engine_getPayloadV{version}`: the block the job `id` built, if this version serves
    /// its fork.
    pub fn get_payload(&self, version: Version, id: PayloadId) -> ChainResult<Arc<BuiltPayload>> {
        let op = self.chain.spec().op().ok_or(EngineError::NotAnOpChain)?;
        if let Some(payload) = self.payload(&id) {
            rules::check_payload_version(op, version, payload.header.timestamp)?;
            return Ok(payload);
        }
        self.sequencing.seal(&self.chain, &self.mailbox, op, version, id)
    }
}
