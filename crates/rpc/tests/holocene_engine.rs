//! The OP Sepolia Holocene blocks (test/fixtures/op/op-sepolia-holocene) through the Engine
//! API's own layers, on each block's witness (a node cannot load a witness as its state):
//! op-node's attributes as JSON → the attributes' checks for the method version → the block
//! a `noTxPool` job builds → getPayloadV3's envelope → that payload read back by
//! newPayloadV3's parser and assembled into the same block hash.

use std::path::Path;

use preconf_chain::engine::types::Version;
use preconf_chain::engine::{build, new_payload, payload_id, rules};
use preconf_op::fixture::{block_files, read_text, WitnessFixture};
use preconf_rpc::{engine, engine_payload};
use serde_json::Value;

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../test/fixtures/op/op-sepolia-holocene");

/// The fixture's payload attributes as op-node sends them in forkchoiceUpdatedV3. The kona
/// fixtures leave out the two members op-node adds on an OP chain from Canyon on: empty
/// withdrawals, and `noTxPool` (derivation replays exactly the given transactions).
fn attributes_json(fixture: &Value) -> String {
    let mut a = fixture["executing_payload"].clone();
    a["withdrawals"] = Value::Array(Vec::new());
    a["noTxPool"] = Value::Bool(true);
    a.to_string()
}

#[test]
fn holocene_attributes_build_op_sepolia_blocks_through_the_engine_layer() {
    let files = block_files(Path::new(DIR)).unwrap();
    assert_eq!(files.len(), 8);
    for path in files {
        let name = path.display();
        let raw: Value = serde_json::from_str(&read_text(&path).unwrap()).unwrap();
        let fixture = WitnessFixture::from_json(&raw).unwrap();
        let (op, parent) = (&fixture.config, &fixture.parent);

        let attributes = engine::payload_attributes(&attributes_json(&raw)).unwrap();
        assert!(attributes.no_tx_pool && attributes.eip1559_params.is_some(), "{name}");
        rules::check_attributes(op, Version::V3, parent, &attributes).unwrap();
        // Holocene blocks are Ecotone-era payloads: V2 is refused for them.
        assert!(rules::check_attributes(op, Version::V2, parent, &attributes).is_err(), "{name}");

        let id = payload_id::payload_id(&parent.hash_slow(), &attributes, Version::V3);
        let block = build::build_on(op, parent, &attributes, &fixture.state).unwrap();
        let built = build::built_payload(id, block, &attributes);
        assert_eq!(built.hash, fixture.expected_hash, "{name}");

        let envelope: Value = serde_json::from_str(&engine::payload_envelope(&built, Version::V3)).unwrap();
        let payload = &envelope["executionPayload"];
        assert_eq!(payload["blockHash"], Value::String(format!("{:#x}", fixture.expected_hash)), "{name}");
        assert_eq!(payload["transactions"].as_array().unwrap().len(), attributes.transactions.len(), "{name}");
        let beacon_root = envelope["parentBeaconBlockRoot"].as_str().unwrap().to_string();

        let received = engine_payload::new_payload(&payload.to_string(), Some("[]"), Some(&beacon_root), None).unwrap();
        new_payload::check_version(op, Version::V3, &received).unwrap();
        let (_, hash) = new_payload::assemble(op, &received).unwrap();
        assert_eq!(hash, fixture.expected_hash, "{name}");
    }
}
