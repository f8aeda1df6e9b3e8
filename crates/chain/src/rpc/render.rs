use alloy_consensus::{transaction::to_eip155_value, Header, Transaction, TxEnvelope, TxType};
use alloy_eips::Typed2718;
use alloy_primitives::{Address, Bytes, Log, B256, U256};
use serde_json::{json, Map, Value};

use crate::types::{BlockData, ExecutedTx};

pub fn qty<T: std::fmt::LowerHex>(v: T) -> Value {
    Value::String(format!("{v:#x}"))
}

pub fn addr(a: &Address) -> Value {
    Value::String(format!("{a:#x}"))
}

pub fn hash(h: &B256) -> Value {
    Value::String(format!("{h:#x}"))
}

pub fn bytes(b: &Bytes) -> Value {
    Value::String(b.to_string())
}

fn opt_hash(h: Option<B256>) -> Value {
    h.map(|h| hash(&h)).unwrap_or(Value::Null)
}

/// Where a transaction sits, for the block-related members of its JSON.
#[derive(Clone, Copy)]
pub struct TxPosition {
    pub block_hash: Option<B256>,
    pub block_number: u64,
    pub block_timestamp: u64,
    pub base_fee: Option<u64>,
    pub index: u64,
}

/// geth's RPCTransaction.
pub fn tx_json(tx: &TxEnvelope, sender: &Address, position: Option<TxPosition>) -> Value {
    let mut m = Map::new();
    match position {
        Some(p) => {
            m.insert("blockHash".into(), opt_hash(p.block_hash));
            m.insert("blockNumber".into(), qty(p.block_number));
            m.insert("blockTimestamp".into(), qty(p.block_timestamp));
            m.insert("transactionIndex".into(), qty(p.index));
        }
        None => {
            m.insert("blockHash".into(), Value::Null);
            m.insert("blockNumber".into(), Value::Null);
            m.insert("transactionIndex".into(), Value::Null);
        }
    }
    m.insert("from".into(), addr(sender));
    m.insert("gas".into(), qty(tx.gas_limit()));
    let gas_price = match (tx.is_dynamic_fee(), position) {
        (true, Some(TxPosition { base_fee: Some(base_fee), .. })) => tx.effective_gas_price(Some(base_fee)),
        (true, _) => tx.max_fee_per_gas(),
        (false, _) => tx.gas_price().unwrap_or_default(),
    };
    m.insert("gasPrice".into(), qty(gas_price));
    if tx.is_dynamic_fee() {
        m.insert("maxFeePerGas".into(), qty(tx.max_fee_per_gas()));
        m.insert("maxPriorityFeePerGas".into(), qty(tx.max_priority_fee_per_gas().unwrap_or_default()));
    }
    if let Some(f) = tx.max_fee_per_blob_gas() {
        m.insert("maxFeePerBlobGas".into(), qty(f));
    }
    m.insert("hash".into(), hash(tx.tx_hash()));
    m.insert("input".into(), bytes(tx.input()));
    m.insert("nonce".into(), qty(tx.nonce()));
    m.insert("to".into(), tx.to().map(|a| addr(&a)).unwrap_or(Value::Null));
    m.insert("value".into(), qty(tx.value()));
    m.insert("type".into(), qty(tx.ty()));
    if let Some(list) = tx.access_list() {
        m.insert("accessList".into(), serde_json::to_value(list).unwrap_or(Value::Null));
    }
    let signature = tx.signature();
    let parity = signature.v();
    if tx.tx_type() == TxType::Legacy {
        if let Some(chain_id) = tx.chain_id() {
            m.insert("chainId".into(), qty(chain_id));
        }
        m.insert("v".into(), qty(to_eip155_value(parity, tx.chain_id())));
    } else {
        m.insert("chainId".into(), qty(tx.chain_id().unwrap_or_default()));
        m.insert("v".into(), qty(parity as u8));
        m.insert("yParity".into(), qty(parity as u8));
    }
    if let Some(auths) = tx.authorization_list() {
        let list: Vec<Value> = auths
            .iter()
            .map(|a| {
                json!({
                    "chainId": qty(a.chain_id),
                    "address": addr(&a.address),
                    "nonce": qty(a.nonce),
                    "yParity": qty(a.y_parity()),
                    "r": qty(a.r()),
                    "s": qty(a.s()),
                })
            })
            .collect();
        m.insert("authorizationList".into(), Value::Array(list));
    }
    if let Some(hashes) = tx.blob_versioned_hashes() {
        m.insert("blobVersionedHashes".into(), json!(hashes));
    }
    m.insert("r".into(), qty(signature.r()));
    m.insert("s".into(), qty(signature.s()));
    Value::Object(m)
}

