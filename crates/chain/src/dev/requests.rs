//! What the test methods ask of the builder, and its answers. The builder carries them out
//! between ticks, in the order they came (builder/dev/).

use std::ops::Range;
use std::sync::mpsc;

use alloy_primitives::{Address, Bytes, B256, U256};

use crate::error::ChainResult;
use crate::fork::{ForkPoint, ForkSource};
use crate::genesis::seed::GenesisSource;

/// A new balance, or an amount to add to the current one (`anvil_addBalance`).
#[derive(Clone, Copy, Debug)]
pub enum Balance {
    Set(U256),
    Add(U256),
}

/// What to change in one account; `None` fields stay as they are. Storage is merged:
/// slots not named keep their values.
#[derive(Clone, Debug, Default)]
pub struct AccountEdit {
    pub address: Address,
    pub balance: Option<Balance>,
    pub nonce: Option<u64>,
    /// The account's code (empty: none).
    pub code: Option<Bytes>,
    pub storage: Vec<(U256, U256)>,
}

impl AccountEdit {
    pub fn new(address: Address) -> Self {
        Self { address, ..Default::default() }
    }
}

/// Which pooled transactions a test method takes out of the pool.
#[derive(Clone, Copy, Debug)]
pub enum PoolDrop {
    One(B256),
    Sender(Address),
    All,
}

/// When blocks are sealed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mining {
    /// Every `--block-time-ms` (the default).
    Schedule,
    /// Every this many seconds (`anvil_setIntervalMining`).
    Interval(u64),
    /// At each pre-confirmation that holds something new (`evm_setAutomine(true)`): a
    /// transaction is sealed at the tick that pre-confirms it, an edit at once.
    Auto,
    /// Only when asked (`anvil_mine`, `evm_mine`; `anvil_setIntervalMining(0)`).
    Manual,
}

#[derive(Clone, Debug)]
pub enum DevRequest {
    Edit(Vec<AccountEdit>),
    /// Seal `blocks` blocks now; `interval`: seconds between their timestamps; `timestamp`:
    /// the first new block's (`evm_mine`'s option).
    Mine {
        blocks: u64,
        interval: Option<u64>,
        timestamp: Option<u64>,
    },
    IncreaseTime(u64),
    /// `anvil_setTime`: the clock reads this from now on.
    SetTime(u64),
    SetNextTimestamp(u64),
    SetNextBaseFee(u64),
    SetCoinbase(Address),
    SetGasLimit(u64),
    /// `None` removes the interval.
    SetTimestampInterval(Option<u64>),
    SetMining(Mining),
    /// `Mining` back to what it was before automine, for `evm_setAutomine(false)`.
    StopAutomine,
    GetMining,
    Snapshot,
    Revert(u64),
    /// The instance id and the live snapshots (`anvil_metadata`).
    Metadata,
    Reset,
    /// A reset onto another fork: its source, attached, and its fork block.
    ResetFork(ForkSource, Box<ForkPoint>),
    DropTx(B256),
    DropAll,
    /// Every pooled transaction of one sender (`anvil_removePoolTransactions`).
    DropFrom(Address),
}

impl DevRequest {
    /// Whether carrying it out changes blocks, their context or their state (not only reads,
    /// or drops pool transactions).
    pub fn changes_the_chain(&self) -> bool {
        !matches!(
            self,
            DevRequest::GetMining
                | DevRequest::Metadata
                | DevRequest::DropTx(_)
                | DevRequest::DropAll
                | DevRequest::DropFrom(_)
        )
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DevReply {
    Done,
    /// The numbers of the blocks `Mine` sealed.
    Mined(Range<u64>),
    /// A snapshot's id.
    Id(u64),
    /// Whether a revert found its snapshot.
    Found(bool),
    /// The clock's total offset from the wall clock, in seconds.
    Offset(i64),
    /// Seconds the clock moved forward (`anvil_setTime`).
    Forward(u64),
    /// The transaction taken out of the pool, if it was there.
    Dropped(Option<B256>),
    Mining(Mining),
    Metadata(DevMetadata),
}

/// What `anvil_metadata` takes from the builder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DevMetadata {
    /// Changes whenever the chain starts again: at start and at `anvil_reset`.
    pub instance_id: B256,
    /// Each snapshot a revert can still go back to: (id, its head's number, its head's hash).
    pub snapshots: Vec<(u64, u64, B256)>,
}

/// One request with the channel its answer goes back on.
pub struct DevCall {
    pub request: DevRequest,
    pub reply: mpsc::SyncSender<ChainResult<DevReply>>,
}

/// The builder's end of the test methods' channel.
pub struct DevInbox(pub(crate) mpsc::Receiver<DevCall>);

/// What a builder serving the test methods is given: their requests, and where a reset
/// seeds the genesis from (`None`: it cannot, see `rewind::genesis_source`).
pub struct DevHooks {
    pub inbox: DevInbox,
    pub genesis: Option<GenesisSource>,
}

impl DevInbox {
    /// The requests that came since the last look, oldest first.
    pub fn drain(&self) -> Vec<DevCall> {
        self.0.try_iter().collect()
    }
}
