//! The Engine API's JSON: forkchoice state and payload attributes in (camelCase, hex
//! quantities, as op-node sends them; src/engine/validation.ts has checked their shapes),
//! forkchoice answers and payload envelopes out, in the shapes op-geth and op-reth answer
//! (ExecutionPayloadV1–V3 and OP's V4 with `withdrawalsRoot`; the V3/V4 envelopes carry
//! `parentBeaconBlockRoot`, V4's `executionRequests` is empty on OP chains).

use alloy_eips::eip4895::Withdrawal;
use alloy_primitives::{Address, Bytes, B256, B64};
use preconf_chain::engine::bodies::PayloadBody;
use preconf_chain::engine::types::{
    BuiltPayload, ForkchoiceOutcome, ForkchoiceState, PayloadAttributes, PayloadStatus, Version,
};
use preconf_chain::ChainResult;
use serde::Deserialize;
use serde_json::{json, Map, Value};

use crate::params;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ForkchoiceStateJson {
    head_block_hash: B256,
    safe_block_hash: B256,
    finalized_block_hash: B256,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct AttributesJson {
    #[serde(with = "alloy_serde::quantity")]
    timestamp: u64,
    prev_randao: B256,
    suggested_fee_recipient: Address,
    #[serde(default)]
    withdrawals: Option<Vec<Withdrawal>>,
    #[serde(default)]
    parent_beacon_block_root: Option<B256>,
    #[serde(default)]
    transactions: Option<Vec<Bytes>>,
    #[serde(default)]
    no_tx_pool: Option<bool>,
    #[serde(default, with = "alloy_serde::quantity::opt")]
    gas_limit: Option<u64>,
    #[serde(default)]
    eip1559_params: Option<B64>,
    #[serde(default, with = "alloy_serde::quantity::opt")]
    min_base_fee: Option<u64>,
}

pub fn forkchoice_state(text: &str) -> ChainResult<ForkchoiceState> {
    let s: ForkchoiceStateJson = params::json(text, "forkchoice state")?;
    Ok(ForkchoiceState { head: s.head_block_hash, safe: s.safe_block_hash, finalized: s.finalized_block_hash })
}

pub fn payload_attributes(text: &str) -> ChainResult<PayloadAttributes> {
    let a: AttributesJson = params::json(text, "payload attributes")?;
    Ok(PayloadAttributes {
        timestamp: a.timestamp,
        prev_randao: a.prev_randao,
        fee_recipient: a.suggested_fee_recipient,
        withdrawals: a.withdrawals,
        parent_beacon_block_root: a.parent_beacon_block_root,
        transactions: a.transactions.unwrap_or_default(),
        no_tx_pool: a.no_tx_pool.unwrap_or(false),
        gas_limit: a.gas_limit,
        eip1559_params: a.eip1559_params,
        min_base_fee: a.min_base_fee,
    })
}

fn status(s: &PayloadStatus) -> Value {
    match s {
        PayloadStatus::Valid { latest_valid_hash } => {
            json!({ "status": "VALID", "latestValidHash": latest_valid_hash, "validationError": null })
        }
        PayloadStatus::Invalid { latest_valid_hash, validation_error } => json!({
            "status": "INVALID", "latestValidHash": latest_valid_hash, "validationError": validation_error,
        }),
        PayloadStatus::Syncing => json!({ "status": "SYNCING", "latestValidHash": null, "validationError": null }),
        PayloadStatus::Accepted => json!({ "status": "ACCEPTED", "latestValidHash": null, "validationError": null }),
    }
}

pub fn payload_status(s: &PayloadStatus) -> String {
    status(s).to_string()
}

pub fn forkchoice_outcome(o: &ForkchoiceOutcome) -> String {
    json!({ "payloadStatus": status(&o.status), "payloadId": o.payload_id }).to_string()
}

fn quantity(n: u64) -> Value {
    Value::String(format!("{n:#x}"))
}

/// ExecutionPayloadV1, then the members each later version adds.
fn execution_payload(p: &BuiltPayload, version: Version) -> Value {
    let h = &p.header;
    let mut m = Map::new();
    m.insert("parentHash".into(), json!(h.parent_hash));
    m.insert("feeRecipient".into(), json!(h.beneficiary));
    m.insert("stateRoot".into(), json!(h.state_root));
    m.insert("receiptsRoot".into(), json!(h.receipts_root));
    m.insert("logsBloom".into(), json!(h.logs_bloom));
    m.insert("prevRandao".into(), json!(h.mix_hash));
    m.insert("blockNumber".into(), quantity(h.number));
    m.insert("gasLimit".into(), quantity(h.gas_limit));
    m.insert("gasUsed".into(), quantity(h.gas_used));
    m.insert("timestamp".into(), quantity(h.timestamp));
    m.insert("extraData".into(), json!(h.extra_data));
    m.insert("baseFeePerGas".into(), quantity(h.base_fee_per_gas.unwrap_or_default()));
    m.insert("blockHash".into(), json!(p.hash));
    m.insert("transactions".into(), json!(p.transactions));
    // V2 answers a pre-Shanghai payload as V1 (no withdrawals member), as the spec says.
    if version >= Version::V2 {
        if let Some(w) = &p.withdrawals {
            m.insert("withdrawals".into(), json!(w));
        }
    }
    if version >= Version::V3 {
        m.insert("blobGasUsed".into(), quantity(h.blob_gas_used.unwrap_or_default()));
        m.insert("excessBlobGas".into(), quantity(h.excess_blob_gas.unwrap_or_default()));
    }
    if version >= Version::V4 {
        m.insert("withdrawalsRoot".into(), json!(h.withdrawals_root));
    }
    Value::Object(m)
}

/// engine_getPayloadV{version}'s answer.
pub fn payload_envelope(p: &BuiltPayload, version: Version) -> String {
    let payload = execution_payload(p, version);
    let value = json!(p.block_value);
    let out = match version {
        Version::V1 => payload,
        Version::V2 => json!({ "executionPayload": payload, "blockValue": value }),
        Version::V3 | Version::V4 => {
            let mut m = json!({
                "executionPayload": payload,
                "blockValue": value,
                "blobsBundle": { "commitments": [], "proofs": [], "blobs": [] },
                "shouldOverrideBuilder": false,
                "parentBeaconBlockRoot": p.header.parent_beacon_block_root,
            });
            if version == Version::V4 {
                m["executionRequests"] = json!([]);
            }
            m
        }
    };
    out.to_string()
}

/// getPayloadBodies' answer: `null` for a block the node does not have.
pub fn payload_bodies(bodies: &[Option<PayloadBody>]) -> String {
    let list: Vec<Value> = bodies
        .iter()
        .map(|b| match b {
            Some(b) => json!({ "transactions": b.transactions, "withdrawals": b.withdrawals }),
            None => Value::Null,
        })
        .collect();
    Value::Array(list).to_string()
}

/// A list of block hashes (JSON text, shapes checked by src/engine/validation.ts).
pub fn hashes(text: &str) -> ChainResult<Vec<B256>> {
    params::json(text, "block hashes")
}
