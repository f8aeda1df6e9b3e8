//! EIP-1559 base fee and gas-limit bounds, including the London transition block, whose
//! base fee is fixed (1 gwei) and whose gas limit may double (the elasticity multiplier).

use alloy_consensus::Header;

use crate::genesis::INITIAL_BASE_FEE;
use crate::spec::ChainSpec;

/// A block's gas limit may move by less than 1/1024 of its parent's.
pub const GAS_LIMIT_BOUND_DIVISOR: u64 = 1024;
/// The smallest gas limit a block may have.
pub const MIN_GAS_LIMIT: u64 = 5000;
/// The largest gas limit a block may have (2^63 - 1).
pub const MAX_GAS_LIMIT: u64 = 0x7fff_ffff_ffff_ffff;

/// The base fee a block `number` on top of `parent` must carry: `None` before London,
/// [`INITIAL_BASE_FEE`] for the first London block, then the EIP-1559 update.
pub fn next_base_fee(spec: &ChainSpec, parent: &Header, number: u64, timestamp: u64) -> Option<u64> {
    if !spec.is_london(number) {
        return None;
    }
    if !spec.is_london(parent.number) {
        return Some(INITIAL_BASE_FEE);
    }
    if let Some(op) = spec.op() {
        // An OP chain has its own EIP-1559 parameters (and from Holocene, the parent's).
        return Some(preconf_op::header::next_base_fee(op, parent, timestamp));
    }
    let parent_fee = parent.base_fee_per_gas.unwrap_or(INITIAL_BASE_FEE);
    Some(alloy_eips::eip1559::calc_next_block_base_fee(
        parent.gas_used,
        parent.gas_limit,
        parent_fee,
        spec.base_fee_params(),
    ))
}

/// The gas limits a block `number` on top of `parent` may have (inclusive range). At the
/// London transition the parent's limit counts times the elasticity multiplier, so that
/// the gas target stays where the old limit was.
pub fn gas_limit_bounds(spec: &ChainSpec, parent: &Header, number: u64) -> (u64, u64) {
    // An OP chain's gas limit is the SystemConfig's, set from L1 (op-geth skips the bound).
    if spec.op().is_some() {
        return (0, MAX_GAS_LIMIT);
    }
    let mut parent_limit = parent.gas_limit;
    if spec.is_london(number) && !spec.is_london(parent.number) {
        parent_limit = parent_limit.saturating_mul(spec.base_fee_params().elasticity_multiplier as u64);
    }
    // |limit - parent| must stay strictly below parent / 1024.
    let max_delta = (parent_limit / GAS_LIMIT_BOUND_DIVISOR).saturating_sub(1);
    let low = parent_limit.saturating_sub(max_delta).max(MIN_GAS_LIMIT);
    let high = parent_limit.saturating_add(max_delta).min(MAX_GAS_LIMIT);
    (low, high)
}
