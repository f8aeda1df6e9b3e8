//! Block and header objects (geth's RPCMarshalBlock / RPCMarshalHeader) as alloy's `Block`.

use alloy_eips::eip4895::Withdrawals;
use alloy_primitives::U256;
use alloy_rpc_types_eth::{BlockTransactions, Header};
use preconf_chain::exec::outputs::{revert_reason, TxOutput};
use preconf_chain::types::BlockData;
use serde_json::Value;

use super::transaction::{executed, RpcTx};

/// A block object whose transactions may include OP deposits.
pub type Block = alloy_rpc_types_eth::Block<RpcTx>;
use super::{quantity, to_json, TxPosition};

/// The header object, with `hash` and `size` (what `newHeads` subscribers receive).
pub fn header(data: &BlockData) -> Header {
    header_sized(data, data.rlp_size())
}

/// `header` with the block's RLP size known.
fn header_sized(data: &BlockData, size: usize) -> Header {
    Header {
        hash: data.hash.unwrap_or_default(),
        inner: data.header.clone(),
        total_difficulty: None,
        size: Some(U256::from(size)),
    }
}

/// The block object; `full` embeds transaction objects instead of hashes.
pub fn block_object(data: &BlockData, full: bool) -> Block {
    let transactions = if full {
        BlockTransactions::Full(
            data.txs.iter().enumerate().map(|(i, t)| executed(t, TxPosition::in_block(data, i))).collect(),
        )
    } else {
        BlockTransactions::Hashes(data.txs.iter().map(|t| t.hash()).collect())
    };
    block_with(data, transactions, data.rlp_size())
}

/// The block object with `transactions` as given and its RLP `size` known.
pub(super) fn block_with(data: &BlockData, transactions: BlockTransactions<RpcTx>, size: usize) -> Block {
    Block {
        header: header_sized(data, size),
        uncles: data.ommers.iter().map(|h| h.hash_slow()).collect(),
        transactions,
        withdrawals: data.header.withdrawals_root.map(|_| Withdrawals::new(data.withdrawals.clone())),
    }
}

/// A block as JSON text. The block being built is geth's pending block (no hash, nonce or
/// miner yet) plus `preconfIndex`, the pre-confirmation it reflects.
pub fn block(data: &BlockData, full: bool) -> String {
    let object = block_object(data, full);
    if data.hash.is_some() {
        return to_json(&object);
    }
    pending_value(data, &object).to_string()
}

/// The pending block object as a JSON value, with its deviations from a sealed block.
pub fn pending_value(data: &BlockData, object: &Block) -> Value {
    let mut v = serde_json::to_value(object).unwrap_or(Value::Null);
    if let Some(m) = v.as_object_mut() {
        m.insert("hash".into(), Value::Null);
        m.insert("nonce".into(), Value::Null);
        m.insert("miner".into(), Value::Null);
        if let Some(i) = data.preconf_index {
            m.insert("preconfIndex".into(), serde_json::from_str(&quantity(i)).unwrap_or(Value::Null));
        }
    }
    v
}

/// A sealed block with full transactions, each with anvil's `output` (what it returned; none
/// when it halted) and, when it reverted with a reason, `revertReason`: one of the blocks
/// anvil_mine_detailed answers.
pub fn mined_block(data: &BlockData, outputs: &[TxOutput]) -> Value {
    let mut v = serde_json::to_value(block_object(data, true)).unwrap_or(Value::Null);
    let txs = v.get_mut("transactions").and_then(Value::as_array_mut);
    for (tx, out) in txs.into_iter().flatten().zip(outputs) {
        let Some(tx) = tx.as_object_mut() else { continue };
        let (output, reason) = match out {
            TxOutput::Returned(data) => (data, None),
            TxOutput::Reverted(data) => (data, revert_reason(data)),
            TxOutput::Halted => continue,
        };
        if let Some(reason) = reason {
            tx.insert("revertReason".into(), Value::String(reason));
        }
        tx.insert("output".into(), Value::String(output.to_string()));
    }
    v
}
