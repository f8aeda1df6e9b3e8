//! debug_trace* and eth_createAccessList results in geth's shapes: the tracers' frames as
//! alloy's `GethTrace`, a block's as `[{txHash, result}]`, access lists as
//! `{accessList, gasUsed, error?}`.

use alloy_eips::eip2930::AccessListResult;
use alloy_primitives::{B256, U256};
use alloy_rpc_types_trace::geth::{GethTrace, TraceResult};
use preconf_chain::exec::access_list::AccessListOutcome;
use preconf_chain::exec::trace::output_too_large;
use preconf_chain::ChainResult;

use super::to_json;

/// One transaction's or call's trace, refused when larger than `max_bytes`.
pub fn trace(trace: &GethTrace, max_bytes: usize) -> ChainResult<String> {
    bounded(to_json(trace), max_bytes)
}

/// A block's traces, one `{txHash, result}` per transaction in block order.
pub fn block_traces(traces: Vec<(B256, GethTrace)>, max_bytes: usize) -> ChainResult<String> {
    let list: Vec<TraceResult> =
        traces.into_iter().map(|(hash, result)| TraceResult::Success { result, tx_hash: Some(hash) }).collect();
    bounded(to_json(&list), max_bytes)
}

/// The guard estimates output while the EVM runs; this is the exact check.
fn bounded(json: String, max_bytes: usize) -> ChainResult<String> {
    if json.len() > max_bytes {
        return Err(output_too_large(max_bytes));
    }
    Ok(json)
}

pub fn access_list(outcome: &AccessListOutcome) -> String {
    to_json(&AccessListResult {
        access_list: outcome.access_list.clone(),
        gas_used: U256::from(outcome.gas_used),
        error: outcome.error.clone(),
    })
}
