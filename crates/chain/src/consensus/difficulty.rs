//! Proof-of-work difficulty (ethash's adjustment and difficulty bomb per fork), total
//! difficulty, and the Merge: once the parent's total difficulty reaches the terminal
//! total difficulty, every following block is a proof-of-stake block (difficulty 0).

use alloy_consensus::{constants::EMPTY_OMMER_ROOT_HASH, Header};
use alloy_primitives::U256;

use crate::spec::ChainSpec;

/// Difficulty never drops below this (geth's `MinimumDifficulty`).
pub const MINIMUM_DIFFICULTY: u64 = 131_072;
const BOUND_DIVISOR: u64 = 2048;
/// Blocks per bomb period: the bomb doubles every 100 000 (fake) blocks.
const BOMB_PERIOD: u64 = 100_000;

/// Whether the block after a parent with total difficulty `parent_td` belongs to
/// proof of stake (geth's rule for imported chains). A TTD of zero means proof of stake
/// from genesis on; without a TTD only `terminalTotalDifficultyPassed` makes it so.
pub fn expects_proof_of_stake(spec: &ChainSpec, parent_td: U256) -> bool {
    let c = &spec.genesis.config;
    match c.terminal_total_difficulty {
        Some(ttd) => parent_td >= ttd,
        None => c.terminal_total_difficulty_passed,
    }
}

/// Total difficulty after `header`, given its parent's.
pub fn total_difficulty(parent_td: U256, header: &Header) -> U256 {
    parent_td + header.difficulty
}

/// The fork's difficulty-bomb delay in blocks, by the number of the block being made.
fn bomb_delay(spec: &ChainSpec, number: u64) -> Option<u64> {
    let c = &spec.genesis.config;
    let at = |fork: Option<u64>| fork.is_some_and(|b| number >= b);
    [
        (c.gray_glacier_block, 11_400_000),  // EIP-5133
        (c.arrow_glacier_block, 10_700_000), // EIP-4345
        (c.london_block, 9_700_000),         // EIP-3554
        (c.muir_glacier_block, 9_000_000),   // EIP-2384
        (c.constantinople_block, 5_000_000), // EIP-1234
        (c.byzantium_block, 3_000_000),      // EIP-649
    ]
    .into_iter()
    .find(|(fork, _)| at(*fork))
    .map(|(_, delay)| delay)
}

/// The bomb term `2^(period - 2)` for a (possibly delayed) block count, if it has started.
fn bomb(fake_number: u64) -> U256 {
    let period = fake_number / BOMB_PERIOD;
    if period > 1 {
        U256::from(1u64) << (period - 2) as usize
    } else {
        U256::ZERO
    }
}

/// `parent + parent / 2048 * step`, with `step` clamped at -99, floored at the minimum.
fn adjust(parent: U256, step: i64) -> U256 {
    let step = step.max(-99);
    let unit = parent / U256::from(BOUND_DIVISOR);
    let changed = if step >= 0 {
        parent + unit * U256::from(step as u64)
    } else {
        parent.saturating_sub(unit * U256::from(step.unsigned_abs()))
    };
    changed.max(U256::from(MINIMUM_DIFFICULTY))
}

/// The difficulty a proof-of-work block at `timestamp` on top of `parent` must carry.
pub fn ethash_difficulty(spec: &ChainSpec, timestamp: u64, parent: &Header) -> U256 {
    let number = parent.number + 1;
    let elapsed = timestamp.saturating_sub(parent.timestamp);
    let c = &spec.genesis.config;
    if let Some(delay) = bomb_delay(spec, number) {
        // Byzantium rule (EIP-100): uncles in the parent count as one more step of demand.
        let base: i64 = if parent.ommers_hash == EMPTY_OMMER_ROOT_HASH { 1 } else { 2 };
        let step = base.saturating_sub(i64::try_from(elapsed / 9).unwrap_or(i64::MAX));
        // The bomb runs `delay` blocks behind; geth counts from the parent.
        let fake_parent = parent.number.saturating_sub(delay - 1);
        return adjust(parent.difficulty, step) + bomb(fake_parent);
    }
    let diff = if c.homestead_block.is_some_and(|b| number >= b) {
        adjust(parent.difficulty, 1i64.saturating_sub(i64::try_from(elapsed / 10).unwrap_or(i64::MAX)))
    } else if elapsed < 13 {
        adjust(parent.difficulty, 1)
    } else {
        adjust(parent.difficulty, -1)
    };
    diff + bomb(number)
}
