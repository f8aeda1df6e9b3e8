//! Payloads of chain events for subscribers: rendered once per event (not per
//! subscription), off the builder's thread, and only for the kinds someone listens to.

use std::fmt::Write;
use std::sync::Arc;

use alloy_primitives::B256;
use alloy_rpc_types_eth::{BlockTransactions, Log};
use preconf_chain::types::{BlockData, TxList};
use serde_json::{json, Value};

use super::block::{block_with, header, pending_value};
use super::log::log;
use super::transaction::executed;
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

/// Renders the block being built as `newFlashblocks` delivers it, with the time it became
/// visible (lets subscribers measure freshness). Every message carries every transaction
/// hash of the block so far: the cursor keeps those of the versions it rendered before (and
/// their RLP size), so a pre-confirmation costs the hashes it added and one copy, not a
/// rendering of the whole block.
#[derive(Default)]
pub struct FlashblockCursor {
    /// The version of the block's transaction list rendered last.
    txs: TxList,
    /// Its hashes, as the inside of a JSON array.
    hashes: String,
    /// Its transactions' RLP payload (for the block's `size`).
    rlp_payload: usize,
}

impl FlashblockCursor {
    pub fn flashblock(&mut self, block: &BlockData, unix_ms: u64) -> String {
        // Another block, or another branch of this one (the test methods rewind): anew.
        if !block.txs.extends(&self.txs) {
            *self = Self::default();
        }
        let added = &block.txs[self.txs.len()..];
        for t in added {
            let comma = if self.hashes.is_empty() { "" } else { "," };
            let _ = write!(self.hashes, "{comma}\"{:#x}\"", t.hash());
        }
        self.rlp_payload += BlockData::txs_rlp_payload(added);
        self.txs = block.txs.clone();
        let object = block_with(block, BlockTransactions::Hashes(Vec::new()), block.rlp_size_with(self.rlp_payload));
        let mut v = pending_value(block, &object);
        let Some(fields) = v.as_object_mut() else { return v.to_string() };
        fields.insert("preconfTimestampMs".into(), json!(unix_ms));
        // The object as serde_json writes it, the kept hashes spliced in as `transactions`.
        let mut out = String::with_capacity(self.hashes.len() + 2048);
        out.push('{');
        for (i, (key, value)) in fields.iter().enumerate() {
            let comma = if i == 0 { "" } else { "," };
            let _ = match key.as_str() {
                "transactions" => write!(out, "{comma}\"transactions\":[{}]", self.hashes),
                _ => write!(out, "{comma}{}:{value}", Value::from(key.as_str())),
            };
        }
        out.push('}');
        out
    }
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
            let mut v = serde_json::to_value(executed(etx, position)).unwrap_or(Value::Null);
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

/// Every log of blocks taken off the chain by a rewind, each with `removed: true`, as one
/// list: the blocks oldest first, each block's logs in order, as geth's RemovedLogsEvent
/// lists them (with their block hash, number and indices as they were); `None` when there
/// are none.
pub fn removed_logs(blocks: &[Arc<BlockData>]) -> Option<String> {
    let all: Vec<Log> = blocks
        .iter()
        .flat_map(|b| logs_from(b, 0, 0).into_iter().flatten())
        .map(|l| Log { removed: true, ..l })
        .collect();
    (!all.is_empty()).then(|| to_json(&all))
}

/// A sealed block's header object, as `newHeads` delivers it.
pub fn new_head(block: &BlockData) -> String {
    to_json(&header(block))
}

#[cfg(test)]
mod tests {
    use alloy_consensus::{Header, Receipt, Signed, TxEnvelope, TxLegacy};
    use alloy_primitives::{Address, Signature, U256};
    use preconf_chain::types::ExecutedTx;

    use super::super::block::block_object;
    use super::*;

    fn transfer(i: u64) -> Arc<ExecutedTx> {
        let tx = TxLegacy { nonce: i, gas_limit: 21_000, input: vec![0; i as usize % 7].into(), ..Default::default() };
        let tx =
            TxEnvelope::Legacy(Signed::new_unchecked(tx, Signature::test_signature(), B256::from(U256::from(i + 1))));
        let receipt = Receipt { status: true.into(), cumulative_gas_used: 21_000 * (i + 1), logs: vec![] };
        Arc::new(ExecutedTx::eth(tx, Address::with_last_byte(1), receipt, 21_000))
    }

