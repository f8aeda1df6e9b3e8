//! Parameters as the TypeScript side hands them over: canonical strings for simple values
//! (addresses, hashes, block selectors) and JSON for structured ones. A parse failure is
//! still reported as invalid params, never a panic.

use alloy_primitives::{Address, Bytes, B256, U256};
use alloy_rpc_types_eth::{state::StateOverride, BlockOverrides, Filter, TransactionRequest};
use preconf_chain::api::logs::LogQuery;
use preconf_chain::exec::simulate::SimulatePayload;
use preconf_chain::{BlockId, ChainError, ChainResult};
use serde::de::DeserializeOwned;
use serde::Deserialize;

pub fn json<T: DeserializeOwned>(text: &str, what: &str) -> ChainResult<T> {
    serde_json::from_str(text).map_err(|e| ChainError::InvalidParams(format!("invalid {what}: {e}")))
}

pub fn address(s: &str) -> ChainResult<Address> {
    s.parse().map_err(|_| ChainError::InvalidParams(format!("invalid address {s}")))
}

pub fn hash(s: &str) -> ChainResult<B256> {
    s.parse().map_err(|_| ChainError::InvalidParams(format!("invalid hash {s}")))
}

pub fn block(s: &str) -> ChainResult<BlockId> {
    BlockId::parse(s)
}

pub fn slot(s: &str) -> ChainResult<U256> {
    s.parse().map_err(|_| ChainError::InvalidParams(format!("invalid slot {s}")))
}

/// A storage key as eth_getProof names it (kept as given, to be echoed back).
pub fn storage_key(s: &str) -> ChainResult<alloy_serde::storage::JsonStorageKey> {
    serde_json::from_value(serde_json::Value::String(s.to_string()))
        .map_err(|_| ChainError::InvalidParams(format!("invalid storage key {s}")))
}

pub fn raw_tx(s: &str) -> ChainResult<Bytes> {
    s.parse().map_err(|_| ChainError::InvalidParams("raw transaction is not valid hex".into()))
}

/// eth_call's parameters.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallParams {
    pub tx: TransactionRequest,
    pub block: String,
    pub state_overrides: Option<StateOverride>,
    pub block_overrides: Option<BlockOverrides>,
}

/// eth_estimateGas's parameters.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EstimateParams {
    pub tx: TransactionRequest,
    pub block: String,
    pub state_overrides: Option<StateOverride>,
}

/// eth_simulateV1's parameters.
#[derive(Debug, Deserialize)]
pub struct SimulateParams {
    pub payload: SimulatePayload,
    pub block: String,
}

/// eth_feeHistory's parameters.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FeeHistoryParams {
    pub block_count: u64,
    pub newest_block: String,
    #[serde(default)]
    pub reward_percentiles: Vec<f64>,
}

/// An eth_getLogs filter in geth's JSON shape. The number of topic positions is read from
/// the JSON itself: alloy's `Filter` does not keep trailing wildcards (see `LogQuery`).
pub fn log_query(text: &str) -> ChainResult<LogQuery> {
    let value: serde_json::Value = json(text, "log filter")?;
    let topic_positions = value.get("topics").and_then(|t| t.as_array()).map_or(0, |t| t.len());
    let filter: Filter =
        serde_json::from_value(value).map_err(|e| ChainError::InvalidParams(format!("invalid log filter: {e}")))?;
    Ok(LogQuery { filter, topic_positions })
}
