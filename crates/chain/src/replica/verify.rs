//! What a replica checks of a sealed block before it shows it, and how it says no.

use alloy_consensus::proofs;
use alloy_primitives::{Bloom, B256};
use alloy_trie::root::ordered_trie_root_encoded;

use crate::error::ChainError;
use crate::wire::{CodecError, SealedBlock};

/// Why a sealed block cannot be applied; each stops the replica.
#[derive(Debug, thiserror::Error)]
pub(super) enum Refused {
    #[error("undecodable message: {0}")]
    Decode(#[from] CodecError),
    #[error("block {number}: {what} mismatch: computed {ours}, the leader's header says {theirs}")]
    Mismatch { number: u64, what: &'static str, ours: String, theirs: String },
    #[error("block {number} is {theirs} in the stream but {ours} here: the stream follows another chain")]
    Diverged { number: u64, ours: B256, theirs: B256 },
    #[error("the stream goes from this replica's head {head} to block {number}: the blocks in between are not in it")]
    Missing { head: u64, number: u64 },
    #[error(
        "the leader went back to block {to}, but this replica kept state changes only from block {kept_from}: \
         start it again from a copy of the leader's datadir"
    )]
    CannotRewind { to: u64, kept_from: u64 },
    /// Not a verdict on the block: the store failed; the same message is tried again.
    #[error(transparent)]
    Store(#[from] ChainError),
}

pub(super) fn check<T: PartialEq + std::fmt::Display>(
    number: u64,
    what: &'static str,
    ours: T,
    theirs: T,
) -> Result<(), Refused> {
    if ours == theirs {
        return Ok(());
    }
    Err(Refused::Mismatch { number, what, ours: ours.to_string(), theirs: theirs.to_string() })
}

/// Everything of a sealed block that its header commits to, but the state root.
pub(super) fn verify_block(b: &SealedBlock) -> Result<(), Refused> {
    let n = b.header.number;
    check(n, "block hash", b.header.hash_slow(), b.hash)?;
    let txs: Vec<Vec<u8>> = b.txs.iter().map(|t| t.tx.encoded_2718()).collect();
    check(n, "transactions root", ordered_trie_root_encoded(&txs), b.header.transactions_root)?;
    let receipts: Vec<Vec<u8>> = b.txs.iter().map(|t| t.receipt_2718()).collect();
    check(n, "receipts root", ordered_trie_root_encoded(&receipts), b.header.receipts_root)?;
    let mut bloom = Bloom::default();
    let mut cumulative = 0;
    for t in &b.txs {
        t.receipt.logs.iter().for_each(|l| bloom.accrue_log(l));
        cumulative += t.gas_used;
        check(n, "cumulative gas of a receipt", cumulative, t.receipt.cumulative_gas_used)?;
    }
    check(n, "logs bloom", bloom, b.header.logs_bloom)?;
    check(n, "gas used", cumulative, b.header.gas_used)?;
    check(n, "ommers hash", proofs::calculate_ommers_root(&b.ommers), b.header.ommers_hash)?;
    match b.header.withdrawals_root {
        Some(root) => check(n, "withdrawals root", proofs::calculate_withdrawals_root(&b.withdrawals), root)?,
        None => check(n, "withdrawals", 0, b.withdrawals.len())?,
    }
    Ok(())
}
