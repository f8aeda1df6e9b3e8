//! geth's `txpool_*` shapes: `{"pending": {...}, "queued": {...}}`, senders keyed by their
//! checksummed address, transactions by their nonce as a decimal string. Keys sort as
//! strings, as Go's encoding/json sorts map keys.

use std::collections::BTreeMap;
use std::sync::Arc;

use alloy_consensus::Transaction as _;
use preconf_chain::api::txpool::{PoolContent, PoolCounts, SenderTxs};
use preconf_chain::pool::PooledTx;
use serde::Serialize;

use super::{to_json, transaction::transaction};

type ByNonce<T> = BTreeMap<String, T>;

#[derive(Serialize)]
struct Split<T> {
    pending: T,
    queued: T,
}

fn by_nonce<T>(txs: &[Arc<PooledTx>], f: &impl Fn(&PooledTx) -> T) -> ByNonce<T> {
    txs.iter().map(|t| (t.nonce.to_string(), f(t))).collect()
}

fn by_sender<T>(content: &PoolContent, f: impl Fn(&PooledTx) -> T) -> Split<BTreeMap<String, ByNonce<T>>> {
    let mut out = Split { pending: BTreeMap::new(), queued: BTreeMap::new() };
    for (sender, txs) in content {
        let key = sender.to_checksum(None);
        if !txs.pending.is_empty() {
            out.pending.insert(key.clone(), by_nonce(&txs.pending, &f));
        }
        if !txs.queued.is_empty() {
            out.queued.insert(key, by_nonce(&txs.queued, &f));
        }
    }
    out
}

/// A pooled transaction as geth's pending RPCTransaction (no block fields; `gasPrice` is
/// the fee cap of a dynamic-fee transaction).
fn pooled(t: &PooledTx) -> alloy_rpc_types_eth::Transaction {
    transaction(&t.tx, t.sender, None)
}

/// geth's one-line summary: `<to>: <value> wei + <gas> gas × <gas price> wei`, with
/// `contract creation` for deployments and the fee cap as the price of dynamic-fee ones.
fn summary(t: &PooledTx) -> String {
    let to = t.tx.to().map_or_else(|| "contract creation".to_string(), |a| a.to_checksum(None));
    format!("{to}: {} wei + {} gas × {} wei", t.tx.value(), t.gas_limit, t.max_fee)
}

/// txpool_status: `{"pending":"0x…","queued":"0x…"}`.
pub fn status(c: PoolCounts) -> String {
    format!("{{\"pending\":\"{:#x}\",\"queued\":\"{:#x}\"}}", c.pending, c.queued)
}

/// txpool_content.
pub fn content(content: &PoolContent) -> String {
    to_json(&by_sender(content, pooled))
}

/// txpool_inspect.
pub fn inspect(content: &PoolContent) -> String {
    to_json(&by_sender(content, summary))
}

/// txpool_contentFrom: one sender's `{"pending": {nonce: tx}, "queued": {nonce: tx}}`.
pub fn content_from(txs: Option<&SenderTxs>) -> String {
    let empty = SenderTxs::default();
    let txs = txs.unwrap_or(&empty);
    to_json(&Split { pending: by_nonce(&txs.pending, &pooled), queued: by_nonce(&txs.queued, &pooled) })
}
