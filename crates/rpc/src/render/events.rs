//! Payloads of chain events for subscribers: rendered once per event (not per
//! subscription), off the builder's thread, and only for the kinds someone listens to.

use alloy_primitives::B256;
use alloy_rpc_types_eth::Log;
use preconf_chain::types::BlockData;
use serde_json::{json, Value};

use super::block::{block_object, header, pending_value};
use super::log::log;
use super::transaction::transaction;
use super::{to_json, TxPosition};

fn hashes(block: &BlockData, from: usize) -> Vec<B256> {
    block.txs[from..].iter().map(|t| t.hash()).collect()
}

/// `{"number","index","txHashes"}`: which transactions a pre-confirmation added (wakes
/// eth_sendRawTransactionSync callers and feeds hash-only transaction subscriptions).
pub fn preconf_summary(block: &BlockData, first_new: usize) -> String {
    json!({
        "number": format!("{:#x}", block.header.number),
        "index": block.preconf_index.unwrap_or_default(),
        "txHashes": hashes(block, first_new),
    })
    .to_string()
}

/// `{"number","hash","txHashes"}` of a sealed block.
pub fn head_summary(block: &BlockData) -> String {
    json!({
        "number": format!("{:#x}", block.header.number),
        "hash": block.hash.unwrap_or_default(),
        "txHashes": hashes(block, 0),
    })
    .to_string()
}

/// The block being built, as `newFlashblocks` delivers it, with the time it became
/// visible (lets subscribers measure freshness).
pub fn flashblock(block: &BlockData, unix_ms: u64) -> String {
    let mut v = pending_value(block, &block_object(block, false));
    if let Some(m) = v.as_object_mut() {
        m.insert("preconfTimestampMs".into(), json!(unix_ms));
    }
    v.to_string()
}

/// Counts the logs before a pre-confirmation's first new transaction from where the
/// previous one of the same block left off, so a renderer that sees every pre-confirmation
/// counts each transaction's logs once per block, not once per pre-confirmation.
#[derive(Default)]
pub struct LogCursor {
    number: u64,
    txs: usize,
    logs: u64,
}

impl LogCursor {
    /// Block-wide index of the first log of `block.txs[first]`.
    pub fn first_log(&mut self, block: &BlockData, first: usize) -> u64 {
        if self.number != block.header.number || self.txs > first || first > block.txs.len() {
            *self = Self { number: block.header.number, ..Self::default() };
        }
        let first = first.min(block.txs.len());
        self.logs += block.txs[self.txs..first].iter().map(|t| t.receipt.logs.len() as u64).sum::<u64>();
        self.txs = first;
        self.logs
    }
}

/// Logs of the transactions from `first` (whose first log has index `log_index`), with
/// block-wide indices, one list per transaction.
fn logs_from(block: &BlockData, first: usize, mut log_index: u64) -> Vec<Vec<Log>> {
    block.txs[first..]
        .iter()
        .enumerate()
        .map(|(offset, etx)| {
            let position = TxPosition::in_block(block, first + offset);
            let logs: Vec<Log> = etx
                .receipt
                .logs
                .iter()
                .map(|l| {
                    let out = log(l, &position, etx.hash(), log_index);
                    log_index += 1;
                    out
                })
                .collect();
            logs
        })
        .collect()
}

/// Each new pre-confirmed transaction as a full object with its `logs`; `first_log` is the
/// index of the first of them (`LogCursor`).
pub fn flashblock_txs(block: &BlockData, first_new: usize, first_log: u64) -> Vec<String> {
    let logs = logs_from(block, first_new, first_log);
    block.txs[first_new..]
        .iter()
        .zip(logs)
        .enumerate()
        .map(|(offset, (etx, logs))| {
            let position = TxPosition::in_block(block, first_new + offset);
            let mut v = serde_json::to_value(transaction(&etx.tx, etx.sender, Some(position))).unwrap_or(Value::Null);
            if let Some(m) = v.as_object_mut() {
                m.insert("logs".into(), serde_json::to_value(logs).unwrap_or(Value::Null));
            }
            v.to_string()
        })
        .collect()
}

/// Every log of the transactions from `first` (the first with index `first_log`) as one
/// list; `None` when there are none.
pub fn logs(block: &BlockData, first: usize, first_log: u64) -> Option<String> {
    let all: Vec<Log> = logs_from(block, first, first_log).into_iter().flatten().collect();
    (!all.is_empty()).then(|| to_json(&all))
}

/// A sealed block's header object, as `newHeads` delivers it.
pub fn new_head(block: &BlockData) -> String {
    to_json(&header(block))
}
