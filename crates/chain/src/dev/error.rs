//! Why a test method was refused, worded once; the chain's error kinds carry them to the
//! JSON-RPC table (src/errors/).

use super::clock::MAX_TIMESTAMP;
use crate::consensus::MIN_GAS_LIMIT;
use crate::error::{ChainError, InvalidParam};

/// The most blocks one `anvil_mine` may seal: each is a real block, committed to the store.
pub const MAX_MINE_BLOCKS: u64 = 100_000;

#[derive(Debug, Clone, thiserror::Error)]
pub enum DevError {
    /// anvil's words, so that tools matching them keep working.
    #[error("Timestamp error: {requested} is lower than previous block's timestamp {parent}")]
    TimestampBeforeParent { requested: u64, parent: u64 },
    #[error("Timestamp error: {0} is past the latest timestamp the test methods set ({MAX_TIMESTAMP})")]
    TimestampTooLate(String),
    #[error("anvil_mine seals at most {MAX_MINE_BLOCKS} blocks per call, got {0}")]
    TooManyBlocks(u64),
    #[error("forking is not supported: anvil_reset on this node goes back to its own genesis and takes no jsonRpcUrl or blockNumber")]
    NoForking,
    #[error("anvil_reset needs the genesis: this node was started on a datadir of another chain without --genesis FILE (the store keeps no alloc)")]
    NoGenesis,
    #[error("this chain has no base fee (London is not active)")]
    NoBaseFee,
    /// anvil's words: anvil refuses it on the same grounds.
    #[error("anvil_setMinGasPrice is not supported when EIP-1559 is active")]
    MinGasPriceWithEip1559,
    #[error("anvil_setMinGasPrice is not supported on this node: it keeps no minimum gas price to set")]
    NoMinGasPrice,
    #[error("gas limit {0} is below the minimum of {MIN_GAS_LIMIT}")]
    GasLimitTooLow(u64),
    #[error("invalid state dump: {0}")]
    BadDump(String),
    #[error("the builder is not running, so the test methods cannot change the chain")]
    BuilderGone,
}

impl From<DevError> for ChainError {
    fn from(e: DevError) -> Self {
        match e {
            DevError::BuilderGone => ChainError::Unavailable(e.to_string()),
            _ => InvalidParam::TestMethod(e.to_string()).into(),
        }
    }
}
