//! Why an import stopped. Every variant names the block (and, where it applies, the
//! transaction or the header field), so a failed import can be followed up by hand.

use alloy_primitives::{Address, B256};

use super::deposits::DepositLogError;
use crate::consensus::{BlockFileError, ConsensusError, Field};
use crate::error::{Cause, ChainError, InvalidTx};

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
    Transaction { number: u64, index: usize, hash: B256, reason: TxFault },
    /// The block cannot be executed for another reason (a failing EIP-7002/7251 system
    /// call, a missing system contract, malformed deposit logs).
    #[error("block {number}: {reason}")]
    Block { number: u64, reason: BlockFault },
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
}

/// Why a transaction the block includes cannot execute.
#[derive(Debug, thiserror::Error)]
pub enum TxFault {
    #[error("invalid signature: {0}")]
    Signature(#[source] Cause),
    #[error(
        "gas limit reached: the transaction's gas limit {gas_limit} exceeds the {remaining} gas left in the block"
    )]
    GasLimitReached { gas_limit: u64, remaining: u64 },
    /// revm refused it before executing (nonce, funds, fees, intrinsic gas).
    #[error(transparent)]
    Invalid(Box<InvalidTx>),
    /// What revm reports beyond the transaction's fault or the database's (a header it
    /// cannot use), in its words.
    #[error("{0}")]
    Evm(#[source] Cause),
}

/// Why a block cannot be executed, apart from its transactions.
#[derive(Debug, thiserror::Error)]
pub enum BlockFault {
    /// A system call (EIP-2935/4788 before the transactions, EIP-7002/7251 after) failed,
    /// or its contract is missing.
    #[error(transparent)]
    SystemCall(Box<ChainError>),
    #[error(transparent)]
    Deposits(DepositLogError),
}

/// Every sender of block `number`'s `txs` by `recover` (a transaction's hash and sender),
/// the first that cannot be recovered as the block's error: one shape for Ethereum's and
/// the OP import's transactions.
pub(super) fn recover_senders<T, E: std::error::Error + Send + Sync + 'static>(
    number: u64,
    txs: &[T],
    recover: impl Fn(&T) -> (B256, Result<Address, E>),
) -> Result<Vec<Address>, ImportError> {
    txs.iter()
        .enumerate()
        .map(|(index, tx)| {
            let (hash, sender) = recover(tx);
            sender.map_err(|e| ImportError::Transaction {
                number,
                index,
                hash,
                reason: TxFault::Signature(Cause::new(e)),
            })
        })
        .collect()
}
