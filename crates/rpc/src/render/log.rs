//! Log objects as alloy's RPC `Log`.

use alloy_primitives::B256;
use alloy_rpc_types_eth::Log;

use super::TxPosition;

pub fn log(inner: &alloy_primitives::Log, position: &TxPosition, tx_hash: B256, log_index: u64) -> Log {
    Log {
        inner: inner.clone(),
        block_hash: Some(position.receipt_block_hash()),
        block_number: Some(position.block_number),
        block_timestamp: Some(position.block_timestamp),
        transaction_hash: Some(tx_hash),
        transaction_index: Some(position.index),
        log_index: Some(log_index),
        removed: false,
    }
}

/// eth_getLogs' result.
pub fn found_logs(found: &[preconf_chain::api::logs::FoundLog]) -> String {
    let list: Vec<Log> = found
        .iter()
        .map(|f| {
            let etx = &f.block.txs[f.tx_index];
            log(&etx.receipt.logs[f.log_in_tx], &TxPosition::in_block(&f.block, f.tx_index), etx.hash(), f.log_index)
        })
        .collect();
    super::to_json(&list)
}
