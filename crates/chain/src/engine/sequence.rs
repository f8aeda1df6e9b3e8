//! Sequencer mode (`noTxPool: false`): the Engine API asks the builder, the chain's only
//! writer, to start a block from op-node's attributes and later to seal it. The builder
//! carries the requests out between ticks (builder/sequence.rs); this module is the
//! mailbox between the two (the node hands it to both) and the Engine API's side.
//!
//! With the Engine API on, blocks come only from it: the builder keeps no clock of its own
//! between blocks (nothing is pending beyond the head until a forkchoice update with
//! attributes arrives), pre-confirms the block it was asked for every interval, and seals
//! it when getPayload asks, exactly as it was last pre-confirmed. A forkchoice that moves
//! the head to a block the builder did not build (another sequencer's, or derivation's
//! replacement of unsafe blocks) has the builder stand aside while it writes ([`Aside`]).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

use alloy_primitives::B256;
use parking_lot::Mutex;

use super::types::{BuiltPayload, PayloadAttributes, PayloadId};
use crate::chain_state::ChainState;
use crate::doorbell::Doorbell;
use crate::error::{ChainResult, EngineError};
use crate::types::BlockData;

/// What the Engine API asks of the builder.
#[derive(Debug)]
pub enum Request {
    /// Open the block `attributes` describe on `parent` (the builder's head) as payload
    /// `id`: their transactions first, then the pool's, pre-confirmed every interval.
    Start { id: PayloadId, parent: B256, attributes: Box<PayloadAttributes> },
    /// Seal payload `id` as it was last pre-confirmed and hand it back.
    Seal { id: PayloadId },
    /// Land every sealed block, answer, then wait on `resume` while the forkchoice writes
    /// the new head. If the head moved, the block being built (if any) is dropped, and its
    /// pool transactions and those of the blocks `resume` names (taken off by a rewind) go
    /// back to the pool; otherwise the block goes on as it was.
    StandAside { resume: mpsc::Receiver<Vec<Arc<BlockData>>> },
}

#[derive(Clone, Debug)]
pub enum Reply {
    Started,
    Sealed(Arc<BuiltPayload>),
    StoodAside,
}

/// The builder standing aside: it waits until this is resumed or dropped (a forkchoice
/// that failed), then goes on from whatever head the store then holds.
pub struct Aside {
    resume: mpsc::SyncSender<Vec<Arc<BlockData>>>,
}

impl Aside {
    /// The head moved; `removed` are the blocks a rewind took off.
    pub fn resume(self, removed: Vec<Arc<BlockData>>) {
        let _ = self.resume.send(removed);
    }
}

/// One request with the channel its answer goes back on.
pub struct Call {
    pub request: Request,
    pub reply: mpsc::SyncSender<ChainResult<Reply>>,
}

/// How long the Engine API waits for the builder: a seal of a full block takes tens of
/// milliseconds; a builder that does not answer within this has stopped.
const ANSWER_WITHIN: Duration = Duration::from_secs(10);

/// The requests waiting for the builder, and whether a builder serves them.
#[derive(Default)]
pub struct Mailbox {
    calls: Mutex<VecDeque<Call>>,
    /// A builder driven by the Engine API is running (a cluster's follower has none).
    serving: AtomicBool,
    /// How many calls wait: the builder cuts a pass over the pool short for them.
    waiting: AtomicUsize,
}

impl Mailbox {
    /// Asks the builder (woken through `bell`) and waits for its answer.
    pub fn ask(&self, bell: &Doorbell, request: Request) -> ChainResult<Reply> {
        if !self.serving.load(Ordering::Acquire) {
            return Err(
                EngineError::NotSequencing("no block builder runs here (a cluster's follower, or --no-build)").into()
            );
        }
        let (reply, answer) = mpsc::sync_channel(1);
        {
            let mut calls = self.calls.lock();
            calls.push_back(Call { request, reply });
            self.waiting.store(calls.len(), Ordering::Release);
        }
        bell.ring();
        match answer.recv_timeout(ANSWER_WITHIN) {
            Ok(result) => result,
            Err(_) => Err(EngineError::NotSequencing("the block builder did not answer").into()),
        }
    }

    /// Has the builder stand aside (every sealed block in the store, nothing being built)
    /// until the returned [`Aside`] is resumed or dropped.
    pub fn stand_aside(&self, bell: &Doorbell) -> ChainResult<Aside> {
        let (resume, resumed) = mpsc::sync_channel(1);
        match self.ask(bell, Request::StandAside { resume: resumed })? {
            Reply::StoodAside => Ok(Aside { resume }),
            _ => Err(EngineError::NotSequencing("the block builder answered out of turn").into()),
        }
    }

    /// The builder's side: the requests that came since the last look, oldest first.
    pub fn drain(&self) -> Vec<Call> {
        let mut calls = self.calls.lock();
        self.waiting.store(0, Ordering::Release);
        calls.drain(..).collect()
    }

    /// Whether a call waits for the builder (getPayload must not wait for a whole pass).
    pub fn waiting(&self) -> bool {
        self.waiting.load(Ordering::Acquire) > 0
    }

    /// The builder starts (`true`) or stops (`false`) serving; calls left when it stops are
    /// dropped, which their callers hear as "did not answer".
    pub fn set_serving(&self, serving: bool) {
        self.serving.store(serving, Ordering::Release);
        if !serving {
            self.calls.lock().clear();
            self.waiting.store(0, Ordering::Release);
        }
    }
}

/// The Engine API's side: the payloads it asked the builder for, with their timestamps
/// (getPayload's version is checked before the builder seals).
#[derive(Default)]
pub struct Jobs {
    started: Mutex<VecDeque<(PayloadId, u64)>>,
}

/// Started payloads remembered for getPayload.
const KEPT_JOBS: usize = 16;

impl Jobs {
    /// `engine_forkchoiceUpdated` with attributes and `noTxPool: false`: the builder opens
    /// the block and shows it (pre-confirmation 0) before this returns.
    pub fn start(
        &self,
        chain: &ChainState,
        mailbox: &Mailbox,
        id: PayloadId,
        parent: B256,
        attributes: super::types::PayloadAttributes,
    ) -> ChainResult<()> {
        let timestamp = attributes.timestamp;
        mailbox.ask(chain.pool_bell(), Request::Start { id, parent, attributes: Box::new(attributes) })?;
        let mut started = self.started.lock();
        if !started.iter().any(|(known, _)| *known == id) {
            if started.len() == KEPT_JOBS {
                started.pop_front();
            }
            started.push_back((id, timestamp));
        }
        Ok(())
    }

    /// `engine_getPayload` of a payload the builder builds: sealed now, as last
    /// pre-confirmed (or already sealed: the same block again).
    pub fn seal(
        &self,
        chain: &ChainState,
        mailbox: &Mailbox,
        op: &preconf_op::OpConfig,
        version: super::types::Version,
        id: PayloadId,
    ) -> ChainResult<Arc<BuiltPayload>> {
        let timestamp = self.started.lock().iter().find(|(known, _)| *known == id).map(|(_, t)| *t);
        let timestamp = timestamp.ok_or(EngineError::UnknownPayload)?;
        super::rules::check_payload_version(op, version, timestamp)?;
        match mailbox.ask(chain.pool_bell(), Request::Seal { id })? {
            Reply::Sealed(payload) => Ok(payload),
            _ => Err(EngineError::NotSequencing("the block builder answered out of turn").into()),
        }
    }
}
