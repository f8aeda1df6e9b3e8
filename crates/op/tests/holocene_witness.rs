//! The OP Sepolia Holocene blocks (test/fixtures/op/op-sepolia-holocene, from kona's executor
//! test data): each built from its parent header and the payload attributes op-node sent,
//! on a state made of the block's witness alone, must hash to the real block's hash.

use std::collections::HashMap;
use std::io::Read;

use alloy_consensus::Header;
use alloy_primitives::{Bytes, B256, B64};
use preconf_op::block::{execute, Attributes};
use preconf_op::config::OpConfig;
use preconf_op::state::WitnessState;

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../test/fixtures/op/op-sepolia-holocene");

fn run(path: &std::path::Path) -> (B256, B256) {
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap()).read_to_string(&mut text).unwrap();
    let fixture: serde_json::Value = serde_json::from_str(&text).unwrap();
    let config = OpConfig::from_rollup_json(&fixture["rollup_config"]).unwrap();
    let parent: Header = serde_json::from_value(fixture["parent_header"].clone()).unwrap();
    let p = &fixture["executing_payload"];
    let quantity =
        |v: &serde_json::Value| u64::from_str_radix(v.as_str().unwrap().trim_start_matches("0x"), 16).unwrap();
    let attributes = Attributes {
        timestamp: quantity(&p["timestamp"]),
        prev_randao: p["prevRandao"].as_str().unwrap().parse().unwrap(),
        fee_recipient: p["suggestedFeeRecipient"].as_str().unwrap().parse().unwrap(),
        parent_beacon_block_root: p["parentBeaconBlockRoot"].as_str().map(|s| s.parse().unwrap()),
        gas_limit: quantity(&p["gasLimit"]),
        transactions: p["transactions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_str().unwrap().parse().unwrap())
            .collect(),
        eip1559_params: p["eip1559Params"].as_str().map(|s| s.parse::<B64>().unwrap()),
    };
    let preimages: HashMap<B256, Bytes> = fixture["preimages"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.parse().unwrap(), v.as_str().unwrap().parse().unwrap()))
        .collect();
    let state = WitnessState::new(parent.state_root, preimages);
    let executed = execute(&config, &parent, &attributes, &state).unwrap();
    (executed.header.hash_slow(), fixture["expected_block_hash"].as_str().unwrap().parse().unwrap())
}

#[test]
fn holocene_blocks_hash_as_op_sepolia() {
    let mut files: Vec<_> = std::fs::read_dir(DIR).unwrap().map(|e| e.unwrap().path()).collect();
    files.retain(|p| p.to_string_lossy().ends_with(".json.gz"));
    files.sort();
    assert_eq!(files.len(), 8);
    for path in files {
        let (got, want) = run(&path);
        assert_eq!(got, want, "{}", path.display());
    }
}
