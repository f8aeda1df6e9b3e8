//! eth_simulateV1 results: a block object per simulated block, plus its `calls`.

use alloy_rpc_types_eth::simulate::{SimCallResult, SimulateError};
use alloy_rpc_types_eth::BlockTransactions;
use preconf_chain::exec::simulate::{CallFailure, SimulatedBlock};
use preconf_chain::types::BlockData;
use serde_json::Value;

use super::block::block_object;
use super::log::log;
use super::{to_json, TxPosition};

/// geth's code for a reverted call, and for one that halted (inside the result).
const REVERTED: i32 = 3;
const VM_ERROR: i32 = -32015;

pub fn simulated_blocks(blocks: &[SimulatedBlock], full: bool) -> String {
    let mut out = String::from("[");
    for (i, b) in blocks.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        simulated_block(b, full, &mut out);
    }
    out.push(']');
    out
}

/// Writes the block's object with its `calls` member. Serialized straight to text: a
/// `serde_json::Value` on the way cost a quarter of a one-call simulation.
fn simulated_block(sim: &SimulatedBlock, full: bool, out: &mut String) {
    let data = BlockData {
        header: sim.header.clone(),
        hash: Some(sim.hash),
        txs: sim.txs.clone().into(),
        ..Default::default()
    };
    let mut object = block_object(&data, full);
    object.header.size = Some(alloy_primitives::U256::from(sim.size()));
    if object.withdrawals.is_some() {
        object.withdrawals = Some(sim.withdrawals.clone().into());
    }
    let mut first_log = 0u64;
    let calls: Vec<SimCallResult> = sim
        .calls
        .iter()
        .enumerate()
        .map(|(i, call)| {
            let position = TxPosition::in_block(&data, i);
            let tx_hash = sim.txs[i].hash();
            let index = |j: usize| match &call.log_indexes {
                Some(indexes) => indexes[j],
                None => first_log + j as u64,
            };
            let logs = call.logs.iter().enumerate().map(|(j, l)| log(l, &position, tx_hash, index(j))).collect();
            first_log += call.logs.len() as u64;
            SimCallResult {
                return_data: call.return_data.clone(),
                logs,
                gas_used: call.gas_used,
                max_used_gas: Some(call.max_used_gas),
                status: call.success,
                error: call.error.as_ref().map(|e| match e {
                    CallFailure::Reverted { message, data } => {
                        SimulateError { code: REVERTED, message: message.clone(), data: Some(data.clone()) }
                    }
                    CallFailure::Halted { message } => {
                        SimulateError { code: VM_ERROR, message: message.clone(), data: None }
                    }
                }),
            }
        })
        .collect();
    let object = if full {
        // Full transactions need geth's unsigned legacy fields patched in.
        let mut v = serde_json::to_value(&object).unwrap_or(Value::Null);
        unsigned_legacy_fields(&mut v, &object.transactions);
        to_json(&v)
    } else {
        to_json(&object)
    };
    // The object's closing brace makes way for `calls`.
    let head = object.strip_suffix('}').filter(|h| h.starts_with('{')).unwrap_or("{");
    out.push_str(head);
    if head.len() > 1 {
        out.push(',');
    }
    out.push_str("\"calls\":");
    out.push_str(&to_json(&calls));
    out.push('}');
}

/// An unsigned legacy transaction has v = 0 and no chain id (geth), where the renderer of
/// signed ones would derive v = 27 or an EIP-155 value.
fn unsigned_legacy_fields(block: &mut Value, txs: &BlockTransactions<super::transaction::RpcTx>) {
    let BlockTransactions::Full(txs) = txs else { return };
    let Some(Value::Array(json)) = block.get_mut("transactions") else { return };
    for (j, t) in json.iter_mut().zip(txs) {
        if matches!(t, super::transaction::RpcTx::Eth(t) if t.inner.inner().is_legacy()) {
            if let Some(m) = j.as_object_mut() {
                m.remove("chainId");
                m.insert("v".into(), Value::String("0x0".into()));
            }
        }
    }
}
