//! The header rules a block producer on an OP chain applies beyond Ethereum's: the base
//! fee from the OP EIP-1559 parameters (Canyon's denominator; from Holocene the parent's
//! extraData), and Holocene's extraData.

use alloy_consensus::Header;
use alloy_eips::eip1559::{calc_next_block_base_fee, BaseFeeParams};
use alloy_primitives::Bytes;

use crate::config::OpConfig;
use crate::OpSpecId;

/// The (denominator, elasticity) for the block after `parent` at `timestamp`: from Holocene
/// the parent's extraData carries them (zero: the config's); before, the config.
pub fn base_fee_params(config: &OpConfig, parent: &Header, timestamp: u64) -> BaseFeeParams {
    let (mut denominator, mut elasticity) = config.base_fee_params(timestamp);
    if config.is_active(OpSpecId::HOLOCENE, parent.timestamp) && parent.extra_data.len() >= 9 {
        let d = u32::from_be_bytes(parent.extra_data[1..5].try_into().expect("4 bytes"));
        let e = u32::from_be_bytes(parent.extra_data[5..9].try_into().expect("4 bytes"));
        if d != 0 {
            (denominator, elasticity) = (d as u64, e as u64);
        }
    }
    BaseFeeParams::new(denominator as u128, elasticity as u128)
}

/// The base fee of the block after `parent` at `timestamp`. From a Jovian parent on, the
/// parent's DA footprint (its `blobGasUsed`) stands for its gas when larger, and the
/// result is held at the minimum the parent's extraData names.
pub fn next_base_fee(config: &OpConfig, parent: &Header, timestamp: u64) -> u64 {
    let params = base_fee_params(config, parent, timestamp);
    let parent_base_fee = parent.base_fee_per_gas.unwrap_or_default();
    if !config.is_active(OpSpecId::JOVIAN, parent.timestamp) {
        return calc_next_block_base_fee(parent.gas_used, parent.gas_limit, parent_base_fee, params);
    }
    let metered = parent.gas_used.max(parent.blob_gas_used.unwrap_or_default());
    calc_next_block_base_fee(metered, parent.gas_limit, parent_base_fee, params).max(min_base_fee(parent))
}

/// The minimum base fee a Jovian header's extraData (version 1) names; 0 in any other.
pub fn min_base_fee(header: &Header) -> u64 {
    match (header.extra_data.first(), header.extra_data.get(9..17)) {
        (Some(1), Some(bytes)) => u64::from_be_bytes(bytes.try_into().expect("8 bytes")),
        _ => 0,
    }
}

/// A built block's extraData: from Holocene version 0 then the config's denominator and
/// elasticity (u32 big-endian each), as op-geth's sequencer writes them when op-node's
/// attributes leave the parameters zero; from Jovian version 1, the same, then the minimum
/// base fee, the parent's (with no op-node to hand a SystemConfig value over, the one the
/// chain started with, in its genesis extraData, stays); empty before Holocene.
pub fn extra_data(config: &OpConfig, parent: &Header, timestamp: u64) -> Bytes {
    if !config.is_active(OpSpecId::HOLOCENE, timestamp) {
        return Bytes::new();
    }
    let jovian = config.is_active(OpSpecId::JOVIAN, timestamp);
    let (d, e) = config.base_fee_params(timestamp);
    let mut out = vec![u8::from(jovian)];
    out.extend_from_slice(&(d as u32).to_be_bytes());
    out.extend_from_slice(&(e as u32).to_be_bytes());
    if jovian {
        out.extend_from_slice(&min_base_fee(parent).to_be_bytes());
    }
    out.into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holocene_extra_data_round_trips_into_the_next_base_fee() {
        let config = crate::dev::dev_config(901);
        let extra = extra_data(&config, &Header::default(), 0);
        assert_eq!(extra.as_ref(), &[0, 0, 0, 0, 250, 0, 0, 0, 6]);
        let parent = Header {
            extra_data: extra,
            gas_limit: 30_000_000,
            gas_used: 30_000_000,
            base_fee_per_gas: Some(1_000_000_000),
            ..Default::default()
        };
        // Full parent at elasticity 6: the fee rises by (6 - 1) / 250 = 2 %.
        assert_eq!(next_base_fee(&config, &parent, 2), 1_020_000_000);
    }

    #[test]
    fn jovian_extra_data_carries_the_parents_minimum() {
        let config = crate::dev::dev_config_for(901, crate::dev::DevHardfork::Jovian);
        let mut extra = vec![1, 0, 0, 0, 250, 0, 0, 0, 6];
        extra.extend_from_slice(&5_000_000_000u64.to_be_bytes());
        let parent = Header {
            extra_data: extra.clone().into(),
            gas_limit: 30_000_000,
            base_fee_per_gas: Some(1_000_000_000),
            ..Default::default()
        };
        assert_eq!(extra_data(&config, &parent, 2), Bytes::from(extra));
        // An empty parent would lower the fee; the minimum holds it.
        assert_eq!(next_base_fee(&config, &parent, 2), 5_000_000_000);
        // A Holocene parent names no minimum.
        let holocene = Header { extra_data: extra_data(&crate::dev::dev_config(901), &parent, 2), ..parent };
        assert_eq!(extra_data(&config, &holocene, 4)[9..], [0u8; 8]);
    }
}
