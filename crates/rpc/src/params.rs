//! Parameters as the TypeScript side hands them over: canonical strings for simple values
//! (addresses, hashes, block selectors) and JSON for structured ones. A parse failure is
//! still reported as invalid params, never a panic.
//!
//! Each structured request is one definition here: serde reads the JSON text into it, and
//! napi generates its TypeScript interface into `native/native.d.ts` (type only: no
//! conversion code, the wire stays JSON text). A field of a foreign type names the
//! interface of its mirror in `shapes` (`ts_type`).

use alloy_primitives::{Address, Bytes, B256, U256};
use std::time::Duration;

use alloy_rpc_types_eth::{state::StateOverride, BlockOverrides, Filter, TransactionRequest};
use alloy_rpc_types_trace::geth::GethDebugTracingOptions;
use napi_derive::napi;
use preconf_chain::api::logs::LogQuery;
use preconf_chain::api::tracing::TraceCallOptions;
use preconf_chain::exec::simulate::SimulatePayload;
use preconf_chain::exec::trace::TraceOptions;
use preconf_chain::{BlockId, ChainResult, InvalidParam};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

pub fn json<T: DeserializeOwned>(text: &str, what: &'static str) -> ChainResult<T> {
    serde_json::from_str(text).map_err(|e| InvalidParam::Json { what, reason: e.to_string() }.into())
}

pub fn address(s: &str) -> ChainResult<Address> {
    s.parse().map_err(|_| InvalidParam::Address(s.to_string()).into())
}

pub fn hash(s: &str) -> ChainResult<B256> {
    s.parse().map_err(|_| InvalidParam::Hash(s.to_string()).into())
}

pub fn block(s: &str) -> ChainResult<BlockId> {
    BlockId::parse(s)
}

pub fn slot(s: &str) -> ChainResult<U256> {
    s.parse().map_err(|_| InvalidParam::Slot(s.to_string()).into())
}

/// A storage key as eth_getProof names it (kept as given, to be echoed back).
pub fn storage_key(s: &str) -> ChainResult<alloy_serde::storage::JsonStorageKey> {
    serde_json::from_value(serde_json::Value::String(s.to_string()))
        .map_err(|_| InvalidParam::StorageKey(s.to_string()).into())
}

pub fn raw_tx(s: &str) -> ChainResult<Bytes> {
    s.parse().map_err(|_| InvalidParam::RawTxHex.into())
}

/// eth_call's parameters.
#[napi(object, object_from_js = false, object_to_js = false)]
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallParams {
    #[napi(ts_type = "TransactionCall")]
    pub tx: TransactionRequest,
    pub block: String,
    #[napi(ts_type = "StateOverrides")]
    pub state_overrides: Option<StateOverride>,
    #[napi(ts_type = "BlockOverrides")]
    pub block_overrides: Option<BlockOverrides>,
}

/// eth_estimateGas's parameters.
#[napi(object, object_from_js = false, object_to_js = false)]
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EstimateParams {
    #[napi(ts_type = "TransactionCall")]
    pub tx: TransactionRequest,
    pub block: String,
    #[napi(ts_type = "StateOverrides")]
    pub state_overrides: Option<StateOverride>,
}

/// eth_simulateV1's parameters.
#[napi(object, object_from_js = false, object_to_js = false)]
#[derive(Debug, Deserialize)]
pub struct SimulateParams {
    #[napi(ts_type = "SimulationPayload")]
    pub payload: SimulatePayload,
    pub block: String,
}

/// eth_feeHistory's parameters.
#[napi(object, object_from_js = false, object_to_js = false)]
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FeeHistoryParams {
    /// At most 1,024 (the edge clamps larger counts).
    pub block_count: u32,
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
        serde_json::from_value(value).map_err(|e| InvalidParam::Json { what: "log filter", reason: e.to_string() })?;
    Ok(LogQuery { filter, topic_positions })
}

/// A tracer's options as geth takes them (the struct logger's flags, `tracer`,
/// `tracerConfig`), with `timeout` already parsed by the edge into `timeoutMs`. Its
/// TypeScript interface is `shapes::TraceConfig` (napi cannot describe a flattened field).
#[derive(Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TraceOptionsParam {
    #[serde(flatten)]
    pub tracing: GethDebugTracingOptions,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
}

impl TraceOptionsParam {
    pub fn into_options(self) -> TraceOptions {
        TraceOptions { tracing: self.tracing, timeout: self.timeout_ms.map(Duration::from_millis) }
    }
}

/// debug_traceTransaction's parameters.
#[napi(object, object_from_js = false, object_to_js = false)]
#[derive(Debug, Deserialize)]
pub struct TraceTransactionParams {
    pub hash: String,
    #[napi(ts_type = "TraceConfig")]
    #[serde(default)]
    pub options: TraceOptionsParam,
}

/// debug_traceBlockByNumber / debug_traceBlockByHash's parameters.
#[napi(object, object_from_js = false, object_to_js = false)]
#[derive(Debug, Deserialize)]
pub struct TraceBlockParams {
    pub block: String,
    #[napi(ts_type = "TraceConfig")]
    #[serde(default)]
    pub options: TraceOptionsParam,
}

/// debug_traceCall's parameters.
#[napi(object, object_from_js = false, object_to_js = false)]
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TraceCallParams {
    #[napi(ts_type = "TransactionCall")]
    pub tx: TransactionRequest,
    pub block: String,
    #[napi(ts_type = "TraceConfig")]
    #[serde(default)]
    pub options: TraceOptionsParam,
    #[napi(ts_type = "StateOverrides")]
    pub state_overrides: Option<StateOverride>,
    #[napi(ts_type = "BlockOverrides")]
    pub block_overrides: Option<BlockOverrides>,
    /// A 0x quantity.
    pub tx_index: Option<String>,
}

impl TraceCallParams {
    pub fn call_options(self) -> ChainResult<(TransactionRequest, String, TraceCallOptions)> {
        let tx_index = self.tx_index.as_deref().map(quantity).transpose()?;
        let options = TraceCallOptions {
            trace: self.options.into_options(),
            state_overrides: self.state_overrides,
            block_overrides: self.block_overrides,
            tx_index,
        };
        Ok((self.tx, self.block, options))
    }
}

/// eth_createAccessList's parameters.
#[napi(object, object_from_js = false, object_to_js = false)]
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AccessListParams {
    #[napi(ts_type = "TransactionCall")]
    pub tx: TransactionRequest,
    pub block: String,
    #[napi(ts_type = "StateOverrides")]
    pub state_overrides: Option<StateOverride>,
}

/// A 0x quantity that fits 64 bits.
pub fn quantity(s: &str) -> ChainResult<u64> {
    s.strip_prefix("0x")
        .and_then(|hex| u64::from_str_radix(hex, 16).ok())
        .ok_or_else(|| InvalidParam::Quantity(s.to_string()).into())
}