    /// A transaction whose receipt has `logs` logs, each with its own first topic.
    fn emitting(i: u64, logs: u8) -> Arc<ExecutedTx> {
        let mut etx = (*transfer(i)).clone();
        etx.receipt.logs = (0..logs)
            .map(|k| {
                let topic = B256::with_last_byte(k);
                alloy_primitives::Log::new_unchecked(Address::with_last_byte(9), vec![topic], Default::default())
            })
            .collect();
        Arc::new(etx)
    }

    fn version(number: u64, txs: TxList, index: u64) -> BlockData {
        let header = Header { number, gas_used: 21_000 * txs.len() as u64, ..Default::default() };
        BlockData { header, txs, preconf_index: Some(index), ..Default::default() }
    }

    /// The whole block rendered from scratch, as every message was before the cursor.
    fn from_scratch(block: &BlockData, unix_ms: u64) -> String {
        let mut v = pending_value(block, &block_object(block, false));
        v.as_object_mut().unwrap().insert("preconfTimestampMs".into(), json!(unix_ms));
        v.to_string()
    }

    #[test]
    fn each_message_is_the_whole_block_as_rendered_from_scratch() {
        let mut cursor = FlashblockCursor::default();
        let check = |cursor: &mut FlashblockCursor, block: &BlockData| {
            let unix_ms = 1_795_000_000_000 + block.preconf_index.unwrap();
            assert_eq!(
                cursor.flashblock(block, unix_ms),
                from_scratch(block, unix_ms),
                "index {:?}",
                block.preconf_index
            );
        };
        // A block growing past its list's room (a new buffer), ticks with nothing new, and
        // one the renderer skipped.
        let mut txs = TxList::default();
        let mut n = 0;
        for index in 0..40 {
            let added: Vec<_> = (n..n + index % 4).map(transfer).collect();
            n += added.len() as u64;
            txs = txs.appended(&added);
            if index % 9 != 5 {
                check(&mut cursor, &version(7, txs.clone(), index));
            }
        }
        // The next block, then a rewind to an older version of it that goes another way.
        let base = TxList::from(vec![transfer(100)]);
        let newer = base.appended(&[transfer(101), transfer(102)]);
        check(&mut cursor, &version(8, base.clone(), 0));
        check(&mut cursor, &version(8, newer, 1));
        check(&mut cursor, &version(8, base.appended(&[transfer(103)]), 2));
        check(&mut cursor, &version(8, TxList::default(), 3));
    }

    #[test]
    fn removed_logs_are_every_log_of_the_blocks_oldest_first_each_removed() {
        let block = |number: u64, txs: Vec<Arc<ExecutedTx>>| {
            let hash = Some(B256::with_last_byte(number as u8));
            Arc::new(BlockData { hash, ..version(number, TxList::from(txs), 0) })
        };
        let blocks = [block(4, vec![emitting(0, 2), transfer(1), emitting(2, 1)]), block(5, vec![emitting(3, 1)])];
        let logs: Vec<Value> = serde_json::from_str(&removed_logs(&blocks).unwrap()).unwrap();
        let seen: Vec<(String, String, String, bool)> = logs
            .iter()
            .map(|l| {
                let s = |k: &str| l[k].as_str().unwrap().to_owned();
                (s("blockNumber"), s("transactionIndex"), s("logIndex"), l["removed"].as_bool().unwrap())
            })
            .collect();
        let want = [("0x4", "0x0", "0x0"), ("0x4", "0x0", "0x1"), ("0x4", "0x2", "0x2"), ("0x5", "0x0", "0x0")];
        let want: Vec<_> = want.iter().map(|(b, t, i)| (b.to_string(), t.to_string(), i.to_string(), true)).collect();
        assert_eq!(seen, want);
        assert_eq!(logs[3]["blockHash"], json!(B256::with_last_byte(5)));
        assert_eq!(logs[0]["transactionHash"], json!(blocks[0].txs[0].hash()));
        // Blocks without logs: nothing to send.
        assert_eq!(removed_logs(&[block(6, vec![transfer(4)])]), None);
    }
}
