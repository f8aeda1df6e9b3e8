//! Typed failures of the chain. The N-API layer projects them onto the boundary's error
//! kinds, which the TypeScript side maps to JSON-RPC codes in one table (src/errors/).
//! Messages follow geth's wording, because clients such as viem recognise errors by
//! their text.

use alloy_primitives::Bytes;

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
    /// A transaction or call was refused before execution (nonce too low, insufficient funds, ...).
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
