//! Transaction objects (geth's RPCTransaction) as alloy's `Transaction`.

use alloy_consensus::{transaction::Recovered, Transaction as _, TxEnvelope};
use alloy_primitives::Address;
use alloy_rpc_types_eth::Transaction;
use preconf_chain::api::transactions::{TxLookup, TxProgress};
use preconf_chain::pool::TxStatus;
use serde_json::json;

use super::{to_json, TxPosition};

/// A transaction, positioned in a block or (pooled) not. `gasPrice` of a dynamic-fee
/// transaction is what it pays in its block, or its fee cap while it has no block.
pub fn transaction(tx: &TxEnvelope, sender: Address, position: Option<TxPosition>) -> Transaction {
    let effective_gas_price = match position.and_then(|p| p.base_fee) {
        Some(base_fee) if tx.is_dynamic_fee() => tx.effective_gas_price(Some(base_fee)),
        _ if tx.is_dynamic_fee() => tx.max_fee_per_gas(),
        _ => tx.gas_price().unwrap_or_default(),
    };
    Transaction {
        inner: Recovered::new_unchecked(tx.clone(), sender),
        block_hash: position.and_then(|p| p.block_hash),
        block_number: position.map(|p| p.block_number),
        transaction_index: position.map(|p| p.index),
        effective_gas_price: Some(effective_gas_price),
        block_timestamp: position.map(|p| p.block_timestamp),
    }
}

/// eth_getTransactionByHash's result (`null` when unknown).
pub fn lookup(found: Option<TxLookup>) -> String {
    match found {
        Some(TxLookup::Executed { block, index }) => {
            let etx = &block.txs[index];
            to_json(&transaction(&etx.tx, etx.sender, Some(TxPosition::in_block(&block, index))))
        }
        Some(TxLookup::Waiting { tx, sender }) => to_json(&transaction(&tx, sender, None)),
        None => "null".into(),
    }
}

/// preconf_transactionStatus' result.
pub fn progress(p: &TxProgress) -> String {
    let v = match p {
        TxProgress::Preconfirmed { number, index, preconf_index } => json!({
            "status": "preconfirmed",
            "blockNumber": format!("{number:#x}"),
            "transactionIndex": format!("{index:#x}"),
            "preconfIndex": format!("{preconf_index:#x}"),
        }),
        TxProgress::Included { number, hash, index } => json!({
            "status": "included",
            "blockNumber": format!("{number:#x}"),
            "blockHash": hash,
            "transactionIndex": format!("{index:#x}"),
        }),
        TxProgress::InPool(TxStatus::Pending) => json!({ "status": "pending" }),
        TxProgress::InPool(TxStatus::Queued) => json!({ "status": "queued" }),
        TxProgress::InPool(TxStatus::Dropped(reason)) => json!({ "status": "dropped", "reason": reason.to_string() }),
        TxProgress::Unknown => json!({ "status": "unknown" }),
    };
    v.to_string()
}