/// Receipts and logs of pre-confirmed transactions carry the zero hash as `blockHash`: the
/// block is not sealed, so it has no hash yet, and clients such as ethers reject null there.
fn receipt_block_hash(h: Option<B256>) -> Value {
    hash(&h.unwrap_or(B256::ZERO))
}

pub fn log_json(log: &Log, position: &TxPosition, tx_hash: &B256, log_index: u64) -> Value {
    json!({
        "address": addr(&log.address),
        "topics": log.topics().iter().map(hash).collect::<Vec<_>>(),
        "data": bytes(&log.data.data),
        "blockNumber": qty(position.block_number),
        "blockHash": receipt_block_hash(position.block_hash),
        "blockTimestamp": qty(position.block_timestamp),
        "transactionHash": hash(tx_hash),
        "transactionIndex": qty(position.index),
        "logIndex": qty(log_index),
        "removed": false,
    })
}

/// geth's receipt; `first_log_index` is the block-wide index of this receipt's first log.
pub fn receipt_json(etx: &ExecutedTx, position: &TxPosition, first_log_index: u64) -> Value {
    let tx_hash = etx.hash();
    let envelope = etx.receipt_envelope();
    let logs: Vec<Value> = etx
        .receipt
        .logs
        .iter()
        .enumerate()
        .map(|(i, log)| log_json(log, position, &tx_hash, first_log_index + i as u64))
        .collect();
    json!({
        "blockHash": receipt_block_hash(position.block_hash),
        "blockNumber": qty(position.block_number),
        "contractAddress": etx.contract_address().map(|a| addr(&a)).unwrap_or(Value::Null),
        "cumulativeGasUsed": qty(etx.receipt.cumulative_gas_used),
        "effectiveGasPrice": qty(etx.tx.effective_gas_price(position.base_fee)),
        "from": addr(&etx.sender),
        "gasUsed": qty(etx.gas_used),
        "logs": logs,
        "logsBloom": Value::String(format!("{:#x}", envelope.logs_bloom())),
        "status": qty(etx.receipt.status.coerce_status() as u8),
        "to": etx.tx.to().map(|a| addr(&a)).unwrap_or(Value::Null),
        "transactionHash": hash(&tx_hash),
        "transactionIndex": qty(position.index),
        "type": qty(etx.tx.ty()),
    })
}

pub fn position_in(block: &BlockData, index: usize) -> TxPosition {
    TxPosition {
        block_hash: block.hash,
        block_number: block.header.number,
        block_timestamp: block.header.timestamp,
        base_fee: block.header.base_fee_per_gas,
        index: index as u64,
    }
}

/// Every receipt of a block, with block-wide log indices.
pub fn block_receipts_json(block: &BlockData) -> Value {
    let mut next_log = 0u64;
    let list = block
        .txs
        .iter()
        .enumerate()
        .map(|(i, etx)| {
            let r = receipt_json(etx, &position_in(block, i), next_log);
            next_log += etx.receipt.logs.len() as u64;
            r
        })
        .collect();
    Value::Array(list)
}

/// One receipt of a block, by index.
pub fn receipt_in_block_json(block: &BlockData, index: usize) -> Value {
    let first_log: usize = block.txs[..index].iter().map(|t| t.receipt.logs.len()).sum();
    receipt_json(&block.txs[index], &position_in(block, index), first_log as u64)
}

