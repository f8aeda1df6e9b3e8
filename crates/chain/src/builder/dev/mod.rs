//! The test methods' hook in the builder (`--dev`; crate::dev holds the rest). The builder
//! is the chain's only writer, so their requests are carried out here, between ticks, in
//! the order they came:
//!
//! - a state edit goes into the block being built (its EVM state and change sets, like a
//!   transaction's effects) and is shown at once as the block's next pre-confirmation;
//!   it is sealed with the block;
//! - a new block context (time, base fee) seals the open block if it holds anything, or
//!   opens it again if it holds nothing, so what is sent next runs in the new context;
//! - a snapshot seals what the open block holds and marks the store; a revert puts the
//!   store back there and opens a new block on it (a reset: on a new genesis), dropping the
//!   pool, and shows that block at once: subscribers see a new block, never an older
//!   pre-confirmation.
//!
//! Pre-confirmations the test methods bring forward do not count towards a block's
//! schedule: blocks are still sealed every `--block-time-ms` (or as `Mining` says).

mod edit;
mod mining;
mod pool;
mod rewind;

use std::collections::BTreeMap;
use std::time::{SystemTime, UNIX_EPOCH};

use alloy_primitives::{keccak256, B256};

use super::Builder;
use crate::consensus::MIN_GAS_LIMIT;
use crate::dev::clock::BlockClock;
use crate::dev::requests::{DevHooks, DevInbox, DevMetadata, DevReply, DevRequest, Mining, PoolDrop};
use crate::dev::DevError;
use crate::error::ChainResult;
use crate::genesis::seed::GenesisSource;
use crate::store::StoreSavepoint;

/// The builder's side of the test methods.
pub(super) struct DevState {
    inbox: DevInbox,
    clock: BlockClock,
    mining: Mining,
    /// What `evm_setAutomine(false)` goes back to.
    before_auto: Mining,
    snapshots: BTreeMap<u64, Snapshot>,
    next_id: u64,
    /// Pre-confirmations of block `.0` the test methods brought forward: `.1`.
    extra: (u64, u64),
    /// The number of the open block when it holds state edits.
    edited: Option<u64>,
    genesis: Option<GenesisSource>,
    /// `anvil_metadata`'s instance id.
    instance_id: B256,
}

/// A sealed state to go back to (`evm_snapshot`).
struct Snapshot {
    savepoint: StoreSavepoint,
    /// Its head's timestamp: the clock goes back to it with the state.
    timestamp: u64,
    /// Its head's number and hash (`anvil_metadata`).
    head: (u64, B256),
}

/// A new instance id: unique to this start (or reset) of the chain, not secret.
fn new_instance_id() -> B256 {
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or_default();
    keccak256([nanos.to_be_bytes().as_slice(), &std::process::id().to_be_bytes()].concat())
}

impl DevState {
    pub fn new(hooks: DevHooks) -> Self {
        Self {
            inbox: hooks.inbox,
            clock: BlockClock::default(),
            mining: Mining::Schedule,
            before_auto: Mining::Schedule,
            snapshots: BTreeMap::new(),
            next_id: 0,
            extra: (0, 0),
            edited: None,
            genesis: hooks.genesis,
            instance_id: new_instance_id(),
        }
    }
}

impl Builder {
    fn dev_mut(&mut self) -> &mut DevState {
        self.dev.as_mut().expect("only a builder serving the test methods gets their requests")
    }

    /// Carries out the test methods' requests that came since the last look. A failure of
    /// the chain itself (the store) is answered and then stops the builder.
    pub(in crate::builder) fn serve_dev(&mut self) -> ChainResult<()> {
        let Some(dev) = &self.dev else { return Ok(()) };
        for call in dev.inbox.drain() {
            let reply = self.dev_request(call.request);
            super::answer(&call.reply, reply)?;
        }
        Ok(())
    }

    fn dev_request(&mut self, request: DevRequest) -> ChainResult<DevReply> {
        let reply = match request {
            DevRequest::Edit(edits) => {
                self.edit(&edits)?;
                DevReply::Done
            }
            DevRequest::Mine { blocks, interval, timestamp } => {
                DevReply::Mined(self.mine(blocks, interval, timestamp)?)
            }
            DevRequest::IncreaseTime(seconds) => {
                let parent = self.next_parent_timestamp();
                let total = self.dev_mut().clock.increase(seconds, parent)?;
                self.new_context(true)?;
                DevReply::Offset(total)
            }
            DevRequest::SetTime(timestamp) => {
                let forward = self.dev_mut().clock.set_time(timestamp)?;
                self.new_context(true)?;
                DevReply::Forward(forward)
            }
            DevRequest::SetNextTimestamp(timestamp) => {
                let parent = self.next_parent_timestamp();
                self.dev_mut().clock.set_next_timestamp(timestamp, parent)?;
                self.new_context(true)?;
                DevReply::Done
            }
            DevRequest::SetNextBaseFee(fee) => {
                if self.block.header.base_fee_per_gas.is_none() {
                    return Err(DevError::NoBaseFee.into());
                }
                self.dev_mut().clock.set_next_base_fee(fee);
                self.new_context(false)?;
                DevReply::Done
            }
            DevRequest::SetCoinbase(coinbase) => {
                self.dev_mut().clock.settings.coinbase = Some(coinbase);
                self.new_context(false)?;
                DevReply::Done
            }
            DevRequest::SetGasLimit(gas_limit) => {
                if gas_limit < MIN_GAS_LIMIT {
                    return Err(DevError::GasLimitTooLow { limit: gas_limit, min: MIN_GAS_LIMIT }.into());
                }
                self.dev_mut().clock.settings.gas_limit = Some(gas_limit);
                self.new_context(false)?;
                DevReply::Done
            }
            DevRequest::SetTimestampInterval(seconds) => {
                let was = std::mem::replace(&mut self.dev_mut().clock.settings.timestamp_interval, seconds);
                self.new_context(seconds.is_some())?;
                DevReply::Found(was.is_some())
            }
            DevRequest::SetMining(mode) => {
                let dev = self.dev_mut();
                if mode == Mining::Auto && dev.mining != Mining::Auto {
                    dev.before_auto = dev.mining;
                }
                dev.mining = mode;
                DevReply::Done
            }
            DevRequest::StopAutomine => {
                let dev = self.dev_mut();
                if dev.mining == Mining::Auto {
                    dev.mining = dev.before_auto;
                }
                DevReply::Done
            }
            DevRequest::GetMining => DevReply::Mining(self.dev_mut().mining),
            DevRequest::Snapshot => DevReply::Id(self.snapshot()?),
            DevRequest::Revert(id) => DevReply::Found(self.revert(id)?),
            DevRequest::Metadata => {
                let dev = self.dev_mut();
                let snapshots = dev.snapshots.iter().map(|(id, s)| (*id, s.head.0, s.head.1)).collect();
                DevReply::Metadata(DevMetadata { instance_id: dev.instance_id, snapshots })
            }
            DevRequest::Reset => {
                self.reset()?;
                DevReply::Done
            }
            DevRequest::ResetFork(source, point) => {
                self.reset_fork(source, *point)?;
                DevReply::Done
            }
            DevRequest::DropTx(hash) => DevReply::Dropped(self.drop_pooled(PoolDrop::One(hash)).into_iter().next()),
            DevRequest::DropAll => {
                self.drop_pooled(PoolDrop::All);
                DevReply::Done
            }
            DevRequest::DropFrom(sender) => {
                self.drop_pooled(PoolDrop::Sender(sender));
                DevReply::Done
            }
        };
        Ok(reply)
    }
}
