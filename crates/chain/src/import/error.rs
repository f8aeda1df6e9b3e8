//! Why an import stopped. Every variant names the block (and, where it applies, the
//! transaction or the header field), so a failed import can be followed up by hand.

use alloy_primitives::B256;

use crate::consensus::{BlockFileError, ConsensusError, Field};
use crate::error::ChainError;

#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// The blocks file cannot be read or decoded.
    #[error(transparent)]
    File(#[from] BlockFileError),
    /// A header or body breaks a consensus rule, or execution disagrees with the header.
    #[error(transparent)]
    Consensus(#[from] ConsensusError),
    /// A transaction the block includes cannot execute (bad signature, nonce, funds, gas).
    #[error("block {number}: invalid transaction {index} ({hash}): {reason}")]
    Transaction { number: u64, index: usize, hash: B256, reason: String },
    /// The block cannot be executed for another reason (a failing EIP-7002/7251 system
    /// call, a missing system contract, malformed deposit logs).
    #[error("block {number}: {reason}")]
    Block { number: u64, reason: String },
    /// The file holds a block the store already has under another hash: another chain.
    #[error(
        "block {number}: the store holds another block at this height ({stored}, the file has {file}); \
         import into a new --datadir"
    )]
    Conflict { number: u64, stored: B256, file: B256 },
    /// The file skips blocks the store does not have.
    #[error("block {number}: the store's head is block {head}, so the next block must be {}: blocks are missing", head + 1)]
    Gap { number: u64, head: u64 },
    /// `--finalized` after `--safe`: refused before anything is imported.
    #[error("--finalized {finalized} is after --safe {safe}")]
    FinalizedAfterSafe { safe: u64, finalized: u64 },
    /// `--safe` or `--finalized` past the head the import reached.
    #[error("--safe {safe} and --finalized {finalized} must satisfy finalized <= safe <= head ({head})")]
    ForkChoice { safe: u64, finalized: u64, head: u64 },
    /// The store or the genesis failed.
    #[error(transparent)]
    Chain(#[from] ChainError),
}

impl ImportError {
    /// The block the import stopped at, when the failure belongs to one.
    pub fn block_number(&self) -> Option<u64> {
        match self {
            ImportError::Consensus(e) => Some(e.number),
            ImportError::Transaction { number, .. }
            | ImportError::Block { number, .. }
            | ImportError::Conflict { number, .. }
            | ImportError::Gap { number, .. } => Some(*number),
            ImportError::File(_)
            | ImportError::FinalizedAfterSafe { .. }
            | ImportError::ForkChoice { .. }
            | ImportError::Chain(_) => None,
        }
    }

    /// The header field that did not match, for consensus failures.
    pub fn field(&self) -> Option<Field> {
        match self {
            ImportError::Consensus(e) => Some(e.field),
            _ => None,
        }
    }

    pub(crate) fn block(number: u64, reason: impl std::fmt::Display) -> Self {
        ImportError::Block { number, reason: reason.to_string() }
    }
}
