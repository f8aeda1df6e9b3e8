//! Reads answered on the event loop (cheap: one view load and a few lookups), and the
//! reads that grow with block size, sent to the scan threads. On a forked chain a read
//! that needs the upstream is not answered on the event loop: `read_or_defer` sends it to
//! the upstream threads and answers with a promise (their shape: `read_methods!`).
// The promise's spelled-out type is what clippy calls complex.
#![allow(clippy::type_complexity)]

use napi::bindgen_prelude::Either;
use napi_derive::napi;
use preconf_rpc::params;
use preconf_rpc::render::{self, block, receipt, to_json, transaction};

use preconf_chain::types::BlockData;
use serde_json::json;
use std::sync::Arc;

use crate::failure::NativeFailure;
use crate::history;
use crate::work::Class;
use crate::NativeNode;

read_methods! {
    fn read_balance(address, block) => |n| {
        Ok(render::quantity(n.api().state.balance(params::address(&address)?, params::block(&block)?)?))
    };

    fn read_transaction_count(address, block) => |n| {
        Ok(render::quantity(n.api().state.transaction_count(params::address(&address)?, params::block(&block)?)?))
    };

    fn read_code(address, block) => |n| {
        Ok(format!("\"{}\"", n.api().state.code(params::address(&address)?, params::block(&block)?)?))
    };

    fn read_storage_at(address, slot, block) => |n| {
        Ok(render::word(n.api().state.storage(params::address(&address)?, params::slot(&slot)?, params::block(&block)?)?))
    };

    #[doc = " A block with transaction hashes (`null` when it does not exist)."]
    fn read_block(block) => |n| {
        let local = |b: Option<Arc<BlockData>>| Ok(b.map_or("null".into(), |b| block::block(&b, false)));
        history::by_block(n, params::block(&block)?, "eth_getBlockByNumber", Some(json!(false)), local)
    };

    fn read_block_transaction_count(block) => |n| {
        let local = |b: Option<Arc<BlockData>>| Ok(b.map_or("null".into(), |b| render::quantity(b.txs.len())));
        history::by_block(n, params::block(&block)?, "eth_getBlockTransactionCountByNumber", None, local)
    };

    #[doc = " `index` is a 0x quantity."]
    fn read_transaction_by_block_and_index(block, index) => |n| {
        let at = usize::from_str_radix(index.trim_start_matches("0x"), 16).unwrap_or(usize::MAX);
        let local = |found: Option<Arc<BlockData>>| {
            Ok(match found {
                Some(b) if at < b.txs.len() => {
                    to_json(&transaction::executed(&b.txs[at], render::TxPosition::in_block(&b, at)))
                }
                _ => "null".into(),
            })
        };
        let method = "eth_getTransactionByBlockNumberAndIndex";
        history::by_block(n, params::block(&block)?, method, Some(json!(index)), local)
    };

    fn read_transaction(hash) => |n| {
        let hash = params::hash(&hash)?;
        let local = transaction::lookup(n.api().transactions.by_hash(hash)?);
        history::by_transaction(n, hash, "eth_getTransactionByHash", local)
    };

    fn read_transaction_receipt(hash) => |n| {
        let hash = params::hash(&hash)?;
        let found = n.api().transactions.receipt(hash)?;
        let local = found.map_or("null".into(), |(b, i)| receipt::receipt_in_block(&b, i, n.chain().spec()));
        history::by_transaction(n, hash, "eth_getTransactionReceipt", local)
    };
}

#[napi]
impl NativeNode {
    #[napi]
    pub fn block_number(&self) -> String {
        render::quantity(self.node.chain().view().head_number())
    }

    /// eth_coinbase: the address the next block credits its fees to.
    #[napi]
    pub fn coinbase(&self) -> String {
        format!("\"{:#x}\"", self.node.api().node.coinbase())
    }

    /// The receipt of a pre-confirmed or sealed transaction, whatever `preconfReceipts`
    /// says (eth_sendRawTransactionSync answers with it).
    #[napi]
    pub fn get_preconfirmed_receipt(&self, hash: String) -> Either<String, NativeFailure> {
        self.sync(|n| {
            let found = n.api().transactions.preconfirmed_receipt(params::hash(&hash)?)?;
            Ok(found.map_or("null".into(), |(b, i)| receipt::receipt_in_block(&b, i, n.chain().spec())))
        })
    }

    /// Where a transaction is: pooled (pending/queued), pre-confirmed, included, dropped.
    #[napi]
    pub fn tx_status(&self, hash: String) -> Either<String, NativeFailure> {
        self.sync(|n| Ok(transaction::progress(&n.api().transactions.progress(params::hash(&hash)?)?)))
    }
}

work_methods! {
    #[doc = " A block with full transaction objects: grows with the block, so off the event loop."]
    fn get_block_full(block: String) per client on Class::Scans => |n| {
        let local = |b: Option<Arc<BlockData>>| Ok(b.map_or("null".into(), |b| block::block(&b, true)));
        history::by_block(n, params::block(&block)?, "eth_getBlockByNumber", Some(json!(true)), local)
    };

    fn get_block_receipts(block: String) per client on Class::Scans => |n| {
        let local = |b: Option<Arc<BlockData>>| Ok(b.map_or("null".into(), |b| receipt::block_receipts(&b, n.chain().spec())));
        history::by_block(n, params::block(&block)?, "eth_getBlockReceipts", None, local)
    };
}
