//! Base mainnet from its genesis (the superchain registry's file, `config: null`, with the
//! registry's fork schedule) through block 1, the Bedrock L1-info deposit: the genesis hash,
//! then the executed block's state root, receipts root and hash equal to Base's.

use std::collections::HashMap;
use std::io::Read;

use alloy_consensus::Header;
use alloy_primitives::{b256, hex, Address, Bytes, B256, U256};
use preconf_op::block::{execute, Attributes};
use preconf_op::config::OpConfig;
use preconf_op::genesis;
use preconf_trie::{state_root, NodeReader, Overlay, TrieDiff, TrieResult};
use revm::bytecode::Bytecode;
use revm::database_interface::DatabaseRef;
use revm::state::AccountInfo;

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../test/fixtures/op/base-mainnet-block-1");

/// Base's schedule, from the registry's TOML (test/fixtures/op/chain-configs/base-mainnet.toml):
/// Bedrock and Regolith from genesis, as op-geth sets them for registry chains.
fn base_config() -> OpConfig {
    let toml = std::fs::read_to_string(format!("{DIR}/../chain-configs/base-mainnet.toml")).unwrap();
    OpConfig::from_registry_toml(&toml).unwrap()
}

pub(crate) struct Empty;
impl NodeReader for Empty {
    fn account_node(&self, _: &alloy_trie::Nibbles) -> TrieResult<Option<Bytes>> {
        Ok(None)
    }
    fn storage_node(&self, _: &B256, _: &alloy_trie::Nibbles) -> TrieResult<Option<Bytes>> {
        Ok(None)
    }
}

/// The genesis state: its accounts for revm, its trie for the root.
pub(crate) struct GenesisState {
    pub(crate) accounts: HashMap<Address, genesis::GenesisAccount>,
    pub(crate) trie: TrieDiff,
}

impl DatabaseRef for GenesisState {
    type Error = std::convert::Infallible;
    fn basic_ref(&self, address: Address) -> Result<Option<AccountInfo>, Self::Error> {
        Ok(self.accounts.get(&address).map(|a| {
            let code = Bytecode::new_raw(a.code.clone());
            AccountInfo {
                balance: a.balance,
                nonce: a.nonce,
                code_hash: code.hash_slow(),
                code: Some(code),
                ..Default::default()
            }
        }))
    }
    fn code_by_hash_ref(&self, _: B256) -> Result<Bytecode, Self::Error> {
        unreachable!("accounts carry their code")
    }
    fn storage_ref(&self, address: Address, index: U256) -> Result<U256, Self::Error> {
        let key = B256::from(index);
        Ok(self
            .accounts
            .get(&address)
            .and_then(|a| a.storage.iter().find(|(k, _)| *k == key))
            .map_or(U256::ZERO, |(_, v)| *v))
    }
    fn block_hash_ref(&self, _: u64) -> Result<B256, Self::Error> {
        unreachable!("block 1 reads no block hash")
    }
}

impl NodeReader for GenesisState {
    fn account_node(&self, path: &alloy_trie::Nibbles) -> TrieResult<Option<Bytes>> {
        Overlay::new(&self.trie, Empty).account_node(path)
    }
    fn storage_node(&self, owner: &B256, path: &alloy_trie::Nibbles) -> TrieResult<Option<Bytes>> {
        Overlay::new(&self.trie, Empty).storage_node(owner, path)
    }
}

fn json(name: &str) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(format!("{DIR}/{name}")).unwrap()).unwrap()
}

#[test]
fn base_genesis_and_block_1() {
    let mut text = String::new();
    let file = std::fs::File::open(format!("{DIR}/genesis.json.gz")).unwrap();
    flate2::read::GzDecoder::new(file).read_to_string(&mut text).unwrap();
    let genesis_json: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert!(genesis_json["config"].is_null(), "the registry's genesis carries no config");

    let accounts = genesis::alloc(&genesis_json).unwrap();
    assert_eq!(accounts.len(), 2064);
    let (root, trie) = state_root(&Empty, &genesis::alloc_updates(&accounts)).unwrap();
    assert_eq!(root, b256!("b2afcb88cd1d0ab228f0415d99b0fb90a18e8515daf5eb31f55b5c4697e18328"));
    let genesis_header = genesis::header(&genesis_json, root).unwrap();
    assert_eq!(genesis_header.hash_slow(), b256!("f712aa9241cc24369b143cf6dce85f0902a9731e70d66818a3a5845b296c73dd"));

    let state = GenesisState { accounts: accounts.into_iter().map(|a| (a.address, a)).collect(), trie };
    let block = json("block.json");
    let expected: Header = serde_json::from_value(block["header"].clone()).unwrap();
    let attributes = Attributes {
        timestamp: expected.timestamp,
        prev_randao: expected.mix_hash,
        fee_recipient: expected.beneficiary,
        parent_beacon_block_root: None,
        gas_limit: expected.gas_limit,
        transactions: block["transactions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| hex::decode(t.as_str().unwrap()).unwrap().into())
            .collect(),
        eip1559_params: None,
        min_base_fee: None,
    };
    let executed = execute(&base_config(), &genesis_header, &attributes, &state).unwrap();
    let want = json("expected.json");
    let h = &executed.header;
    assert_eq!(h.gas_used, 64_013, "a Regolith deposit uses the gas it burns, not its limit");
    assert_eq!(h.base_fee_per_gas, Some(980_000_000));
    assert_eq!(h.state_root.to_string(), want["stateRoot"].as_str().unwrap());
    assert_eq!(h.receipts_root.to_string(), want["receiptsRoot"].as_str().unwrap());
    assert_eq!(h.transactions_root.to_string(), want["transactionsRoot"].as_str().unwrap());
    assert_eq!(h.hash_slow().to_string(), want["blockHash"].as_str().unwrap());
    assert_eq!(executed.txs[0].deposit_nonce, Some(0));
}
