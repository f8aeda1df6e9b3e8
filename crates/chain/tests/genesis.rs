//! Genesis against known references: the execution-apis test chain (geth's recorded
//! genesis block) and the well-known dev accounts.

use preconf_chain::{genesis, node::Node, BlockId, ChainConfig};

fn open(genesis_json: Option<String>) -> Node {
    Node::open(ChainConfig { genesis: genesis_json, ..Default::default() }).expect("node opens")
}

#[test]
fn hive_genesis_matches_geth_state_root_and_hash() {
    // Recorded by go-ethereum: tests/eth_getBlockByNumber/get-genesis.io of execution-apis.
    let node = open(Some(include_str!("fixtures/hive-genesis.json").to_string()));
    let view = node.chain().view();
    let header = &view.head.header;
    assert_eq!(header.state_root.to_string(), "0xdc43f460541a253c0f64b6943ef83fa3bd601699a255622f088d46f7fde359fc");
    assert_eq!(view.head_hash().to_string(), "0x44fd89d504659cd58f48f4796b77a7e7012cf296a2409afa2f6c3cb99b5b3d99");
    assert_eq!(node.chain().chain_id(), 3503995874084926);
    let block = node.api().blocks.by_id(BlockId::Number(0)).unwrap().unwrap();
    assert_eq!(block.rlp_size(), 0x205);
    assert_eq!(block.header.difficulty, alloy_primitives::U256::from(0x20000));
    assert_eq!(block.header.extra_data.to_string(), "0x68697665636861696e");
}

#[test]
fn dev_chain_funds_the_well_known_accounts() {
    let accounts = genesis::dev_accounts(10);
    assert_eq!(accounts[0].address.to_checksum(None), "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266");
    assert_eq!(
        accounts[0].private_key.to_string(),
        "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80"
    );
    assert_eq!(accounts[9].address.to_checksum(None), "0xa0Ee7A142d267C1f36714E4a8F75612F20a79720");
    let node = open(None);
    let ten_thousand_eth = alloy_primitives::U256::from(10_000u64)
        * alloy_primitives::U256::from(10u64).pow(alloy_primitives::U256::from(18u64));
    for a in &accounts {
        assert_eq!(node.api().state.balance(a.address, BlockId::Latest).unwrap(), ten_thousand_eth);
    }
    assert_eq!(node.chain().chain_id(), 31337);
    let view = node.chain().view();
    let header = &view.head.header;
    assert_eq!(header.gas_limit, 30_000_000);
    assert_eq!(header.base_fee_per_gas, Some(1_000_000_000));
    assert!(header.requests_hash.is_some(), "Prague is active from genesis");
    // The system contracts Cancun and Prague blocks call are deployed.
    for address in [
        alloy_eips::eip4788::BEACON_ROOTS_ADDRESS,
        alloy_eips::eip2935::HISTORY_STORAGE_ADDRESS,
        alloy_eips::eip7002::WITHDRAWAL_REQUEST_PREDEPLOY_ADDRESS,
        alloy_eips::eip7251::CONSOLIDATION_REQUEST_PREDEPLOY_ADDRESS,
    ] {
        assert!(!node.api().state.code(address, BlockId::Latest).unwrap().is_empty(), "{address}");
    }
}
