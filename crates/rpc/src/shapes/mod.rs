//! Type-only mirrors of the foreign types a request carries (alloy's `TransactionRequest`,
//! `StateOverride`, `BlockOverrides`, `Filter`, the chain's `SimulatePayload`, our flattened
//! trace options). They exist to generate the TypeScript interfaces `src/validation/` builds:
//! nothing converts a JavaScript value into them. Each holds the JSON shape of the type it
//! mirrors (`tests.rs` checks both ways), with hex values as strings.

use std::collections::HashMap;

use napi_derive::napi;
use serde::{Deserialize, Serialize};

/// geth's TransactionArgs as alloy's `TransactionRequest` reads them (calls, estimates,
/// simulations, traces, eth_sendTransaction). `data` is sent as `input`.
#[napi(object, object_from_js = false, object_to_js = false)]
#[derive(Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TransactionCall {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gas_price: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_fee_per_gas: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_priority_fee_per_gas: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_fee_per_blob_gas: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gas: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nonce: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chain_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub access_list: Option<Vec<AccessListEntry>>,
    #[napi(js_name = "type")]
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub transaction_type: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blob_versioned_hashes: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub authorization_list: Option<Vec<Authorization>>,
}

/// One entry of an EIP-2930 access list.
#[napi(object, object_from_js = false, object_to_js = false)]
#[derive(Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AccessListEntry {
    pub address: String,
    pub storage_keys: Vec<String>,
}

/// A signed EIP-7702 authorization (alloy's `SignedAuthorization`).
#[napi(object, object_from_js = false, object_to_js = false)]
#[derive(Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Authorization {
    pub chain_id: String,
    pub address: String,
    pub nonce: String,
    pub y_parity: String,
    pub r: String,
    pub s: String,
}

/// One account's state override (alloy's `AccountOverride`).
#[napi(object, object_from_js = false, object_to_js = false)]
#[derive(Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AccountOverride {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub balance: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nonce: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// Slot -> value, replacing the account's whole storage.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<HashMap<String, String>>,
    /// Slot -> value, over the account's storage.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state_diff: Option<HashMap<String, String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub move_precompile_to_address: Option<String>,
}

/// State overrides by address (alloy's `StateOverride`).
#[napi]
pub type StateOverrides = HashMap<String, AccountOverride>;

/// Block overrides of eth_call and debug_traceCall (alloy's `BlockOverrides`), by geth's
/// names; alloy writes `coinbase`, `random` and `baseFee` and reads both.
#[napi(object, object_from_js = false, object_to_js = false)]
#[derive(Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BlockOverrides {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub number: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub difficulty: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gas_limit: Option<String>,
    #[serde(alias = "coinbase", skip_serializing_if = "Option::is_none")]
    pub fee_recipient: Option<String>,
    #[serde(alias = "random", skip_serializing_if = "Option::is_none")]
    pub prev_randao: Option<String>,
    #[serde(alias = "baseFee", skip_serializing_if = "Option::is_none")]
    pub base_fee_per_gas: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blob_base_fee: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub beacon_root: Option<String>,
    /// Block number (decimal) -> hash, for BLOCKHASH.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub block_hash: Option<HashMap<String, String>>,
}

/// A simulated block's overrides (the chain's `SimBlockOverrides`): the block overrides
/// plus geth's `withdrawals`, less `blockHash` (its number keys do not survive serde's
/// `flatten`, so the chain cannot read it there).
#[napi(object, object_from_js = false, object_to_js = false)]
#[derive(Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SimBlockOverrides {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub number: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub difficulty: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gas_limit: Option<String>,
    #[serde(alias = "coinbase", skip_serializing_if = "Option::is_none")]
    pub fee_recipient: Option<String>,
    #[serde(alias = "random", skip_serializing_if = "Option::is_none")]
    pub prev_randao: Option<String>,
    #[serde(alias = "baseFee", skip_serializing_if = "Option::is_none")]
    pub base_fee_per_gas: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blob_base_fee: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub beacon_root: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub withdrawals: Option<Vec<Withdrawal>>,
}

/// An EIP-4895 withdrawal (alloy's `Withdrawal`).
#[napi(object, object_from_js = false, object_to_js = false)]
#[derive(Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Withdrawal {
    pub index: String,
    pub validator_index: String,
    pub address: String,
    pub amount: String,
}

/// One block of eth_simulateV1 (the chain's `SimBlock`).
#[napi(object, object_from_js = false, object_to_js = false)]
#[derive(Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SimulationBlock {
    pub calls: Vec<TransactionCall>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state_overrides: Option<StateOverrides>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub block_overrides: Option<SimBlockOverrides>,
}

/// eth_simulateV1's first parameter (the chain's `SimulatePayload`).
#[napi(object, object_from_js = false, object_to_js = false)]
#[derive(Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SimulationPayload {
    pub block_state_calls: Vec<SimulationBlock>,
    pub trace_transfers: bool,
    pub validation: bool,
    pub return_full_transactions: bool,
}

/// A tracer's options as the edge hands them over (`params::TraceOptionsParam`): geth's
/// TraceConfig with `timeout` already parsed into `timeoutMs`.
#[napi(object, object_from_js = false, object_to_js = false)]
#[derive(Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TraceConfig {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub enable_memory: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disable_memory: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disable_stack: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disable_storage: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub enable_return_data: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disable_return_data: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub debug: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tracer: Option<String>,
    /// The built-in tracers' flags (callTracer's, prestateTracer's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tracer_config: Option<HashMap<String, bool>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<i64>,
}

/// An eth_getLogs filter in geth's shape (alloy's `Filter`): addresses and topic positions
/// as lists (null: any).
#[napi(object, object_from_js = false, object_to_js = false)]
#[derive(Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LogFilter {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from_block: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub to_block: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub block_hash: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub address: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub topics: Option<Vec<Option<Vec<String>>>>,
}

#[cfg(test)]
mod tests;