/// Header members of a block object (geth's RPCMarshalHeader).
pub fn header_json(header: &Header, block_hash: Option<B256>) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("number".into(), qty(header.number));
    m.insert("hash".into(), opt_hash(block_hash));
    m.insert("parentHash".into(), hash(&header.parent_hash));
    m.insert("nonce".into(), Value::String(format!("{:#x}", header.nonce)));
    m.insert("mixHash".into(), hash(&header.mix_hash));
    m.insert("sha3Uncles".into(), hash(&header.ommers_hash));
    m.insert("logsBloom".into(), Value::String(format!("{:#x}", header.logs_bloom)));
    m.insert("stateRoot".into(), hash(&header.state_root));
    m.insert("miner".into(), addr(&header.beneficiary));
    m.insert("difficulty".into(), qty(header.difficulty));
    m.insert("extraData".into(), bytes(&header.extra_data));
    m.insert("gasLimit".into(), qty(header.gas_limit));
    m.insert("gasUsed".into(), qty(header.gas_used));
    m.insert("timestamp".into(), qty(header.timestamp));
    m.insert("transactionsRoot".into(), hash(&header.transactions_root));
    m.insert("receiptsRoot".into(), hash(&header.receipts_root));
    if let Some(v) = header.base_fee_per_gas {
        m.insert("baseFeePerGas".into(), qty(v));
    }
    if let Some(v) = header.withdrawals_root {
        m.insert("withdrawalsRoot".into(), hash(&v));
    }
    if let Some(v) = header.blob_gas_used {
        m.insert("blobGasUsed".into(), qty(v));
    }
    if let Some(v) = header.excess_blob_gas {
        m.insert("excessBlobGas".into(), qty(v));
    }
    if let Some(v) = header.parent_beacon_block_root {
        m.insert("parentBeaconBlockRoot".into(), hash(&v));
    }
    if let Some(v) = header.requests_hash {
        m.insert("requestsHash".into(), hash(&v));
    }
    m
}

/// RLP size of a block with these transactions (header, txs, empty uncles, withdrawals).
pub fn block_size(header: &Header, txs: &[std::sync::Arc<ExecutedTx>]) -> usize {
    use alloy_rlp::Encodable;
    let mut payload = header.length();
    let tx_payload: usize = txs.iter().map(|t| t.tx.length()).sum();
    payload += alloy_rlp::length_of_length(tx_payload) + tx_payload;
    payload += 1; // empty uncle list
    if header.withdrawals_root.is_some() {
        payload += 1; // empty withdrawal list
    }
    alloy_rlp::length_of_length(payload) + payload
}

/// geth's block object; `full` embeds transaction objects instead of hashes.
pub fn block_json(block: &BlockData, full: bool) -> Value {
    let mut m = header_json(&block.header, block.hash);
    let txs: Vec<Value> = block
        .txs
        .iter()
        .enumerate()
        .map(|(i, etx)| {
            if full {
                tx_json(&etx.tx, &etx.sender, Some(position_in(block, i)))
            } else {
                hash(&etx.hash())
            }
        })
        .collect();
    m.insert("transactions".into(), Value::Array(txs));
    m.insert("uncles".into(), Value::Array(vec![]));
    if block.header.withdrawals_root.is_some() {
        m.insert("withdrawals".into(), Value::Array(vec![]));
    }
    m.insert("size".into(), qty(block_size(&block.header, &block.txs)));
    if block.hash.is_none() {
        // geth's pending block: no hash, nonce or miner yet.
        m.insert("nonce".into(), Value::Null);
        m.insert("miner".into(), Value::Null);
    }
    if let Some(i) = block.preconf_index {
        m.insert("preconfIndex".into(), qty(i));
    }
    Value::Object(m)
}

pub fn u256_word(v: U256) -> Value {
    Value::String(format!("{:#x}", B256::from(v)))
}
