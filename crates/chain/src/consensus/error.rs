//! Typed failures of block import: a file that does not decode, and a block that breaks
//! a consensus rule. Both name where it happened, so a bad import can be found by hand.

use std::fmt;

use alloy_primitives::B256;

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
    pub subject: Subject,
    pub found: Found,
    pub basis: Basis,
    pub required: Rule,
}

impl ConsensusError {
    /// A header field that breaks a rule given the parent.
    pub fn rule(number: u64, field: Field, required: Rule, found: Found) -> Self {
        Self::with(number, field, Subject::Header, found, Basis::Rules, required)
    }

    pub fn with(number: u64, field: Field, subject: Subject, found: Found, basis: Basis, required: Rule) -> Self {
        Self { number, field, subject, found, basis, required }
    }
}

/// Whose value a [`ConsensusError`] shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Subject {
    #[error("header")]
    Header,
    /// The block as a whole, or its body.
    #[error("block")]
    Block,
    #[error("uncle {0}")]
    Uncle(usize),
    #[error("transaction {0}")]
    Transaction(usize),
    #[error("body's withdrawals")]
    BodyWithdrawals,
}

/// What the block carries where a rule fails.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Found {
    /// A field's value, as JSON-RPC shows it.
    #[error("{0}")]
    Value(String),
    #[error("absent")]
    Absent,
    #[error("present")]
    Present,
    #[error("{0} bytes")]
    Bytes(usize),
    #[error("{0} uncles")]
    Uncles(usize),
    #[error("{0} blob gas")]
    BlobGas(u64),
    #[error("hash {0}")]
    Hash(B256),
    #[error("hash {0}, an ancestor's")]
    AncestorHash(B256),
    #[error("parent {0}")]
    Parent(B256),
    #[error("its blob sidecar (the network form)")]
    BlobSidecar,
}

impl Found {
    pub fn value(v: impl fmt::Display) -> Self {
        Found::Value(v.to_string())
    }

    /// An optional header field: its value, or `absent`.
    pub fn show<T: fmt::Display>(v: Option<T>) -> Self {
        v.map_or(Found::Absent, Found::value)
    }
}

/// What the rules, the body or execution give (see [`Basis`]): the rule that failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Rule {
    /// The one value the field may hold, as JSON-RPC shows it.
    #[error("{0}")]
    Value(String),
    #[error("absent")]
    Absent,
    #[error("present")]
    Present,
    #[error("after {0}")]
    After(u64),
    #[error("{low}..={high}")]
    Within { low: u64, high: u64 },
    #[error("at most {0}")]
    AtMost(u64),
    #[error("at most {0} bytes")]
    AtMostBytes(usize),
    #[error("at most the gas limit {0}")]
    AtMostGasLimit(u64),
    #[error("the canonical form, without blobs, commitments and proofs")]
    CanonicalForm,
    #[error("no blobs before Cancun")]
    NoBlobsBeforeCancun,
    #[error("\"dao-hard-fork\" in the DAO fork's range")]
    DaoExtraData,
    #[error("no \"dao-hard-fork\" on the no-fork side")]
    NoDaoExtraData,
    #[error("an uncle not included before")]
    UncleNotIncluded,
    #[error("a header that is not an ancestor")]
    NotAncestor,
    #[error("a parent among the block's 2nd to 7th ancestors")]
    ParentAmongAncestors,
}

impl Rule {
    pub fn value(v: impl fmt::Display) -> Self {
        Rule::Value(v.to_string())
    }

    /// An optional header field: its value, or `absent`.
    pub fn show<T: fmt::Display>(v: Option<T>) -> Self {
        v.map_or(Rule::Absent, Rule::value)
    }
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
    Malformed { index: u64, offset: u64, reason: Malformed },
}

/// Why the bytes at a block's place in the file are not a block.
#[derive(Debug, thiserror::Error)]
pub enum Malformed {
    #[error("file ends inside the {part}: {present} of {len} bytes present")]
    Truncated { part: Part, present: usize, len: usize },
    #[error("expected an RLP list (a block), found prefix byte 0x{0:02x}")]
    NotAList(u8),
    #[error("non-canonical RLP length (leading zero)")]
    LeadingZero,
    #[error("block length {len} exceeds the {max}-byte limit")]
    TooLong { len: u64, max: u64 },
    #[error("invalid block RLP: {0}")]
    Rlp(#[source] alloy_rlp::Error),
    #[error("{0} bytes left over inside the block list")]
    LeftOver(usize),
}

/// Which part of a block the file ends inside.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Part {
    #[error("block's length prefix")]
    LengthPrefix,
    #[error("block")]
    Block,
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
