//! The payload id: a digest of everything that decides the block, so that the same
//! attributes on the same parent name the same build (op-node may send them twice) and
//! different ones never collide. The first byte is the method version, as op-geth marks it.

use alloy_primitives::{B256, B64};
use alloy_rlp::Encodable;
use sha2::{Digest, Sha256};

use super::types::{PayloadAttributes, Version};

pub fn payload_id(parent: &B256, attributes: &PayloadAttributes, version: Version) -> B64 {
    let mut h = Sha256::new();
    h.update(parent);
    h.update(attributes.timestamp.to_be_bytes());
    h.update(attributes.prev_randao);
    h.update(attributes.fee_recipient);
    if let Some(withdrawals) = &attributes.withdrawals {
        let mut out = Vec::new();
        withdrawals.encode(&mut out);
        h.update(&out);
    }
    if let Some(root) = &attributes.parent_beacon_block_root {
        h.update(root);
    }
    if attributes.no_tx_pool || !attributes.transactions.is_empty() {
        h.update([u8::from(attributes.no_tx_pool)]);
        h.update((attributes.transactions.len() as u64).to_be_bytes());
        for tx in &attributes.transactions {
            h.update(alloy_primitives::keccak256(tx));
        }
    }
    if let Some(gas_limit) = attributes.gas_limit {
        h.update(gas_limit.to_be_bytes());
    }
    if let Some(params) = &attributes.eip1559_params {
        h.update(params);
    }
    if let Some(min) = attributes.min_base_fee {
        h.update(min.to_be_bytes());
    }
    let digest = h.finalize();
    let mut id = [0u8; 8];
    id.copy_from_slice(&digest[..8]);
    id[0] = version as u8;
    B64::from(id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy_primitives::{Address, Bytes};

    fn attrs() -> PayloadAttributes {
        PayloadAttributes {
            timestamp: 10,
            prev_randao: B256::repeat_byte(1),
            fee_recipient: Address::repeat_byte(2),
            withdrawals: None,
            parent_beacon_block_root: None,
            transactions: vec![Bytes::from_static(&[0x7e, 1])],
            no_tx_pool: true,
            gas_limit: Some(30_000_000),
            eip1559_params: None,
            min_base_fee: None,
        }
    }

    #[test]
    fn same_inputs_same_id_and_every_member_counts() {
        let parent = B256::repeat_byte(9);
        let id = payload_id(&parent, &attrs(), Version::V2);
        assert_eq!(id, payload_id(&parent, &attrs(), Version::V2));
        assert_eq!(id[0], 2);
        let changed = [
            PayloadAttributes { timestamp: 11, ..attrs() },
            PayloadAttributes { no_tx_pool: false, ..attrs() },
            PayloadAttributes { transactions: vec![], ..attrs() },
            PayloadAttributes { gas_limit: Some(1), ..attrs() },
            PayloadAttributes { withdrawals: Some(vec![]), ..attrs() },
            PayloadAttributes { eip1559_params: Some(B64::repeat_byte(1)), ..attrs() },
            PayloadAttributes { min_base_fee: Some(1), ..attrs() },
        ];
        for other in changed {
            assert_ne!(payload_id(&parent, &other, Version::V2), id, "{other:?}");
        }
        assert_ne!(payload_id(&B256::ZERO, &attrs(), Version::V2), id);
        assert_eq!(payload_id(&parent, &attrs(), Version::V3)[0], 3);
    }
}
