//! eth_call and eth_estimateGas.

use alloy_primitives::{Bytes, U256};
use revm::context_interface::result::{ExecutionResult, HaltReason, OutOfGasError};
use revm::database::CacheDB;
use revm::handler::ExecuteEvm;
use serde::Deserialize;

use super::errors::{evm_error, halt_message, reverted};
use super::request::{apply_state_overrides, BlockOverrides, CallRequest, StateOverrides};
use super::{build_evm, ExecBlock, Mode};
use crate::error::{ChainError, ChainResult};
use crate::node::{Node, Resolved};
use crate::state::StateView;
use crate::types::BlockId;

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallParams {
    pub tx: CallRequest,
    pub block: String,
    pub state_overrides: Option<StateOverrides>,
    pub block_overrides: Option<BlockOverrides>,
}

/// Everything one call needs, resolved against a single view.
struct Prepared {
    state: StateView,
    block: ExecBlock,
}

fn prepare(node: &Node, block: &str, overrides: Option<&BlockOverrides>) -> ChainResult<Prepared> {
    let view = node.view();
    let at: Resolved = node.resolve(&view, BlockId::parse(block)?)?;
    let header = node.context_header(&view, at)?;
    let mut exec_block = ExecBlock::from_header(&header);
    if let Some(o) = overrides {
        apply_block_overrides(&mut exec_block, o)?;
    }
    Ok(Prepared { state: node.state(&view, at), block: exec_block })
}

pub fn apply_block_overrides(block: &mut ExecBlock, o: &BlockOverrides) -> ChainResult<()> {
    if let Some(n) = o.number {
        block.number = n.to();
    }
    if let Some(t) = o.time {
        block.timestamp = t.to();
    }
    if let Some(g) = o.gas_limit {
        block.gas_limit = g.to();
    }
    if let Some(r) = o.fee_recipient {
        block.beneficiary = r;
    }
    if let Some(r) = o.prev_randao {
        block.prevrandao = r;
    }
    if let Some(d) = o.difficulty {
        block.difficulty = d;
    }
    if let Some(b) = o.base_fee_per_gas {
        block.base_fee = u64::try_from(b).map_err(|_| ChainError::InvalidParams("baseFeePerGas too large".into()))?;
    }
    Ok(())
}

/// Runs one call; the raw revm outcome plus the gas it was given.
fn run(node: &Node, p: &Prepared, tx: &CallRequest, overrides: Option<&StateOverrides>, gas: u64) -> ChainResult<ExecutionResult<HaltReason>> {
    let mut db = CacheDB::new(p.state.clone());
    if let Some(o) = overrides {
        apply_state_overrides(&mut db, o)?;
    }
    let nonce = match tx.nonce {
        Some(n) => n.to(),
        None => db.load_account(tx.sender())?.info().map(|a| a.nonce).unwrap_or_default(),
    };
    let env = tx.to_tx_env(node.chain_id(), gas, nonce, Some(p.block.base_fee))?;
    let mut evm = build_evm(db, &node.spec, &p.block, Mode::Call);
    let out = evm.transact(env).map_err(|e| evm_error(e, tx.sender(), gas))?;
    Ok(out.result)
}

fn gas_for(node: &Node, tx: &CallRequest) -> u64 {
    let cap = node.config.gas_cap;
    tx.gas.map(|g| g.to::<u64>()).unwrap_or(cap).min(cap)
}

/// eth_call: the return data, or the revert/halt as an error.
pub fn call(node: &Node, params: &CallParams) -> ChainResult<Bytes> {
    let p = prepare(node, &params.block, params.block_overrides.as_ref())?;
    let gas = gas_for(node, &params.tx);
    match run(node, &p, &params.tx, params.state_overrides.as_ref(), gas)? {
        ExecutionResult::Success { output, .. } => Ok(output.into_data()),
        ExecutionResult::Revert { output, .. } => Err(reverted(output)),
        ExecutionResult::Halt { reason, .. } => Err(ChainError::Halted(halt_message(&reason))),
    }
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EstimateParams {
    pub tx: CallRequest,
    pub block: String,
    pub state_overrides: Option<StateOverrides>,
}

/// geth's estimate is accurate to this fraction of the gas limit found.
const ESTIMATE_ERROR_RATIO: f64 = 0.015;
const CALL_STIPEND: u64 = 2_300;

/// eth_estimateGas: binary search for the least gas that succeeds, as geth does.
pub fn estimate_gas(node: &Node, params: &EstimateParams) -> ChainResult<u64> {
    let p = prepare(node, &params.block, None)?;
    let overrides = params.state_overrides.as_ref();
    let tx = &params.tx;
    let mut hi = match tx.gas {
        Some(g) => g.to::<u64>(),
        None => p.block.gas_limit,
    }
    .min(node.config.gas_cap);

    // A fee-paying sender can only buy as much gas as its balance allows.
    let fee_cap = tx.gas_price.or(tx.max_fee_per_gas).unwrap_or_default();
    if !fee_cap.is_zero() {
        let balance = p.state.balance(&tx.sender())?;
        let available = balance.saturating_sub(tx.value.unwrap_or_default());
        let allowance = available / fee_cap;
        if allowance < U256::from(hi) {
            hi = allowance.to::<u64>();
        }
    }

    // A plain transfer to an account without code costs exactly 21000.
    if tx.input.as_ref().is_none_or(|d| d.is_empty()) {
        if let Some(to) = tx.to {
            if p.state.code_bytes(&to)?.is_empty() && overrides.is_none_or(|o| !o.contains_key(&to)) && hi >= 21_000 {
                let r = run(node, &p, tx, overrides, 21_000)?;
                if r.is_success() {
                    return Ok(21_000);
                }
            }
        }
    }

    let first = run(node, &p, tx, overrides, hi)?;
    let (used, refund) = match &first {
        ExecutionResult::Success { gas, .. } => (gas.tx_gas_used(), gas.final_refunded()),
        ExecutionResult::Revert { output, .. } => return Err(reverted(output.clone())),
        ExecutionResult::Halt { reason, .. } => {
            return Err(match reason {
                HaltReason::OutOfGas(OutOfGasError::Basic) => {
                    ChainError::Rejected(format!("gas required exceeds allowance ({hi})"))
                }
                other => ChainError::Halted(halt_message(other)),
            })
        }
    };
    let mut lo = used.saturating_sub(1);
    // Often right first time: what was used, plus refunds and stipend, with 64/63 headroom.
    let optimistic = ((used + refund + CALL_STIPEND) * 64 / 63).min(hi);
    if optimistic > lo && optimistic < hi {
        if run(node, &p, tx, overrides, optimistic)?.is_success() {
            hi = optimistic;
        } else {
            lo = optimistic;
        }
    }
    while lo + 1 < hi {
        if ((hi - lo) as f64) / (hi as f64) < ESTIMATE_ERROR_RATIO {
            break;
        }
        let mid = lo + (hi - lo) / 2;
        if run(node, &p, tx, overrides, mid)?.is_success() {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Ok(hi)
}
