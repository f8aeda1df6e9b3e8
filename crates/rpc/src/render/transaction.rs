//! Transaction objects (geth's RPCTransaction) as alloy's `Transaction`.

use alloy_consensus::{transaction::Recovered, Transaction as _, TxEnvelope};
use alloy_primitives::Address;
use alloy_rpc_types_eth::Transaction;
use preconf_chain::api::transactions::{TxLookup, TxProgress};
use preconf_chain::pool::TxStatus;
use preconf_chain::types::ExecutedTx;
use preconf_op::{OpTx, TxDeposit};
use serde::Serialize;
use serde_json::{json, Map, Value};

use super::{to_json, TxPosition};

/// A transaction object of any transaction a block holds: an Ethereum one as alloy renders
/// it, an OP deposit (which alloy's `Transaction` cannot hold) as op-geth does.
/// Rendered once and serialized at once: boxing the Ethereum variant (what the lint asks)
/// would cost an allocation per transaction on the read path to save bytes on a stack.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, Serialize)]
#[serde(untagged)]
pub enum RpcTx {
    Eth(Transaction),
    Deposit(Map<String, Value>),
}

/// A block's transaction at `position`.
pub fn executed(etx: &ExecutedTx, position: TxPosition) -> RpcTx {
    op_transaction(&etx.tx, etx.sender, Some(position), etx.deposit_nonce)
}

/// `transaction` for either kind; `deposit_nonce` is a deposit's receipt nonce.
pub fn op_transaction(tx: &OpTx, sender: Address, position: Option<TxPosition>, deposit_nonce: Option<u64>) -> RpcTx {
    match tx {
        OpTx::Eth(tx) => RpcTx::Eth(transaction(tx, sender, position)),
        OpTx::Deposit(d) => RpcTx::Deposit(deposit(d, position, deposit_nonce)),
    }
}

/// A deposit as op-geth renders one: no fee fields but a zero gas price, a zero signature,
/// and its `sourceHash`, `mint`, `isSystemTx`, with the receipt's nonce as its `nonce`.
fn deposit(d: &TxDeposit, position: Option<TxPosition>, deposit_nonce: Option<u64>) -> Map<String, Value> {
    let hex = |n: u64| Value::String(format!("{n:#x}"));
    let mut m = Map::new();
    m.insert("blockHash".into(), json!(position.and_then(|p| p.block_hash)));
    m.insert("blockNumber".into(), position.map_or(Value::Null, |p| hex(p.block_number)));
    if let Some(p) = position {
        m.insert("blockTimestamp".into(), hex(p.block_timestamp));
    }
    m.insert("transactionIndex".into(), position.map_or(Value::Null, |p| hex(p.index)));
    m.insert("hash".into(), json!(d.hash()));
    m.insert("type".into(), hex(u64::from(preconf_op::deposit::DEPOSIT_TX_TYPE)));
    m.insert("from".into(), json!(d.from));
    m.insert("to".into(), json!(d.to.to()));
    m.insert("gas".into(), hex(d.gas_limit));
    m.insert("gasPrice".into(), hex(0));
    m.insert("value".into(), json!(d.value));
    m.insert("input".into(), json!(d.input));
    m.insert("nonce".into(), hex(0));
    for key in ["v", "r", "s"] {
        m.insert(key.into(), hex(0));
    }
    m.extend(preconf_op::rpc::deposit_tx_members(d, deposit_nonce, deposit_nonce.is_some()));
    m
}

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
            to_json(&executed(&block.txs[index], TxPosition::in_block(&block, index)))
        }
        Some(TxLookup::Waiting { tx, sender }) => to_json(&op_transaction(&tx, sender, None, None)),
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
