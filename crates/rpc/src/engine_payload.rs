//! engine_newPayload's JSON: ExecutionPayloadV1–V3 and OP's V4 (`withdrawalsRoot`) in, as
//! op-node sends them (src/engine/payload.ts has checked their shapes), the payload status
//! out (crate::engine renders it).

use alloy_eips::eip4895::Withdrawal;
use alloy_primitives::{Address, Bloom, Bytes, B256, U256};
use preconf_chain::engine::new_payload::{ExecutionPayload, NewPayload};
use preconf_chain::ChainResult;
use serde::Deserialize;

use crate::params;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct PayloadJson {
    parent_hash: B256,
    fee_recipient: Address,
    state_root: B256,
    receipts_root: B256,
    logs_bloom: Bloom,
    prev_randao: B256,
    #[serde(with = "alloy_serde::quantity")]
    block_number: u64,
    #[serde(with = "alloy_serde::quantity")]
    gas_limit: u64,
    #[serde(with = "alloy_serde::quantity")]
    gas_used: u64,
    #[serde(with = "alloy_serde::quantity")]
    timestamp: u64,
    extra_data: Bytes,
    base_fee_per_gas: U256,
    block_hash: B256,
    transactions: Vec<Bytes>,
    #[serde(default)]
    withdrawals: Option<Vec<Withdrawal>>,
    #[serde(default, with = "alloy_serde::quantity::opt")]
    blob_gas_used: Option<u64>,
    #[serde(default, with = "alloy_serde::quantity::opt")]
    excess_blob_gas: Option<u64>,
    #[serde(default)]
    withdrawals_root: Option<B256>,
}

/// newPayload's parameters: the payload (JSON text), then V3's versioned hashes and beacon
/// root and V4's execution requests (JSON text each, absent for the versions without them).
pub fn new_payload(
    payload: &str,
    versioned_hashes: Option<&str>,
    parent_beacon_block_root: Option<&str>,
    execution_requests: Option<&str>,
) -> ChainResult<NewPayload> {
    let p: PayloadJson = params::json(payload, "execution payload")?;
    let versioned_hashes = versioned_hashes.map(|t| params::json::<Vec<B256>>(t, "versioned hashes")).transpose()?;
    let parent_beacon_block_root = parent_beacon_block_root.map(params::hash).transpose()?;
    let execution_requests =
        execution_requests.map(|t| params::json::<Vec<Bytes>>(t, "execution requests")).transpose()?;
    Ok(NewPayload {
        payload: ExecutionPayload {
            parent_hash: p.parent_hash,
            fee_recipient: p.fee_recipient,
            state_root: p.state_root,
            receipts_root: p.receipts_root,
            logs_bloom: p.logs_bloom,
            prev_randao: p.prev_randao,
            block_number: p.block_number,
            gas_limit: p.gas_limit,
            gas_used: p.gas_used,
            timestamp: p.timestamp,
            extra_data: p.extra_data,
            base_fee_per_gas: p.base_fee_per_gas,
            block_hash: p.block_hash,
            transactions: p.transactions,
            withdrawals: p.withdrawals,
            blob_gas_used: p.blob_gas_used,
            excess_blob_gas: p.excess_blob_gas,
            withdrawals_root: p.withdrawals_root,
        },
        versioned_hashes,
        parent_beacon_block_root,
        execution_requests,
    })
}
