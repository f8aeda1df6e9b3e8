//! debug_trace* and eth_createAccessList results in geth's shapes: the tracers' frames as
//! alloy's `GethTrace`, a block's as `[{txHash, result}]`, access lists as
//! `{accessList, gasUsed, error?}`.

use alloy_eips::eip2930::AccessListResult;
use alloy_primitives::{B256, U256};
use alloy_rpc_types_trace::geth::{GethTrace, StructLog, TraceResult};
use preconf_chain::exec::access_list::AccessListOutcome;
use preconf_chain::exec::trace::output_too_large;
use preconf_chain::ChainResult;
use revm::bytecode::OpCode;

use super::to_json;

/// One transaction's or call's trace, refused when larger than `max_bytes`.
pub fn trace(mut trace: GethTrace, max_bytes: usize) -> ChainResult<String> {
    as_geth(&mut trace);
    bounded(to_json(&trace), max_bytes)
}

/// A block's traces, one `{txHash, result}` per transaction in block order.
pub fn block_traces(traces: Vec<(B256, GethTrace)>, max_bytes: usize) -> ChainResult<String> {
    let list: Vec<TraceResult> = traces
        .into_iter()
        .map(|(hash, mut result)| {
            as_geth(&mut result);
            TraceResult::Success { result, tx_hash: Some(hash) }
        })
        .collect();
    bounded(to_json(&list), max_bytes)
}

/// The struct logger's entries as geth writes them: no empty `returnData` or `memory`, no
/// zero `refund`, and an instruction's error in geth's words (revm-inspectors gives the
/// debug form of revm's instruction result, e.g. `Some(StackUnderflow)`).
fn as_geth(trace: &mut GethTrace) {
    let GethTrace::Default(frame) = trace else { return };
    for log in &mut frame.struct_logs {
        if log.return_data.as_ref().is_some_and(|d| d.is_empty()) {
            log.return_data = None;
        }
        if log.memory.as_ref().is_some_and(|m| m.is_empty()) {
            log.memory = None;
        }
        if log.refund_counter == Some(0) {
            log.refund_counter = None;
        }
        if let Some(e) = log.error.take() {
            log.error = Some(step_error(&e, log));
        }
    }
}

fn step_error(debug: &str, log: &StructLog) -> String {
    let name = debug.strip_prefix("Some(").and_then(|s| s.strip_suffix(')')).unwrap_or(debug);
    let op = (0..=u8::MAX).filter_map(OpCode::new).find(|o| o.as_str() == log.op);
    let depth = log.stack.as_ref().map(Vec::len);
    match name {
        "OutOfGas" | "MemoryOOG" | "MemoryLimitOOG" | "PrecompileOOG" | "InvalidOperandOOG" | "ReentrancySentryOOG" => {
            "out of gas".into()
        }
        "InvalidJump" => "invalid jump destination".into(),
        "StackUnderflow" => match (depth, op) {
            (Some(len), Some(op)) => format!("stack underflow ({len} <=> {})", op.inputs()),
            _ => "stack underflow".into(),
        },
        "StackOverflow" => match (depth, op) {
            (Some(len), Some(op)) => {
                format!("stack limit reached {len} ({})", 1024 + op.inputs() as usize - op.outputs() as usize)
            }
            _ => "stack limit reached 1024".into(),
        },
        "OpcodeNotFound" | "InvalidFEOpcode" | "NotActivated" => format!("invalid opcode: {}", log.op),
        "StateChangeDuringStaticCall" | "CallNotAllowedInsideStatic" => "write protection".into(),
        "OutOfOffset" => "return data out of bounds".into(),
        "CreateCollision" => "contract address collision".into(),
        "CallTooDeep" => "max call depth exceeded".into(),
        "OutOfFunds" => "insufficient balance for transfer".into(),
        "CreateContractSizeLimit" => "max code size exceeded".into(),
        "CreateInitCodeSizeLimit" => "max initcode size exceeded".into(),
        "CreateContractStartingWithEF" => "invalid code: must not begin with 0xef".into(),
        other => other.to_string(),
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use alloy_primitives::Bytes;
    use alloy_rpc_types_trace::geth::DefaultFrame;

    fn log(op: &'static str, stack: Option<usize>, error: &str) -> StructLog {
        StructLog {
            op: op.into(),
            stack: stack.map(|n| vec![U256::ZERO; n]),
            error: Some(error.into()),
            return_data: Some(Bytes::new()),
            memory: Some(vec![]),
            refund_counter: Some(0),
            ..Default::default()
        }
    }

    fn rendered(logs: Vec<StructLog>) -> Vec<StructLog> {
        let mut trace = GethTrace::Default(DefaultFrame { struct_logs: logs, ..Default::default() });
        as_geth(&mut trace);
        match trace {
            GethTrace::Default(f) => f.struct_logs,
            _ => unreachable!(),
        }
    }

    #[test]
    fn struct_logs_read_as_geth_writes_them() {
        let logs = rendered(vec![
            log("ADD", Some(1), "Some(StackUnderflow)"),
            log("ADD", None, "Some(StackUnderflow)"),
            log("PUSH1", Some(1024), "Some(StackOverflow)"),
            log("SSTORE", Some(2), "Some(OutOfGas)"),
            log("JUMP", Some(1), "Some(InvalidJump)"),
            log("INVALID", Some(0), "Some(InvalidFEOpcode)"),
            log("SSTORE", Some(2), "Some(StateChangeDuringStaticCall)"),
        ]);
        let errors: Vec<_> = logs.iter().map(|l| l.error.as_deref().unwrap()).collect();
        assert_eq!(
            errors,
            [
                "stack underflow (1 <=> 2)",
                "stack underflow",
                "stack limit reached 1024 (1023)",
                "out of gas",
                "invalid jump destination",
                "invalid opcode: INVALID",
                "write protection",
            ]
        );
        assert!(logs.iter().all(|l| l.return_data.is_none() && l.memory.is_none() && l.refund_counter.is_none()));
    }

    #[test]
    fn outputs_past_the_limit_are_refused() {
        let trace = GethTrace::Default(DefaultFrame::default());
        let json = to_json(&trace);
        assert_eq!(super::trace(trace.clone(), json.len()).unwrap(), json);
        assert!(super::trace(trace, json.len() - 1).is_err());
    }
}
