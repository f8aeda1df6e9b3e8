//! Genesis: the embedded dev chain, geth-style genesis files, and the genesis header.

use std::collections::BTreeMap;

use alloy_consensus::{constants::EMPTY_OMMER_ROOT_HASH, Header, EMPTY_ROOT_HASH};
use alloy_eips::{eip2935, eip4788, eip7002, eip7251};
use alloy_genesis::{ChainConfig, Genesis, GenesisAccount};
use alloy_primitives::{Address, Bytes, B256, B64, U256};
use alloy_signer_local::{coins_bip39::English, MnemonicBuilder};

use crate::spec::ChainSpec;

pub mod seed;
pub mod stream;

/// The mnemonic anvil and Hardhat fund; users' scripts rely on its keys.
pub const DEV_MNEMONIC: &str = "test test test test test test test test test test test junk";
pub const DEV_CHAIN_ID: u64 = 31337;
pub const DEV_GAS_LIMIT: u64 = 30_000_000;
pub const DEV_BASE_FEE: u64 = 1_000_000_000;
pub const DEV_ACCOUNT_COUNT: u32 = 10;

/// What each dev account holds at the start (anvil's 10,000 ether), on a fork too.
pub const DEV_BALANCE: U256 = U256::from_limbs([0x19e0_c9ba_b240_0000, 0x21e, 0, 0]);
/// geth's base fee for a London genesis that does not name one.
pub const INITIAL_BASE_FEE: u64 = 1_000_000_000;
/// geth's gas limit for a genesis that does not name one.
pub const GENESIS_GAS_LIMIT: u64 = 4_712_388;

/// A funded development account: address and private key.
#[derive(Clone, Debug)]
pub struct DevAccount {
    pub address: Address,
    pub private_key: B256,
}

/// The first `count` accounts of the dev mnemonic, path m/44'/60'/0'/0/i.
pub fn dev_accounts(count: u32) -> Vec<DevAccount> {
    (0..count)
        .map(|i| {
            let signer = MnemonicBuilder::<English>::default()
                .phrase(DEV_MNEMONIC)
                .index(i)
                .and_then(|b| b.build())
                .expect("the dev mnemonic is valid");
            DevAccount { address: signer.address(), private_key: signer.to_bytes() }
        })
        .collect()
}

/// The embedded default chain: London..Prague from block 0, ten funded accounts and
/// the system contracts Cancun and Prague blocks call (as geth's dev mode deploys them).
pub fn dev_genesis() -> Genesis {
    let mut alloc = BTreeMap::new();
    for account in dev_accounts(DEV_ACCOUNT_COUNT) {
        alloc.insert(account.address, GenesisAccount::default().with_balance(DEV_BALANCE));
    }
    let system = [
        (eip4788::BEACON_ROOTS_ADDRESS, &eip4788::BEACON_ROOTS_CODE),
        (eip2935::HISTORY_STORAGE_ADDRESS, &eip2935::HISTORY_STORAGE_CODE),
        (eip7002::WITHDRAWAL_REQUEST_PREDEPLOY_ADDRESS, &eip7002::WITHDRAWAL_REQUEST_PREDEPLOY_CODE),
        (eip7251::CONSOLIDATION_REQUEST_PREDEPLOY_ADDRESS, &eip7251::CONSOLIDATION_REQUEST_PREDEPLOY_CODE),
    ];
    for (address, code) in system {
        alloc.insert(address, GenesisAccount::default().with_nonce(Some(1)).with_code(Some(code.clone())));
    }
    let config = ChainConfig {
        chain_id: DEV_CHAIN_ID,
        homestead_block: Some(0),
        eip150_block: Some(0),
        eip155_block: Some(0),
        eip158_block: Some(0),
        byzantium_block: Some(0),
        constantinople_block: Some(0),
        petersburg_block: Some(0),
        istanbul_block: Some(0),
        muir_glacier_block: Some(0),
        berlin_block: Some(0),
        london_block: Some(0),
        arrow_glacier_block: Some(0),
        gray_glacier_block: Some(0),
        shanghai_time: Some(0),
        cancun_time: Some(0),
        prague_time: Some(0),
        terminal_total_difficulty: Some(U256::ZERO),
        terminal_total_difficulty_passed: true,
        ..Default::default()
    };
    Genesis {
        config,
        nonce: 0,
        timestamp: 0,
        extra_data: Bytes::new(),
        gas_limit: DEV_GAS_LIMIT,
        difficulty: U256::ZERO,
        mix_hash: B256::ZERO,
        coinbase: Address::ZERO,
        alloc,
        base_fee_per_gas: Some(DEV_BASE_FEE as u128),
        ..Default::default()
    }
}

/// The genesis header, with the fields geth sets for the forks active at block 0.
pub fn genesis_header(spec: &ChainSpec, state_root: B256) -> Header {
    let g = &spec.genesis;
    let number = g.number.unwrap_or(0);
    let mut header = Header {
        parent_hash: g.parent_hash.unwrap_or_default(),
        ommers_hash: EMPTY_OMMER_ROOT_HASH,
        beneficiary: g.coinbase,
        state_root,
        transactions_root: EMPTY_ROOT_HASH,
        receipts_root: EMPTY_ROOT_HASH,
        logs_bloom: Default::default(),
        difficulty: g.difficulty,
        number,
        gas_limit: if g.gas_limit == 0 { GENESIS_GAS_LIMIT } else { g.gas_limit },
        gas_used: 0,
        timestamp: g.timestamp,
        extra_data: g.extra_data.clone(),
        mix_hash: g.mix_hash,
        nonce: B64::from(g.nonce),
        ..Default::default()
    };
    if spec.is_london(number) {
        header.base_fee_per_gas = Some(g.base_fee_per_gas.map(|f| f as u64).unwrap_or(INITIAL_BASE_FEE));
    }
    spec.set_fork_fields(&mut header, g.excess_blob_gas.unwrap_or(0), B256::ZERO);
    if header.blob_gas_used.is_some() {
        header.blob_gas_used = Some(g.blob_gas_used.unwrap_or(0));
    }
    header
}
