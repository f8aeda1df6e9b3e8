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
    /// The body's transactions themselves (their encoding), not their root.
    Transactions,
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
            Field::Transactions => "transactions",
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

/// What a header value is held against: the rules given the parent, the block's own body,
/// or the result of executing it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Basis {
    Rules,
    Body,
    Execution,
}

impl fmt::Display for Basis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Basis::Rules => "the rules require",
            Basis::Body => "the body gives",
            Basis::Execution => "execution gives",
        })
    }
}

/// A block that breaks a consensus rule: `found` is what the block carries, `required`
/// what the rules, its body or its execution give (see [`Basis`]). Rendered as in
/// JSON-RPC (`0x…` hashes, decimal numbers, `absent` for a missing optional field), and
/// worded so that the block's value and the node's are never confused:
/// `block 3: invalid gasUsed: header has 53064, execution gives 200000`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("block {number}: invalid {field}: {subject} has {found}, {basis} {required}")]
pub struct ConsensusError {
    pub number: u64,
    pub field: Field,
    /// Whose value `found` is: `header`, `block` (its body), `uncle 0`, `transaction 2`.
    pub subject: String,
    pub found: String,
    pub basis: Basis,
    pub required: String,
}

impl ConsensusError {
    /// A header field that breaks a rule given the parent.
    pub fn rule(number: u64, field: Field, required: impl fmt::Display, found: impl fmt::Display) -> Self {
        Self::with(number, field, "header", found, Basis::Rules, required)
    }

    /// A header field that disagrees with the block's body (roots, blob gas).
    pub fn body(number: u64, field: Field, gives: impl fmt::Display, found: impl fmt::Display) -> Self {
        Self::with(number, field, "header", found, Basis::Body, gives)
    }

    /// A header field that disagrees with what executing the block produced.
    pub fn execution(number: u64, field: Field, gives: impl fmt::Display, found: impl fmt::Display) -> Self {
        Self::with(number, field, "header", found, Basis::Execution, gives)
    }

    pub fn with(
        number: u64,
        field: Field,
        subject: impl Into<String>,
        found: impl fmt::Display,
        basis: Basis,
        required: impl fmt::Display,
    ) -> Self {
        Self { number, field, subject: subject.into(), found: found.to_string(), basis, required: required.to_string() }
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
