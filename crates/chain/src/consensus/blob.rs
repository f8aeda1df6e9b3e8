//! Blob gas (EIP-4844) with the fork-dependent parameters of EIP-7691, EIP-7840 and the
//! blob-parameter-only forks (EIP-7892), and Osaka's reserve price (EIP-7918).

use alloy_consensus::{Header, Transaction as _, TxEnvelope};
use alloy_eips::{eip4844::DATA_GAS_PER_BLOB, eip7840::BlobParams};

use crate::spec::ChainSpec;

/// Blob gas one blob uses.
pub const GAS_PER_BLOB: u64 = DATA_GAS_PER_BLOB;

/// The blob gas the block's transactions use.
pub fn blob_gas_used(transactions: &[TxEnvelope]) -> u64 {
    let blobs: usize = transactions.iter().filter_map(|tx| tx.blob_versioned_hashes()).map(|h| h.len()).sum();
    blobs as u64 * GAS_PER_BLOB
}

/// The excess blob gas a block at `timestamp` on top of `parent` must carry, with the
/// parameters of the block's own fork (as geth does at a fork boundary). `None` before
/// Cancun. The first Cancun block's parent has no blob fields and counts as zero.
pub fn next_excess_blob_gas(spec: &ChainSpec, parent: &Header, timestamp: u64) -> Option<u64> {
    let params = spec.blob_params_at(timestamp)?;
    // OP chains have no blobs (Jovian's `blobGasUsed` is the DA footprint): the excess stays 0.
    if spec.op().is_some() {
        return Some(0);
    }
    let parent_excess = parent.excess_blob_gas.unwrap_or(0);
    let parent_used = parent.blob_gas_used.unwrap_or(0);
    Some(excess_blob_gas(&params, parent_excess, parent_used, parent.base_fee_per_gas.unwrap_or(0)))
}

/// EIP-4844's running excess, with EIP-7918 from Osaka on: while the execution base fee
/// times `BLOB_BASE_COST` outprices the blob base fee, the excess only grows (by the used
/// gas scaled by (max - target) / max), so the blob fee climbs back to the reserve price.
/// Before Osaka `blob_base_cost` is 0 and that branch never applies.
pub fn excess_blob_gas(params: &BlobParams, parent_excess: u64, parent_used: u64, parent_base_fee: u64) -> u64 {
    let total = parent_excess + parent_used;
    let target = params.target_blob_gas_per_block();
    if total < target {
        return 0;
    }
    let reserve = params.blob_base_cost as u128 * parent_base_fee as u128;
    let blob_price = GAS_PER_BLOB as u128 * params.calc_blob_fee(parent_excess);
    if params.blob_base_cost > 0 && reserve > blob_price {
        let scaled = parent_used * (params.max_blob_count - params.target_blob_count) / params.max_blob_count;
        return parent_excess + scaled;
    }
    total - target
}

/// The blob base fee (wei per blob gas) of a block with this excess blob gas.
pub fn blob_base_fee(params: &BlobParams, excess_blob_gas: u64) -> u128 {
    params.calc_blob_fee(excess_blob_gas)
}

/// The blob base fee of the block at `header`, with the parameters of its own fork: what
/// revm's `BlockEnv` needs. `None` before Cancun.
pub fn header_blob_base_fee(spec: &ChainSpec, header: &Header) -> Option<u128> {
    let params = spec.blob_params_at(header.timestamp)?;
    Some(blob_base_fee(&params, header.excess_blob_gas.unwrap_or(0)))
}
