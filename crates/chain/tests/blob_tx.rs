//! Blob transactions in their network form (`--profile geth`): the rpc-compat kit's
//! `send-blob-tx.io` (one blob, EIP-7594 cell proofs) checks out after Osaka and not
//! before, and a changed blob or versioned hash is refused.

use crate::kit;

use alloy_consensus::Transaction as _;
use preconf_chain::api::blobs::decode_blob_tx;
use preconf_chain::error::{ChainError, Rejection};

/// The raw transaction the fixture sends.
fn fixture_tx() -> Vec<u8> {
    let text = std::fs::read_to_string(kit::kit_dir().join("tests/eth_sendRawTransaction/send-blob-tx.io")).unwrap();
    let line = text.lines().find(|l| l.starts_with(">>")).unwrap();
    let request: serde_json::Value = serde_json::from_str(&line[2..]).unwrap();
    let hex = request["params"][0].as_str().unwrap();
    alloy_primitives::hex::decode(hex).unwrap()
}

const OSAKA: u64 = 480;

#[test]
fn the_fixture_blob_transaction_checks_out_after_osaka() {
    let spec = kit::spec();
    let tx = decode_blob_tx(&fixture_tx(), &spec, 540).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(tx.tx_hash().to_string(), "0x05d85f6a761cac82cfdf06dd168952838ac452b10641aabccdfdad46e03d2f0b");
    assert_eq!(tx.blob_versioned_hashes().map(|h| h.len()), Some(1));
    // Before Osaka the network form carries blob proofs, not cell proofs.
    let e = decode_blob_tx(&fixture_tx(), &spec, OSAKA - 1).unwrap_err();
    assert!(matches!(&e, ChainError::Rejected(Rejection::CellProofsBeforeOsaka)), "{e}");
    assert_eq!(e.to_string(), "sidecar version 1 (cell proofs) before Osaka");
    // Before Cancun there are no blobs at all.
    let e = decode_blob_tx(&fixture_tx(), &spec, 419).unwrap_err();
    assert!(matches!(e, ChainError::Rejected(Rejection::BlobsBeforeCancun)), "{e}");
}

#[test]
fn a_changed_blob_fails_its_proofs() {
    let spec = kit::spec();
    let mut raw = fixture_tx();
    // The blob is the bulk of the bytes: flip one in the middle of the transaction.
    let middle = raw.len() / 2;
    raw[middle] ^= 0x01;
    let e = decode_blob_tx(&raw, &spec, 540).unwrap_err();
    assert!(matches!(&e, ChainError::Rejected(Rejection::InvalidSidecar(_))), "{e}");
    assert!(e.to_string().starts_with("invalid blob sidecar: "), "{e}");
}
