//! Receipts of imported blocks. Before Byzantium (EIP-658) a receipt carries the state
//! root after its transaction instead of a status flag, so importing a pre-Byzantium
//! block means computing a state root after every transaction: the state with that
//! transaction's changes (sender, recipient, fee to the coinbase; from Spurious Dragon on
//! with touched empty accounts removed, EIP-161), before the block's rewards. Those
//! roots go into the receipts and hence into `receiptsRoot`.

use alloy_consensus::{Eip658Value, Receipt, ReceiptEnvelope, TxType};
use alloy_primitives::{Log, B256};
use revm::primitives::hardfork::SpecId;

/// Whether receipts of blocks under `spec_id` carry intermediate state roots.
pub fn uses_post_state_root(spec_id: SpecId) -> bool {
    !spec_id.is_enabled_in(SpecId::BYZANTIUM)
}

/// The status part of a receipt: the success flag from Byzantium on, otherwise the
/// state root after the transaction (computed only when needed: it is a trie update).
pub fn receipt_outcome(spec_id: SpecId, success: bool, post_state_root: impl FnOnce() -> B256) -> Eip658Value {
    if uses_post_state_root(spec_id) {
        Eip658Value::PostState(post_state_root())
    } else {
        Eip658Value::Eip658(success)
    }
}

/// The consensus receipt of a transaction of type `tx_type`.
pub fn receipt_envelope(
    tx_type: TxType,
    status: Eip658Value,
    cumulative_gas_used: u64,
    logs: Vec<Log>,
) -> ReceiptEnvelope {
    let receipt = Receipt { status, cumulative_gas_used, logs }.with_bloom();
    match tx_type {
        TxType::Legacy => ReceiptEnvelope::Legacy(receipt),
        TxType::Eip2930 => ReceiptEnvelope::Eip2930(receipt),
        TxType::Eip1559 => ReceiptEnvelope::Eip1559(receipt),
        TxType::Eip4844 => ReceiptEnvelope::Eip4844(receipt),
        TxType::Eip7702 => ReceiptEnvelope::Eip7702(receipt),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy_consensus::proofs::calculate_receipt_root;
    use alloy_eips::eip2718::Encodable2718;

    #[test]
    fn pre_byzantium_receipts_carry_the_state_root() {
        let root = B256::repeat_byte(0xab);
        let old = receipt_outcome(SpecId::SPURIOUS_DRAGON, true, || root);
        let new = receipt_outcome(SpecId::BYZANTIUM, true, || unreachable!("no root after Byzantium"));
        assert_eq!(old, Eip658Value::PostState(root));
        assert_eq!(new, Eip658Value::Eip658(true));
        let old = receipt_envelope(TxType::Legacy, old, 21_000, Vec::new());
        let new = receipt_envelope(TxType::Legacy, new, 21_000, Vec::new());
        // The root is encoded in place of the status byte: a different receipt and root.
        let encoded = old.encoded_2718();
        assert!(encoded.windows(32).any(|w| w == root.as_slice()));
        assert_eq!(encoded.len(), new.encoded_2718().len() + 32);
        assert_ne!(calculate_receipt_root(&[old]), calculate_receipt_root(&[new]));
    }
}
