//! Importing an OP chain's blocks: Base mainnet's block 1 (its Bedrock-format L1-info
//! deposit) on Base's genesis from the superchain registry (`config: null`) and the
//! registry's TOML, through `import_chain` into a real store, as `preconf-node import
//! --genesis genesis.json --rollup-config base-mainnet.toml` runs it. Fixtures:
//! test/fixtures/op/base-mainnet-block-1 (Base's RPC) and chain-configs (the registry).

use std::io::Read;
use std::path::PathBuf;
use std::time::Duration;

use alloy_consensus::{Block, BlockBody, Header};
use alloy_primitives::{hex, B256};
use alloy_rlp::Encodable;
use preconf_chain::consensus::Field;
use preconf_chain::import::{import_chain, ImportConfig, ImportError, ImportGenesis};
use preconf_chain::store::Store;
use preconf_op::OpTx;

use super::support::TempDir;

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../test/fixtures/op/base-mainnet-block-1");

fn json(name: &str) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(format!("{DIR}/{name}")).unwrap()).unwrap()
}

fn hash(v: &serde_json::Value) -> B256 {
    v.as_str().unwrap().parse().unwrap()
}

/// Base's genesis (gunzipped into `dir`) and block 1 as a blocks file, the header first
/// passed through `tamper`.
fn base_files(dir: &TempDir, tamper: impl FnOnce(&mut Header)) -> (PathBuf, PathBuf) {
    let mut text = String::new();
    let gz = std::fs::File::open(format!("{DIR}/genesis.json.gz")).unwrap();
    flate2::read::GzDecoder::new(gz).read_to_string(&mut text).unwrap();
    let genesis = dir.0.join("genesis.json");
    std::fs::write(&genesis, text).unwrap();

    let fixture = json("block.json");
    let mut header: Header = serde_json::from_value(fixture["header"].clone()).unwrap();
    tamper(&mut header);
    let transactions = fixture["transactions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| OpTx::decode_2718(&hex::decode(t.as_str().unwrap()).unwrap()).unwrap())
        .collect();
    let block = Block { header, body: BlockBody { transactions, ommers: vec![], withdrawals: None } };
    let mut rlp = Vec::new();
    block.encode(&mut rlp);
    let blocks = dir.0.join("blocks.rlp");
    std::fs::write(&blocks, rlp).unwrap();
    (genesis, blocks)
}

fn config(dir: &TempDir, genesis: PathBuf, blocks: PathBuf) -> ImportConfig {
    let toml = PathBuf::from(format!("{DIR}/../chain-configs/base-mainnet.toml"));
    ImportConfig {
        datadir: dir.0.join("data"),
        genesis: ImportGenesis::File(genesis, Some(toml)),
        blocks_file: blocks,
        safe: None,
        finalized: None,
        db_cache_bytes: 64 << 20,
        progress_every: Duration::from_secs(1),
    }
}

#[test]
fn base_block_1_imports_with_base_hashes() {
    let dir = TempDir::new("op-base-1");
    let (genesis, blocks) = base_files(&dir, |_| {});
    let summary = import_chain(&config(&dir, genesis, blocks), &mut |_| {}).expect("Base block 1 imports");
    let want = json("expected.json");
    assert_eq!(summary.genesis_hash, hash(&want["parentHash"]), "Base's genesis hash");
    assert_eq!(summary.head_hash, hash(&want["blockHash"]));
    assert_eq!(summary.progress.imported, 1);

    let store = Store::open(&dir.0.join("data"), 16 << 20).unwrap();
    let snapshot = store.snapshot().unwrap();
    let header = snapshot.header(1).unwrap().unwrap();
    assert_eq!(header.state_root, hash(&want["stateRoot"]));
    assert_eq!(header.receipts_root, hash(&want["receiptsRoot"]));
    // The deposit and its receipt as stored: before Canyon an Ethereum receipt typed 0x7E
    // (no deposit nonce), the gas the deposit burnt.
    let body = snapshot.body(1).unwrap().unwrap();
    assert_eq!(body.txs.len(), 1);
    assert_eq!(body.txs[0].raw[0], 0x7E);
    let receipts = snapshot.receipts(1).unwrap().unwrap();
    let receipt = preconf_op::receipt::decode_2718(&receipts.receipts[0]).unwrap();
    assert_eq!((receipt.ty, receipt.receipt.cumulative_gas_used), (0x7E, 64_013));
    assert_eq!(receipt.deposit_nonce, None, "no deposit nonce before Canyon");
}

#[test]
fn base_block_1_with_another_state_root_is_refused() {
    let dir = TempDir::new("op-base-1-bad");
    let (genesis, blocks) = base_files(&dir, |h| h.state_root = B256::repeat_byte(1));
    let err = import_chain(&config(&dir, genesis, blocks), &mut |_| {}).expect_err("refused");
    assert!(matches!(err, ImportError::Consensus(ref e) if e.field == Field::StateRoot), "{err}");
    assert_eq!(err.block_number(), Some(1));
}
