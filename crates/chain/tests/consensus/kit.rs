//! Loading the rpc-compat chain: genesis, decoded blocks, the genesis header.

use std::path::PathBuf;

use alloy_consensus::{Block, Header, TxEnvelope};
use alloy_primitives::B256;
use preconf_chain::consensus::BlockReader;
use preconf_chain::genesis::genesis_header;
use preconf_chain::spec::ChainSpec;

/// `RPC_COMPAT_DIR`, or the copy committed in the repository (test/fixtures/rpc-compat), so
/// that a bare clone runs these tests with nothing beside it.
pub fn kit_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("RPC_COMPAT_DIR") {
        return PathBuf::from(dir);
    }
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../test/fixtures/rpc-compat");
    assert!(
        dir.join("chain/chain.rlp").is_file(),
        "rpc-compat kit not found at {} (set RPC_COMPAT_DIR to point elsewhere)",
        dir.display()
    );
    dir
}

pub fn chain_file() -> PathBuf {
    kit_dir().join("chain/chain.rlp")
}

pub fn spec() -> ChainSpec {
    let json = std::fs::read_to_string(kit_dir().join("chain/genesis.json")).expect("genesis.json is readable");
    ChainSpec::new(serde_json::from_str::<alloy_genesis::Genesis>(&json).expect("genesis.json parses"))
}

pub fn blocks() -> Vec<Block<TxEnvelope>> {
    BlockReader::open(&chain_file()).expect("chain.rlp opens").map(|b| b.expect("chain.rlp decodes").block).collect()
}

/// Block 0, rebuilt from the genesis file (state root from its alloc).
pub fn genesis(spec: &ChainSpec) -> (Header, B256) {
    let root = alloy_trie::root::state_root_ref_unhashed(&spec.genesis.alloc);
    let header = genesis_header(spec, root);
    let hash = header.hash_slow();
    (header, hash)
}

pub fn txinfo() -> serde_json::Value {
    let text = std::fs::read_to_string(kit_dir().join("chain/txinfo.json")).expect("txinfo.json is readable");
    serde_json::from_str(&text).expect("txinfo.json parses")
}
