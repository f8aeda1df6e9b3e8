//! Typed failures of block import: a file that does not decode, and a block that breaks
//! a consensus rule. Both name where it happened, so a bad import can be found by hand.

use std::fmt;

/// A header field (or a value derived from the body) that a rule checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    ParentHash,
    Number,
    Timestamp,
    GasLimit,
    GasUsed,
    ExtraData,
    Difficulty,
    Nonce,
    OmmersHash,
    Ommers,
    TransactionsRoot,
    WithdrawalsRoot,
    BaseFee,
    BlobGasUsed,
    ExcessBlobGas,
    ParentBeaconBlockRoot,
    RequestsHash,
    StateRoot,
    ReceiptsRoot,
    LogsBloom,
    BlockAccessListHash,
    SlotNumber,
    /// The whole block's RLP length (EIP-7934).
    Size,
}

impl Field {
    /// The field's name in JSON-RPC block objects, so messages match what users query.
    pub fn name(self) -> &'static str {
        match self {
            Field::ParentHash => "parentHash",
            Field::Number => "number",
            Field::Timestamp => "timestamp",
            Field::GasLimit => "gasLimit",
            Field::GasUsed => "gasUsed",
            Field::ExtraData => "extraData",
            Field::Difficulty => "difficulty",
            Field::Nonce => "nonce",
            Field::OmmersHash => "sha3Uncles",
            Field::Ommers => "uncles",
            Field::TransactionsRoot => "transactionsRoot",
            Field::WithdrawalsRoot => "withdrawalsRoot",
            Field::BaseFee => "baseFeePerGas",
            Field::BlobGasUsed => "blobGasUsed",
            Field::ExcessBlobGas => "excessBlobGas",
            Field::ParentBeaconBlockRoot => "parentBeaconBlockRoot",
            Field::RequestsHash => "requestsHash",
            Field::StateRoot => "stateRoot",
            Field::ReceiptsRoot => "receiptsRoot",
            Field::LogsBloom => "logsBloom",
            Field::BlockAccessListHash => "blockAccessListHash",
            Field::SlotNumber => "slotNumber",
            Field::Size => "size",
        }
    }
}

impl fmt::Display for Field {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A block that breaks a consensus rule. `expected` is what the rules (or execution)
/// give, `got` what the block carries; both are rendered as the values are written in
/// JSON-RPC (`0x…` hashes, decimal numbers, `absent` for a missing optional field).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("block {number}: invalid {field}: expected {expected}, got {got}")]
pub struct ConsensusError {
    pub number: u64,
    pub field: Field,
    pub expected: String,
    pub got: String,
}

impl ConsensusError {
    pub fn new(number: u64, field: Field, expected: impl fmt::Display, got: impl fmt::Display) -> Self {
        Self { number, field, expected: expected.to_string(), got: got.to_string() }
    }
}

/// Renders an optional header field the way [`ConsensusError`] shows it.
pub fn show<T: fmt::Display>(value: Option<T>) -> String {
    value.map_or_else(|| "absent".to_string(), |v| v.to_string())
}

/// A blocks file that cannot be read as concatenated RLP blocks.
#[derive(Debug, thiserror::Error)]
pub enum BlockFileError {
    #[error("block #{index} at byte {offset}: cannot read the file: {source}")]
    Io {
        index: u64,
        offset: u64,
        #[source]
        source: std::io::Error,
    },
    #[error("block #{index} at byte {offset}: {reason}")]
    Malformed { index: u64, offset: u64, reason: String },
}

impl BlockFileError {
    /// Position of the offending block in the file (0 for the first block).
    pub fn index(&self) -> u64 {
        match self {
            BlockFileError::Io { index, .. } | BlockFileError::Malformed { index, .. } => *index,
        }
    }

    /// Byte offset in the file where the offending block starts.
    pub fn offset(&self) -> u64 {
        match self {
            BlockFileError::Io { offset, .. } | BlockFileError::Malformed { offset, .. } => *offset,
        }
    }
}
