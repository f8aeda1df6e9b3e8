//! Receipts (geth's shape) as alloy's `TransactionReceipt`.

use alloy_consensus::{Receipt, ReceiptEnvelope, ReceiptWithBloom, Transaction as _};
use alloy_rpc_types_eth::{Log, TransactionReceipt};
use preconf_chain::consensus::{blob::GAS_PER_BLOB, header_blob_base_fee};
use preconf_chain::spec::ChainSpec;
use preconf_chain::types::{BlockData, ExecutedTx};

use super::op::OpBlockContext;
use super::{log::log, to_json, TxPosition};

/// One receipt; `first_log_index` is the block-wide index of its first log;
/// `blob_base_fee` the block's (Cancun on), which blob transactions' receipts carry.
pub fn receipt(
    etx: &ExecutedTx,
    position: &TxPosition,
    first_log_index: u64,
    blob_base_fee: Option<u128>,
) -> TransactionReceipt {
    let tx_hash = etx.hash();
    let logs: Vec<Log> = etx
        .receipt
        .logs
        .iter()
        .enumerate()
        .map(|(i, l)| log(l, position, tx_hash, first_log_index + i as u64))
        .collect();
    let logs_bloom = alloy_primitives::logs_bloom(etx.receipt.logs.iter());
    let blobs = etx.tx.blob_versioned_hashes().map(|h| h.len());
    let receipt = Receipt { status: etx.receipt.status, cumulative_gas_used: etx.receipt.cumulative_gas_used, logs };
    let envelope = ReceiptEnvelope::from_typed(etx.tx_type(), ReceiptWithBloom { receipt, logs_bloom });
    TransactionReceipt {
        inner: envelope,
        transaction_hash: tx_hash,
        transaction_index: Some(position.index),
        block_hash: Some(position.receipt_block_hash()),
        block_number: Some(position.block_number),
        gas_used: etx.gas_used,
        effective_gas_price: etx.tx.effective_gas_price(position.base_fee),
        // geth: present on blob transactions only.
        blob_gas_used: blobs.map(|n| n as u64 * GAS_PER_BLOB),
        blob_gas_price: blobs.and(blob_base_fee),
        from: etx.sender,
        to: etx.tx.to(),
        contract_address: etx.contract_address(),
    }
}

/// The receipt of the transaction at `index` of `block`.
pub fn receipt_in_block(block: &BlockData, index: usize, spec: &ChainSpec) -> String {
    let first_log: usize = block.txs[..index].iter().map(|t| t.receipt.logs.len()).sum();
    let blob_fee = header_blob_base_fee(spec, &block.header);
    let etx = &block.txs[index];
    let r = receipt(etx, &TxPosition::in_block(block, index), first_log as u64, blob_fee);
    match spec.op() {
        None => to_json(&r),
        Some(op) => OpBlockContext::of(block, op).receipt(&r, etx).to_string(),
    }
}

/// Every receipt of a block, with block-wide log indices (on an OP chain with op-geth's
/// members).
pub fn block_receipts(block: &BlockData, spec: &ChainSpec) -> String {
    let blob_fee = header_blob_base_fee(spec, &block.header);
    match spec.op() {
        None => to_json(&numbered_receipts(block, blob_fee).map(|(r, _)| r).collect::<Vec<_>>()),
        Some(op) => {
            let op = OpBlockContext::of(block, op);
            to_json(&numbered_receipts(block, blob_fee).map(|(r, etx)| op.receipt(&r, etx)).collect::<Vec<_>>())
        }
    }
}

/// The block's receipts in order, each with its transaction, the logs numbered block-wide.
fn numbered_receipts(
    block: &BlockData,
    blob_fee: Option<u128>,
) -> impl Iterator<Item = (TransactionReceipt, &ExecutedTx)> + '_ {
    let mut next_log = 0u64;
    block.txs.iter().enumerate().map(move |(i, etx)| {
        let r = receipt(etx, &TxPosition::in_block(block, i), next_log, blob_fee);
        next_log += etx.receipt.logs.len() as u64;
        (r, &**etx)
    })
}
