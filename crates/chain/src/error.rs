//! Typed failures of the chain. The N-API layer projects them onto the boundary's error
//! kinds, which the TypeScript side maps to JSON-RPC codes in one table (src/errors/).
//! Messages follow geth's wording, because clients such as viem recognise errors by
//! their text.

use alloy_primitives::{Address, Bytes, B256, U256};

mod availability;
mod dev;
mod dropped;
mod engine;
mod fault;
mod halt;
mod operator;
mod simulate;
mod upstream;
pub use availability::{LedgerError, NotLeader, Unavailable};
pub use dev::{DevError, DevFailure};
pub use dropped::DropReason;
pub use engine::{AttributesFault, EngineError, ForkWindow};
pub use fault::Fault;
pub use halt::Halt;
pub use operator::{Cause, ConfigError, Divergence, InternalError};
pub use simulate::{SimulateCode, SimulateError};
pub use upstream::{UpstreamError, UpstreamFailure};

#[derive(Debug, Clone, thiserror::Error)]
pub enum ChainError {
    /// The node cannot start with this configuration (bad genesis, unreadable datadir).
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A parameter that only the chain can judge is malformed (undecodable transaction,
    /// contradictory overrides); see [`InvalidParam`].
    #[error(transparent)]
    InvalidParams(#[from] InvalidParam),
    /// The block a read refers to does not exist.
    #[error("header not found")]
    HeaderNotFound,
    /// A call reverted; `data` holds the revert bytes.
    #[error("{revert}")]
    Reverted { revert: ExecutionReverted, data: Bytes },
    /// A call stopped with an EVM halt (out of gas, invalid opcode, ...).
    #[error(transparent)]
    Halted(#[from] Halt),
    /// A transaction or call was refused before execution; see [`InvalidTx`].
    #[error(transparent)]
    InvalidTx(#[from] InvalidTx),
    /// A request the node refuses for another reason (a block with nothing to trace, ...).
    #[error(transparent)]
    Rejected(#[from] Rejection),
    /// eth_simulateV1 refused the request as a whole; see [`SimulateError`].
    #[error(transparent)]
    Simulate(#[from] SimulateError),
    /// A request went past a documented limit (log range or result size).
    #[error(transparent)]
    LimitExceeded(#[from] Limit),
    /// The data asked for is not kept (state older than the trie history, for proofs).
    #[error(transparent)]
    Unavailable(#[from] Unavailable),
    /// The block's body, receipts or state were removed (`--history-blocks`): geth's
    /// "pruned history unavailable", naming how far back this node goes.
    #[error("pruned history unavailable: block {block} is older than the history this node keeps (from block {from})")]
    Pruned { block: u64, from: u64 },
    /// The store cannot write (disk full, I/O error): the node stopped sealing and refuses
    /// transactions until it can write again.
    #[error(transparent)]
    StoreFault(#[from] StoreFault),
    /// A transaction, block or other object a request names does not exist (geth's
    /// "transaction not found", "block #5 not found").
    #[error(transparent)]
    NotFound(#[from] Missing),
    /// Work stopped at its wall-clock budget (a trace's `timeout`).
    #[error("execution timeout ({ms}ms)")]
    Timeout { ms: u128 },
    /// A clustered node that does not lead (any more) was asked to accept a transaction:
    /// the caller sends it to the leader instead.
    #[error("not the leader: {0}")]
    NotLeader(#[from] NotLeader),
    /// A test method could not do what it was asked (anvil's internal error, not the node's).
    #[error(transparent)]
    TestMethodFailed(#[from] DevFailure),
    /// A forked chain's upstream could not answer (`--fork-url`).
    #[error(transparent)]
    Upstream(#[from] UpstreamError),
    /// The Engine API refused a request (its own codes, -38001 …).
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// A failure of the node itself (storage, invariant); logged and reported as internal.
    #[error(transparent)]
    Internal(#[from] InternalError),
}

/// geth's words for a revert: the reason decoded from the revert data (`Error(string)` or
/// `Panic(uint256)`, exec/errors.rs), when it holds one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("execution reverted{}", reason.as_deref().map(|r| format!(": {r}")).unwrap_or_default())]
pub struct ExecutionReverted {
    pub reason: Option<String>,
}

/// Why a transaction, or a call's transaction fields, is refused before it runs: geth's
/// words, written once (viem and ethers recognise errors by them).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InvalidTx {
    #[error("nonce too low: address {sender}, tx: {tx} state: {state}")]
    NonceTooLow { sender: Address, tx: u64, state: u64 },
    #[error("nonce too high: address {sender}, tx: {tx} state: {state}")]
    NonceTooHigh { sender: Address, tx: u64, state: u64 },
    /// The pool holds at most so many transactions per sender, so a larger gap is refused.
    #[error("nonce too high: address {sender}, tx: {tx} state: {state} (gap exceeds the per-sender pool limit)")]
    NonceGapTooLarge { sender: Address, tx: u64, state: u64 },
    #[error("nonce has max value: address {sender}, nonce: {}", u64::MAX)]
    NonceMax { sender: Address },
    /// Executing: the balance does not cover gas limit × fee cap + value (geth's state transition).
    #[error("insufficient funds for gas * price + value: address {sender} have {have} want {want}")]
    InsufficientFunds { sender: Address, have: U256, want: U256 },
    /// Admitting to the pool (geth's txpool validation).
    #[error("insufficient funds for gas * price + value: balance {balance}, tx cost {cost}, overshot {}", cost - balance)]
    CostAboveBalance { balance: U256, cost: U256 },
    #[error("insufficient funds for gas * price + value")]
    CostOverflow,
    #[error(
        "max fee per gas less than block base fee: address {sender}, maxFeePerGas: {max_fee}, baseFee: {base_fee}"
    )]
    FeeCapBelowBaseFee { sender: Address, max_fee: u128, base_fee: u64 },
    /// revm does not say by how much; geth's words without the figures.
    #[error("max fee per gas less than block base fee")]
    FeeCapTooLow,
    #[error("max priority fee per gas higher than max fee per gas")]
    TipAboveFeeCap,
    #[error("max priority fee per gas higher than max fee per gas: address {sender}, maxPriorityFeePerGas: {tip}, maxFeePerGas: {max_fee}")]
    TipAboveFeeCapOf { sender: Address, tip: u128, max_fee: u128 },
    #[error("intrinsic gas too low: have {have}, want {want}")]
    IntrinsicGasTooLow { have: u64, want: u64 },
    #[error("exceeds block gas limit")]
    GasLimitAboveBlock,
    #[error("transaction gas limit too high (cap: {cap}, tx: {gas_limit})")]
    GasLimitAboveCap { gas_limit: u64, cap: u64 },
    #[error("sender not an eoa: address {sender}")]
    SenderNotEoa { sender: Address },
    #[error("max initcode size exceeded")]
    InitCodeTooLarge,
    #[error("invalid chain id")]
    InvalidChainId,
    #[error("empty authorization list")]
    EmptyAuthorizationList,
    #[error("transaction type not supported")]
    TypeNotSupported,
    #[error("already known")]
    AlreadyKnown,
    #[error("replacement transaction underpriced")]
    ReplacementUnderpriced,
    #[error("txpool is full")]
    PoolFull,
    /// What revm reports beyond the cases above, in its words.
    #[error("invalid transaction: {0}")]
    Other(String),
}

/// A parameter the edge let through and the chain refuses (geth's words where geth has
/// them). The edge (src/validation/) words its own checks; these are the chain's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InvalidParam {
    /// A structured parameter that does not deserialize (`what`: "log filter", ...).
    #[error("invalid {what}: {reason}")]
    Json { what: &'static str, reason: String },
    #[error("invalid address {0}")]
    Address(String),
    #[error("invalid hash {0}")]
    Hash(String),
    #[error("invalid slot {0}")]
    Slot(String),
    #[error("invalid storage key {0}")]
    StorageKey(String),
    #[error("invalid quantity {0}")]
    Quantity(String),
    /// `0`: the first 20 characters of what was sent.
    #[error("invalid hex data {0}")]
    HexData(String),
    #[error("invalid block selector {input}: {reason}")]
    BlockSelector { input: String, reason: String },
    #[error("raw transaction is not valid hex")]
    RawTxHex,
    #[error("state dump is not valid hex")]
    StateDumpHex,
    #[error("empty transaction")]
    EmptyTx,
    /// The decoder's words.
    #[error("invalid transaction: {0}")]
    Undecodable(String),
    #[error("invalid transaction: a blob transaction needs its sidecar: {0}")]
    BlobWithoutSidecar(String),
    #[error("invalid transaction: type 3 that is not a blob transaction")]
    NotABlobTx,
    #[error("missing \"from\" in transaction")]
    MissingFrom,
    /// eth_simulateV1: `kind` names the transaction type that needs a recipient.
    #[error("missing \"to\" in {kind} transaction")]
    MissingTo { kind: &'static str },
    #[error("transaction type {0} not supported")]
    SimTxType(u8),
    /// eth_simulateV1 reports these transaction errors as invalid params (geth).
    #[error(transparent)]
    Tx(InvalidTx),
    #[error("empty input: blockStateCalls has no blocks")]
    NoSimBlocks,
    #[error("both \"data\" and \"input\" are set and not equal. Please use \"input\" to pass transaction call data")]
    DataAndInput,
    #[error("account {0} has both 'state' and 'stateDiff'")]
    StateAndStateDiff(Address),
    #[error("block number override does not fit 64 bits")]
    BlockNumberWidth,
    /// eth_call's block overrides.
    #[error("baseFeePerGas too large")]
    BaseFeeTooLarge,
    /// eth_simulateV1's block overrides.
    #[error("baseFeePerGas does not fit 64 bits")]
    BaseFeeWidth,
    #[error("reward percentiles must be between 0 and 100")]
    RewardPercentiles,
    #[error("invalid block range params")]
    BlockRangeOrder,
    #[error("block range extends beyond current head block")]
    BlockRangePastHead,
    #[error("trace timeout {asked}ms is above this node's maximum of {max}ms")]
    TraceTimeout { asked: u128, max: u128 },
    #[error("tracer not found: {name:?} (JavaScript tracers are not supported; built-in tracers: {list}, or none for the struct logger)")]
    JsTracer { name: String, list: String },
    #[error("tracer not supported: {name} (built-in tracers: {list}, or none for the struct logger)")]
    TracerNotSupported { name: String, list: String },
    #[error("invalid tracerConfig for {tracer}: {reason}")]
    TracerConfig { tracer: String, reason: String },
    /// A test method's refusal.
    #[error(transparent)]
    TestMethod(#[from] DevError),
}

/// Why a request is refused other than for its transaction's fields (see [`InvalidTx`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Rejection {
    #[error("oversized data: transaction size {size}, limit {limit}")]
    Oversized { size: usize, limit: usize },
    #[error("transaction type not supported: type {0}")]
    TypeNotSupported(u8),
    #[error("transaction type not supported: blob transactions (type 3) are not accepted, this chain has no blobs")]
    NoBlobsOnThisChain,
    #[error("transaction type not supported: no blobs before Cancun")]
    BlobsBeforeCancun,
    #[error("blobless blob transaction")]
    Blobless,
    #[error("too many blobs in transaction: have {have}, permitted {permitted}")]
    TooManyBlobs { have: usize, permitted: u64 },
    #[error("sidecar version 0 (blob proofs) after Osaka")]
    BlobProofsAfterOsaka,
    #[error("sidecar version 1 (cell proofs) before Osaka")]
    CellProofsBeforeOsaka,
    /// The KZG check's own words.
    #[error("invalid blob sidecar: {0}")]
    InvalidSidecar(String),
    #[error("invalid sender")]
    InvalidSender,
    #[error("invalid chain id: have {have}, want {want}")]
    ChainId { have: u64, want: u64 },
    #[error("account limit exceeded: {sender} already holds {held} pooled transactions")]
    AccountLimit { sender: Address, held: usize },
    #[error("sent for an impersonated sender, without --dev")]
    ImpersonatedWithoutDev,
    #[error("unknown account")]
    UnknownAccount,
    #[error("gas required exceeds allowance ({0})")]
    GasAboveAllowance(u64),
    #[error("insufficient gas to process all authorizations")]
    AuthorizationsGas,
    /// eth_createAccessList: geth names the request's hash and the reason.
    #[error("failed to apply transaction: {hash} err: {reason}")]
    FailedToApply { hash: B256, reason: Box<InvalidTx> },
    #[error("tracing failed: {0}")]
    TracingFailed(InvalidTx),
    #[error("genesis is not traceable")]
    GenesisNotTraceable,
    /// `block`: the block's hash, or "pending".
    #[error("transaction index {index} out of range for block {block}")]
    TxIndexOutOfRange { index: u64, block: String },
    #[error("unknown block")]
    UnknownBlock,
}

/// A documented limit a request went past.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Limit {
    #[error("block range too large: {span} blocks, the limit is {max}")]
    BlockRange { span: u64, max: u64 },
    #[error("query returned more than {0} results; narrow the block range or the filter")]
    LogResults(usize),
    #[error("trace output exceeds this node's limit of {0} bytes; narrow it (callTracer, disableStack, limit) or trace fewer transactions")]
    TraceOutput(usize),
    #[error("the access list did not settle after {0} runs")]
    AccessListUnsettled(usize),
}

/// What a request named and the node does not have (geth's words).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Missing {
    #[error("transaction not found")]
    Transaction,
    #[error("block #{0} not found")]
    Block(u64),
    #[error("block {0} not found")]
    BlockHash(B256),
    #[error("pending block not found")]
    PendingBlock,
}

/// Why the store cannot take writes (transactions are refused until it can).
#[derive(Debug, Clone, thiserror::Error)]
pub enum StoreFault {
    #[error("disk full: {free_mib} MiB free in {dir} (the node writes with at least {min_mib} MiB free, --min-free-disk-mb)")]
    DiskFull { free_mib: u64, dir: String, min_mib: u64 },
    #[error("pool journal: {0}")]
    Journal(#[source] Cause),
    /// `reason`: the fault the node is in.
    #[error("transaction refused: the node cannot write ({reason}); it accepts transactions again once it can")]
    RefusesTransactions { reason: WriteFault },
    #[error("transaction refused: cannot journal it: {0}")]
    CannotJournal(#[source] Cause),
    #[error("the store cannot write ({reason}); try again once it can")]
    CannotWrite { reason: WriteFault },
}

/// What keeps the store from writing while it cannot (ChainState::store_fault): reported
/// on refused requests, in /health and in the log.
#[derive(Debug, Clone, thiserror::Error)]
pub enum WriteFault {
    /// A fault the node names (disk full, the journal).
    #[error(transparent)]
    Fault(Box<StoreFault>),
    /// A commit that failed otherwise.
    #[error("store write failed: {0}")]
    Failed(Box<ChainError>),
}

impl From<ChainError> for WriteFault {
    fn from(e: ChainError) -> Self {
        match e {
            ChainError::StoreFault(f) => WriteFault::Fault(Box::new(f)),
            other => WriteFault::Failed(Box::new(other)),
        }
    }
}

impl ChainError {
    /// Extra data for the JSON-RPC error object (revert bytes).
    pub fn data(&self) -> Option<&Bytes> {
        match self {
            ChainError::Reverted { data, .. } => Some(data),
            _ => None,
        }
    }
}

/// A test method's refusal is an invalid parameter (src/errors/ maps it as anvil does).
impl From<DevError> for ChainError {
    fn from(e: DevError) -> Self {
        InvalidParam::TestMethod(e).into()
    }
}

/// Every redb failure is the store's: internal, with redb's error kept.
macro_rules! storage_error {
    ($($t:ty),*) => {$(
        impl From<$t> for ChainError {
            fn from(e: $t) -> Self { InternalError::Storage(Cause::new(e)).into() }
        }
    )*};
}
storage_error!(
    redb::Error,
    redb::DatabaseError,
    redb::TransactionError,
    redb::TableError,
    redb::StorageError,
    redb::CommitError,
    redb::SetDurabilityError,
    redb::SavepointError
);

pub type ChainResult<T> = Result<T, ChainError>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_fault_reads_as_the_fault_or_the_failed_write() {
        let full = StoreFault::DiskFull { free_mib: 1, dir: "/d".into(), min_mib: 64 };
        let fault = WriteFault::from(ChainError::from(full.clone()));
        assert_eq!(fault.to_string(), full.to_string());
        let failed = WriteFault::from(ChainError::from(InternalError::NoHead));
        assert_eq!(failed.to_string(), "store write failed: store has no head");
        let refused = StoreFault::RefusesTransactions { reason: failed };
        assert!(refused.to_string().starts_with("transaction refused: the node cannot write (store write failed: "));
    }
}
