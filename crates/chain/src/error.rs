//! Typed failures of the chain. Each variant has a stable `kind` name; the TypeScript side
//! maps kinds to JSON-RPC codes in one table (src/errors/). Messages follow geth's wording,
//! because clients such as viem recognise errors by their text.

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
    /// The request took longer than its time budget.
    #[error("{0}")]
    Timeout(String),
    /// A request went past a documented limit (log range or result size).
    #[error("{0}")]
    LimitExceeded(String),
    /// The feature is switched off in this node's mode.
    #[error("{0}")]
    Unavailable(String),
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
    /// Errors geth reports with plain -32000 inside simulate (e.g. "not a precompile").
    Generic,
    /// Errors geth reports with -32603 inside simulate (e.g. nonce overflow).
    InternalError,
    /// The simulation ran past its wall-clock budget (-32016).
    Timeout,
}

impl ChainError {
    /// The stable name the TypeScript error table keys on.
    pub fn kind(&self) -> &'static str {
        match self {
            ChainError::Config(_) => "Config",
            ChainError::InvalidParams(_) => "InvalidParams",
            ChainError::HeaderNotFound => "HeaderNotFound",
            ChainError::Reverted { .. } => "Reverted",
            ChainError::Halted(_) => "Halted",
            ChainError::Rejected(_) => "Rejected",
            ChainError::Simulate(kind, _) => match kind {
                SimulateError::NonceTooLow => "SimNonceTooLow",
                SimulateError::NonceTooHigh => "SimNonceTooHigh",
                SimulateError::BaseFeeTooLow => "SimBaseFeeTooLow",
                SimulateError::IntrinsicGasTooLow => "SimIntrinsicGasTooLow",
                SimulateError::InsufficientFunds => "SimInsufficientFunds",
                SimulateError::BlockGasLimitExceeded => "SimBlockGasLimitExceeded",
                SimulateError::BlockNumberInvalid => "SimBlockNumberInvalid",
                SimulateError::TimestampInvalid => "SimTimestampInvalid",
                SimulateError::PrecompileSelfReference => "SimPrecompileSelfReference",
                SimulateError::PrecompileDuplicateAddress => "SimPrecompileDuplicateAddress",
                SimulateError::ClientLimitExceeded => "SimClientLimitExceeded",
                SimulateError::Generic => "SimGeneric",
                SimulateError::InternalError => "SimInternal",
                SimulateError::Timeout => "SimTimeout",
            },
            ChainError::Timeout(_) => "Timeout",
            ChainError::LimitExceeded(_) => "LimitExceeded",
            ChainError::Unavailable(_) => "Unavailable",
            ChainError::Internal(_) => "Internal",
        }
    }

    /// Extra data for the JSON-RPC error object (revert bytes), as 0x-hex.
    pub fn data(&self) -> Option<String> {
        match self {
            ChainError::Reverted { data, .. } => Some(data.to_string()),
            _ => None,
        }
    }

    /// The error as the JSON the boundary carries: `{"kind", "message", "data"?}`.
    pub fn to_json(&self) -> String {
        let mut v = serde_json::json!({ "kind": self.kind(), "message": self.to_string() });
        if let Some(data) = self.data() {
            v["data"] = serde_json::Value::String(data);
        }
        v.to_string()
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
storage_error!(
    redb::DatabaseError,
    redb::TransactionError,
    redb::TableError,
    redb::StorageError,
    redb::CommitError
);

pub type ChainResult<T> = Result<T, ChainError>;
