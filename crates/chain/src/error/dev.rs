//! Why a test method was refused (`--dev`), worded once; anvil's words where tools match them.
//! The limits come as fields: they are the dev module's and the consensus rules' constants.

use alloy_primitives::{Address, U256};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DevError {
    /// anvil's words, so that tools matching them keep working.
    #[error("Timestamp error: {requested} is lower than previous block's timestamp {parent}")]
    TimestampBeforeParent { requested: u64, parent: u64 },
    #[error("Timestamp error: {requested} is past the latest timestamp the test methods set ({max})")]
    TimestampTooLate { requested: u64, max: u64 },
    /// evm_increaseTime: the clock's offset plus `seconds` goes past `max`.
    #[error("Timestamp error: now + {offset} + {seconds} s is past the latest timestamp the test methods set ({max})")]
    OffsetTooLate { offset: i64, seconds: u64, max: u64 },
    #[error("anvil_mine seals at most {max} blocks per call, got {asked}")]
    TooManyBlocks { asked: u64, max: u64 },
    #[error("forking is not supported: anvil_reset takes jsonRpcUrl or blockNumber only on a node started with --fork-url (this node goes back to its own genesis)")]
    NoForking,
    /// The chain id every layer holds cannot change under it.
    #[error("anvil_reset cannot fork chain {new}: this node runs chain {current} (restart it with --fork-url to fork another chain)")]
    ForkChainId { current: u64, new: u64 },
    /// The fork schedule is read from the fork block's header (Shanghai, Cancun, Prague fields).
    #[error("anvil_reset cannot fork block {block}: its header shows other active forks than this node's fork block (restart it with --fork-url --fork-block-number {block})")]
    ForkSchedule { block: u64 },
    #[error("anvil_reset needs the genesis: this node was started on a datadir of another chain without --genesis FILE (the store keeps no alloc)")]
    NoGenesis,
    #[error("this chain has no base fee (London is not active)")]
    NoBaseFee,
    /// anvil's words: anvil refuses it on the same grounds.
    #[error("anvil_setMinGasPrice is not supported when EIP-1559 is active")]
    MinGasPriceWithEip1559,
    #[error("anvil_setMinGasPrice is not supported on this node: it keeps no minimum gas price to set")]
    NoMinGasPrice,
    #[error("gas limit {limit} is below the minimum of {min}")]
    GasLimitTooLow { limit: u64, min: u64 },
    /// `0`: the reader's words.
    #[error("invalid state dump: not gzip: {0}")]
    DumpNotGzip(String),
    #[error("invalid state dump: larger than {max} bytes uncompressed")]
    DumpTooLarge { max: u64 },
    /// `0`: serde_json's words.
    #[error("invalid state dump: {0}")]
    DumpJson(String),
    #[error("invalid state dump: nonce of {address} does not fit 64 bits: {nonce}")]
    DumpNonce { address: Address, nonce: U256 },
}

/// A well-formed test method call the node could not carry out: anvil answers these as an
/// internal error (-32603), in these words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DevFailure {
    /// anvil_dealERC20: no slot `balanceOf(account)` reads makes it answer the amount.
    #[error("Unable to set ERC20 balance, no slot found")]
    NoBalanceSlot,
    /// anvil_setERC20Allowance: likewise for `allowance(owner, spender)`.
    #[error("Unable to set ERC20 allowance, no slot found")]
    NoAllowanceSlot,
}
