//! The header rules a block producer on an OP chain applies beyond Ethereum's: the base
//! fee from the OP EIP-1559 parameters (Canyon's denominator; from Holocene the parent's
//! extraData), Holocene's extraData, and the fields each OP fork adds to a header.

use alloy_consensus::constants::EMPTY_OMMER_ROOT_HASH;
use alloy_consensus::{Header, EMPTY_ROOT_HASH};
use alloy_eips::eip1559::{calc_next_block_base_fee, BaseFeeParams};
use alloy_eips::eip7685::EMPTY_REQUESTS_HASH;
use alloy_primitives::{Bytes, B256, B64, U256};

use crate::attributes::Attributes;
use crate::config::OpConfig;
use crate::OpSpecId;

/// The header of the block op-node's `attributes` describe on `parent` (hash
/// `parent_hash`), before any transaction: their context, the base fee, extraData from
/// Holocene, and each fork's fields as an empty block has them: an empty withdrawals root
/// from Canyon (Isthmus's is the message passer's storage root, known after execution),
/// blob gas fields and the beacon root from Ecotone, the empty requests hash from Isthmus;
/// none of them before. The one recipe for a block built exactly from the attributes and
/// for the sequencer's block opened from them (which then adds the pool's transactions).
pub fn attributes_header(config: &OpConfig, parent: &Header, parent_hash: B256, attributes: &Attributes) -> Header {
    let timestamp = attributes.timestamp;
    let spec = config.spec_at(timestamp);
    let ecotone = spec.is_enabled_in(OpSpecId::ECOTONE);
    let min_base_fee = spec.is_enabled_in(OpSpecId::JOVIAN).then(|| attributes.min_base_fee.unwrap_or(0));
    Header {
        parent_hash,
        ommers_hash: EMPTY_OMMER_ROOT_HASH,
        beneficiary: attributes.fee_recipient,
        state_root: B256::ZERO,
        transactions_root: EMPTY_ROOT_HASH,
        receipts_root: EMPTY_ROOT_HASH,
        difficulty: U256::ZERO,
        number: parent.number + 1,
        gas_limit: attributes.gas_limit,
        gas_used: 0,
        timestamp,
        extra_data: match spec.is_enabled_in(OpSpecId::HOLOCENE) {
            true => holocene_extra_data(config, attributes.eip1559_params, timestamp, min_base_fee),
            false => Bytes::new(),
        },
        mix_hash: attributes.prev_randao,
        nonce: B64::ZERO,
        base_fee_per_gas: Some(next_base_fee(config, parent, timestamp)),
        withdrawals_root: spec.is_enabled_in(OpSpecId::CANYON).then_some(EMPTY_ROOT_HASH),
        // OP blocks carry no blobs; Jovian repurposes `blobGasUsed` for the DA footprint.
        blob_gas_used: ecotone.then_some(0),
        excess_blob_gas: ecotone.then_some(0),
        parent_beacon_block_root: if ecotone { attributes.parent_beacon_block_root } else { None },
        requests_hash: spec.is_enabled_in(OpSpecId::ISTHMUS).then_some(EMPTY_REQUESTS_HASH),
        ..Default::default()
    }
}

/// Holocene's extraData: version 0, then the attributes' parameters, or the config's when
/// the attributes leave them zero. Jovian's: version 1, the same, then the minimum base fee
/// (u64 BE).
fn holocene_extra_data(config: &OpConfig, params: Option<B64>, timestamp: u64, min_base_fee: Option<u64>) -> Bytes {
    let params = params.unwrap_or_default();
    let mut out = vec![u8::from(min_base_fee.is_some())];
    if params.is_zero() {
        let (d, e) = config.base_fee_params(timestamp);
        out.extend_from_slice(&(d as u32).to_be_bytes());
        out.extend_from_slice(&(e as u32).to_be_bytes());
    } else {
        out.extend_from_slice(params.as_slice());
    }
    if let Some(min) = min_base_fee {
        out.extend_from_slice(&min.to_be_bytes());
    }
    out.into()
}

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
