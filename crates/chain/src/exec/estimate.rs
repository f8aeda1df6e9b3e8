//! eth_estimateGas: binary search for the least gas that succeeds, as geth does.

use alloy_primitives::U256;
use alloy_rpc_types_eth::{state::StateOverride, TransactionRequest};
use revm::context_interface::result::{ExecutionResult, HaltReason, OutOfGasError};

use super::call::CallContext;
use super::errors::reverted;
use super::request::{input, sender};
use crate::error::{ChainError, ChainResult, Rejection};

/// geth's estimate is accurate to this fraction of the gas limit found.
const ESTIMATE_ERROR_RATIO: f64 = 0.015;
const CALL_STIPEND: u64 = 2_300;

pub fn estimate_gas(ctx: &CallContext, tx: &TransactionRequest, overrides: Option<&StateOverride>) -> ChainResult<u64> {
    let mut hi = tx.gas.unwrap_or(ctx.block.gas_limit).min(ctx.gas_cap);

    // A fee-paying sender can only buy as much gas as its balance allows.
    let fee_cap = tx.gas_price.or(tx.max_fee_per_gas).unwrap_or_default();
    if fee_cap != 0 {
        let balance = ctx.state.balance(&sender(tx))?;
        let available = balance.saturating_sub(tx.value.unwrap_or_default());
        let allowance = available / U256::from(fee_cap);
        if allowance < U256::from(hi) {
            hi = allowance.to::<u64>();
        }
    }

    // A plain transfer to an account without code usually costs exactly 21000. Tried, not
    // assumed: an access or authorization list costs more, and then (as in geth) the 21000
    // run's failure is no answer, the search below is.
    if input(tx)?.is_empty() {
        if let Some(to) = tx.to.and_then(|k| k.to().copied()) {
            let overridden = overrides.is_some_and(|o| o.contains_key(&to));
            if !overridden
                && hi >= 21_000
                && ctx.state.code_bytes(&to)?.is_empty()
                && ctx.run(tx, overrides, 21_000).is_ok_and(|r| r.is_success())
            {
                return Ok(21_000);
            }
        }
    }

    let first = ctx.run(tx, overrides, hi)?;
    let (used, refund) = match &first {
        ExecutionResult::Success { gas, .. } => (gas.tx_gas_used(), gas.final_refunded()),
        ExecutionResult::Revert { output, .. } => return Err(reverted(output.clone())),
        ExecutionResult::Halt { reason, .. } => {
            return Err(match reason {
                HaltReason::OutOfGas(OutOfGasError::Basic) => Rejection::GasAboveAllowance(hi).into(),
                other => ChainError::Halted(other.into()),
            })
        }
    };
    let mut lo = used.saturating_sub(1);
    // Often right first time: what was used, plus refunds and stipend, with 64/63 headroom.
    let optimistic = ((used + refund + CALL_STIPEND) * 64 / 63).min(hi);
    if optimistic > lo && optimistic < hi {
        if ctx.run(tx, overrides, optimistic)?.is_success() {
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
        if ctx.run(tx, overrides, mid)?.is_success() {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Ok(hi)
}
