//! Typed failures of the chain. The N-API layer projects them onto the boundary's error
//! kinds, which the TypeScript side maps to JSON-RPC codes in one table (src/errors/).
//! Messages follow geth's wording, because clients such as viem recognise errors by
//! their text.

use alloy_primitives::{Address, Bytes, U256};

#[derive(Debug, Clone, thiserror::Error)]
pub enum ChainError {
    /// The node cannot start with this configuration (bad genesis, unreadable datadir).
    #[error("{0}")]
    Config(String),
    /// A parameter that only the chain can judge is malformed (undecodable transaction,
    /// contradictory overrides).
    #[error("{0}")]
    InvalidParams(String),
    /// The block a read refers to does not exist.
    #[error("header not found")]
    HeaderNotFound,
    /// A call reverted; `data` holds the revert bytes.
    #[error("{message}")]
    Reverted { message: String, data: Bytes },
    /// A call stopped with an EVM halt (out of gas, invalid opcode, ...).
    #[error("{0}")]
    Halted(String),
    /// A transaction or call was refused before execution; see [`InvalidTx`].
    #[error(transparent)]
    InvalidTx(#[from] InvalidTx),
    /// A request the node refuses for another reason (a block with nothing to trace, ...).
    #[error("{0}")]
    Rejected(String),
    /// eth_simulateV1 refused the request as a whole; see [`SimulateError`].
    #[error("{1}")]
    Simulate(SimulateError, String),
    /// A request went past a documented limit (log range or result size).
    #[error("{0}")]
    LimitExceeded(String),
    /// The data asked for is not kept (state older than the trie history, for proofs).
    #[error("{0}")]
    Unavailable(String),
    /// The block's body, receipts or state were removed (`--history-blocks`): geth's
    /// "pruned history unavailable", naming how far back this node goes.
    #[error("{0}")]
    Pruned(String),
    /// The store cannot write (disk full, I/O error): the node stopped sealing and refuses
    /// transactions until it can write again.
    #[error("{0}")]
    StoreFault(String),
    /// A transaction, block or other object a request names does not exist (geth's
    /// "transaction not found", "block #5 not found").
    #[error("{0}")]
    NotFound(String),
    /// Work stopped at its wall-clock budget (a trace's `timeout`).
    #[error("{0}")]
    Timeout(String),
    /// A clustered node that does not lead (any more) was asked to accept a transaction:
    /// the caller sends it to the leader instead.
    #[error("not the leader: {0}")]
    NotLeader(String),
    /// A failure of the node itself (storage, invariant); logged and reported as internal.
    #[error("{0}")]
    Internal(String),
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

/// Request-level failures of eth_simulateV1, each with its own JSON-RPC code (-380xx).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SimulateError {
    NonceTooLow,
    NonceTooHigh,
    BaseFeeTooLow,
    IntrinsicGasTooLow,
    InsufficientFunds,
    BlockGasLimitExceeded,
    BlockNumberInvalid,
    TimestampInvalid,
    PrecompileSelfReference,
    PrecompileDuplicateAddress,
    ClientLimitExceeded,
    /// The sender has code that is not a delegation (geth: -38024).
    SenderNotEoa,
    /// Contract creation with init code over the limit (geth: -38025).
    MaxInitCodeSizeExceeded,
    /// Errors geth reports with plain -32000 inside simulate (e.g. "not a precompile").
    Generic,
    /// Errors geth reports with -32603 inside simulate (e.g. nonce overflow).
    InternalError,
    /// The simulation ran past its wall-clock budget (-32016).
    Timeout,
}

impl ChainError {
    /// Extra data for the JSON-RPC error object (revert bytes).
    pub fn data(&self) -> Option<&Bytes> {
        match self {
            ChainError::Reverted { data, .. } => Some(data),
            _ => None,
        }
    }

    pub fn internal(e: impl std::fmt::Display) -> Self {
        ChainError::Internal(e.to_string())
    }

    pub fn sim(kind: SimulateError, message: impl Into<String>) -> Self {
        ChainError::Simulate(kind, message.into())
    }
}

impl From<redb::Error> for ChainError {
    fn from(e: redb::Error) -> Self {
        ChainError::Internal(format!("storage: {e}"))
    }
}

macro_rules! storage_error {
    ($($t:ty),*) => {$(
        impl From<$t> for ChainError {
            fn from(e: $t) -> Self { ChainError::Internal(format!("storage: {e}")) }
        }
    )*};
}
storage_error!(redb::DatabaseError, redb::TransactionError, redb::TableError, redb::StorageError, redb::CommitError);

pub type ChainResult<T> = Result<T, ChainError>;
