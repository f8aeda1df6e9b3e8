//! A real Base flashblock (block 37646058, index 10; test/fixtures/op/base-flashblock) read
//! by the decoder, plain and brotli-compressed, against the values in its source message.

use alloy_consensus::transaction::SignerRecoverable;
use alloy_consensus::{Transaction, TxEnvelope};
use alloy_eips::Decodable2718;
use alloy_primitives::{address, b256, keccak256, B64, U256};
use preconf_flashblocks::{decode, DecodeError, FlashblocksPayloadV1, Sequence, SequenceError};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../test/fixtures/op/base-flashblock/");

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(format!("{DIR}{name}")).unwrap()
}

fn base_message() -> FlashblocksPayloadV1 {
    decode(&fixture("block-37646058-index-10.json")).unwrap()
}

#[test]
fn the_base_message_decodes_with_its_values() {
    let m = base_message();
    assert_eq!(m.payload_id, "0x0316ecb1aa1671b5".parse::<B64>().unwrap());
    assert_eq!(m.index, 10);
    assert_eq!(m.base, None, "only index 0 carries the base");
    assert_eq!(m.metadata.block_number, 37_646_058);
    let d = &m.diff;
    assert_eq!(d.block_hash, b256!("0x2d902e3fcb5bd57e0bf878cbbda1386e7fb8968d518912d58678a35e58261c46"));
    assert_eq!(d.receipts_root, b256!("0x2c4203e9aa87258627bf23ab4d5f9d92da30285ea11dc0b3e140a5a8d4b63e26"));
    assert_eq!(d.withdrawals_root, b256!("0x81864c23f426ad807d66c9fdde33213e1fdbac06c1b751d279901d1ce13670ac"));
    assert!(d.state_root.is_zero());
    assert_eq!(d.gas_used, 0x2907796);
    assert!(d.withdrawals.is_empty());
    assert_eq!(d.blob_gas_used, None);
    assert_eq!(d.logs_bloom.as_slice()[..4], [0x5c, 0x21, 0x06, 0x52]);

    // Eleven signed Base transactions (chain 8453), each with a sender.
    assert_eq!(d.transactions.len(), 11);
    let hashes: Vec<_> = d.transactions.iter().map(keccak256).collect();
    for raw in &d.transactions {
        let tx = TxEnvelope::decode_2718(&mut raw.as_ref()).unwrap();
        assert_eq!(tx.chain_id(), Some(8453));
        tx.recover_signer().unwrap();
    }
    // The metadata's receipts are of this diff's transactions.
    assert_eq!(m.metadata.receipts.len(), 2);
    for (hash, receipt) in &m.metadata.receipts {
        assert!(hashes.contains(hash), "receipt {hash} of a transaction not in the diff");
        let (kind, fields) = receipt.as_object().unwrap().iter().next().unwrap();
        assert!(["Legacy", "Eip1559"].contains(&kind.as_str()));
        assert_eq!(fields["status"], "0x1");
    }
    assert_eq!(m.metadata.new_account_balances.len(), 4);
    let entry_point = address!("0x0000000071727de22e5e9d8baf0edac6f37da032");
    assert_eq!(m.metadata.new_account_balances[&entry_point], U256::from(0x23281e39594556899u128));
}

#[test]
fn the_brotli_frame_decodes_to_the_same_message() {
    let compressed = fixture("block-37646058-index-10.json.br");
    assert!(compressed.len() * 4 < fixture("block-37646058-index-10.json").len());
    assert_eq!(decode(&compressed).unwrap(), base_message());
}

#[test]
fn writing_the_message_again_gives_the_same_json() {
    let original: serde_json::Value = serde_json::from_slice(&fixture("block-37646058-index-10.json")).unwrap();
    assert_eq!(serde_json::to_value(base_message()).unwrap(), original);
}

#[test]
fn broken_frames_are_refused_with_the_reason() {
    let compressed = fixture("block-37646058-index-10.json.br");
    assert!(matches!(decode(&compressed[..compressed.len() / 2]), Err(DecodeError::Brotli(_) | DecodeError::Json(_))));
    assert!(matches!(decode(b"{\"payload_id\":\"0x01\"}"), Err(DecodeError::Json(_))));
    assert!(matches!(decode(b"\x00\x01garbage"), Err(DecodeError::Brotli(_) | DecodeError::Json(_))));
}

#[test]
fn a_sequence_needs_its_index_0_and_keeps_order() {
    let m = base_message();
    assert_eq!(Sequence::start(m.clone()).unwrap_err(), SequenceError::NoBase { payload_id: m.payload_id, index: 10 });
}
