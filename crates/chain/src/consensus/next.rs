//! The header of the block after a parent, before its transactions: one recipe for the
//! builder's next block and eth_simulateV1's simulated ones, so the two agree on the base
//! fee and the blob gas of the block that comes next.

use alloy_consensus::{constants::EMPTY_OMMER_ROOT_HASH, Header, EMPTY_ROOT_HASH};
use alloy_primitives::{Address, B256, U256};

use super::{next_base_fee, next_excess_blob_gas};
use crate::spec::ChainSpec;

/// What the one who builds the next block chooses; the rest follows from the parent.
#[derive(Clone, Debug, Default)]
pub struct NextBlock {
    pub timestamp: u64,
    pub beneficiary: Address,
    pub gas_limit: u64,
    pub mix_hash: B256,
    pub difficulty: U256,
    pub parent_beacon_block_root: B256,
}

/// The header of block `parent.number + 1` with no transactions yet: the base fee by
/// EIP-1559 (and the London transition), the excess blob gas by the parameters of the
/// block's own fork, and every fork's empty fields.
pub fn next_header(spec: &ChainSpec, parent: &Header, parent_hash: B256, next: NextBlock) -> Header {
    let number = parent.number + 1;
    let mut header = Header {
        parent_hash,
        ommers_hash: EMPTY_OMMER_ROOT_HASH,
        beneficiary: next.beneficiary,
        state_root: B256::ZERO,
        transactions_root: EMPTY_ROOT_HASH,
        receipts_root: EMPTY_ROOT_HASH,
        difficulty: next.difficulty,
        number,
        gas_limit: next.gas_limit,
        timestamp: next.timestamp,
        mix_hash: next.mix_hash,
        base_fee_per_gas: next_base_fee(spec, parent, number, next.timestamp),
        extra_data: spec.op().map(|op| preconf_op::header::extra_data(op, parent, next.timestamp)).unwrap_or_default(),
        ..Default::default()
    };
    let excess_blob_gas = next_excess_blob_gas(spec, parent, next.timestamp).unwrap_or(0);
    spec.set_fork_fields(&mut header, excess_blob_gas, next.parent_beacon_block_root);
    header
}

#[cfg(test)]
mod tests {
    use alloy_genesis::Genesis;

    use super::*;

    fn cancun_spec() -> ChainSpec {
        let mut genesis = Genesis::default();
        let c = &mut genesis.config;
        (c.london_block, c.shanghai_time, c.cancun_time, c.terminal_total_difficulty_passed) =
            (Some(0), Some(0), Some(0), true);
        ChainSpec::new(genesis)
    }

    #[test]
    fn a_parent_above_the_blob_target_carries_its_excess_forward() {
        let spec = cancun_spec();
        let target = spec.blob_params_at(1).unwrap().target_blob_gas_per_block();
        let parent = Header {
            number: 7,
            timestamp: 1,
            gas_limit: 30_000_000,
            gas_used: 15_000_000,
            base_fee_per_gas: Some(1_000_000_000),
            blob_gas_used: Some(target + 131_072),
            excess_blob_gas: Some(393_216),
            ..Default::default()
        };
        let next = next_header(&spec, &parent, B256::ZERO, NextBlock { timestamp: 2, ..Default::default() });
        assert_eq!(next.number, 8);
        assert_eq!(next.excess_blob_gas, Some(393_216 + 131_072));
        assert_eq!(next.blob_gas_used, Some(0));
        assert_eq!(next.base_fee_per_gas, Some(1_000_000_000), "a block at its gas target keeps the base fee");
        assert_eq!(next.withdrawals_root, Some(EMPTY_ROOT_HASH));
        assert_eq!(next.requests_hash, None, "no Prague in this chain");
    }
}
