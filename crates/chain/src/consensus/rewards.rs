//! Proof-of-work block rewards (ethash): the miner's block reward, a share for each uncle
//! it includes, and the uncles' own rewards. Seals are not checked on import, but these
//! balance changes are part of every pre-Merge state root.

use alloy_consensus::Header;
use alloy_primitives::{Address, U256};

use crate::spec::ChainSpec;

const ETHER: u128 = 1_000_000_000_000_000_000;
pub const FRONTIER_BLOCK_REWARD: u128 = 5 * ETHER;
pub const BYZANTIUM_BLOCK_REWARD: u128 = 3 * ETHER;
pub const CONSTANTINOPLE_BLOCK_REWARD: u128 = 2 * ETHER;

/// The base block reward in force at this block number (EIP-649, EIP-1234).
pub fn block_reward(spec: &ChainSpec, number: u64) -> U256 {
    let c = &spec.genesis.config;
    let at = |fork: Option<u64>| fork.is_some_and(|b| number >= b);
    let wei = if at(c.constantinople_block) || at(c.petersburg_block) {
        CONSTANTINOPLE_BLOCK_REWARD
    } else if at(c.byzantium_block) {
        BYZANTIUM_BLOCK_REWARD
    } else {
        FRONTIER_BLOCK_REWARD
    };
    U256::from(wei)
}

/// The balance increments a proof-of-work block applies after its transactions: first
/// each uncle's miner gets `(8 + uncle.number - number) * reward / 8`, then the block's
/// miner gets `reward + reward / 32` per uncle. Proof-of-stake blocks (difficulty 0, as
/// after the Merge) get nothing: validators are paid on the beacon chain.
///
/// The list keeps geth's order and may name an address twice; apply it in order.
pub fn block_rewards(spec: &ChainSpec, header: &Header, ommers: &[Header]) -> Vec<(Address, U256)> {
    if header.difficulty.is_zero() {
        return Vec::new();
    }
    let reward = block_reward(spec, header.number);
    let mut out = Vec::with_capacity(ommers.len() + 1);
    let mut miner = reward;
    for uncle in ommers {
        // Uncles are 1..=7 generations older (checked by the header rules), so this is
        // 1/8..=7/8 of the reward; saturate rather than wrap on a block that was not checked.
        let depth_share = (uncle.number + 8).saturating_sub(header.number);
        out.push((uncle.beneficiary, reward * U256::from(depth_share) / U256::from(8)));
        miner += reward / U256::from(32);
    }
    out.push((header.beneficiary, miner));
    out
}
