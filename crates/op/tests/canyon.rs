//! Canyon's create2 deployer: on a chain whose Canyon starts after genesis, the first block
//! at or after `canyonTime` sets the deployer's code (keeping what the account held), and
//! no other block does.

use alloy_primitives::{keccak256, U256};
use preconf_op::block::OpBlockBuilder;
use preconf_op::canyon::{create2_deployer_code, CREATE2_DEPLOYER, CREATE2_DEPLOYER_CODE_HASH};
use preconf_op::dev::dev_config;
use preconf_op::genesis::{alloc, alloc_updates, GenesisAccount};
use preconf_op::{OpConfig, OpSpecId};
use preconf_trie::state_root;

use crate::base_block_1::{Empty, GenesisState};
use crate::support::{attributes, dev_genesis};

/// Regolith from genesis, Canyon at 10, nothing later.
fn canyon_at_10() -> OpConfig {
    let mut config = dev_config(901);
    let f = &mut config.forks;
    f.canyon_time = Some(10);
    (f.delta_time, f.ecotone_time, f.fjord_time, f.granite_time, f.holocene_time) = (None, None, None, None, None);
    f.isthmus_time = None;
    config
}

/// The deployer's account after the block on `parent_time` → `time`, and the block's state root.
fn run(
    config: &OpConfig,
    state: &GenesisState,
    parent: &alloy_consensus::Header,
    parent_time: u64,
    time: u64,
) -> (Option<revm::state::AccountInfo>, alloy_primitives::B256) {
    let parent = alloy_consensus::Header { timestamp: parent_time, ..parent.clone() };
    let mut block = OpBlockBuilder::open(config, &parent, &attributes(time), state).unwrap();
    let account = block.account(CREATE2_DEPLOYER).unwrap();
    (account, block.finish().unwrap().header.state_root)
}

#[test]
fn first_canyon_block_sets_the_create2_deployer() {
    // The address holds 5 wei before Canyon (as an address anyone can send to may).
    let (genesis, state, parent) =
        dev_genesis(serde_json::json!({ CREATE2_DEPLOYER.to_string(): { "balance": "0x5" } }));
    let config = canyon_at_10();
    assert_eq!((config.spec_at(8), config.spec_at(10)), (OpSpecId::REGOLITH, OpSpecId::CANYON));

    let (account, root) = run(&config, &state, &parent, 8, 10);
    let account = account.expect("the deployer exists");
    assert_eq!(account.code_hash, CREATE2_DEPLOYER_CODE_HASH);
    assert_eq!(keccak256(account.code.unwrap().original_bytes()), CREATE2_DEPLOYER_CODE_HASH);
    assert_eq!(account.balance, U256::from(5), "the balance stays");
    // The block changed nothing else: its state is the genesis with the deployer's code.
    let mut accounts: Vec<GenesisAccount> = alloc(&genesis).unwrap();
    let deployer = accounts.iter_mut().find(|a| a.address == CREATE2_DEPLOYER).unwrap();
    deployer.code = create2_deployer_code();
    assert_eq!(root, state_root(&Empty, &alloc_updates(&accounts)).unwrap().0);

    // The first block at or after the time when none falls on it exactly.
    assert_eq!(run(&config, &state, &parent, 9, 11).0.unwrap().code_hash, CREATE2_DEPLOYER_CODE_HASH);
    // Not before Canyon, not on a later Canyon block, not where Canyon is at genesis.
    let empty = revm::primitives::KECCAK_EMPTY;
    assert_eq!(run(&config, &state, &parent, 6, 8).0.unwrap().code_hash, empty);
    assert_eq!(run(&config, &state, &parent, 10, 12).0.unwrap().code_hash, empty);
    assert_eq!(run(&dev_config(901), &state, &parent, 0, 2).0.unwrap().code_hash, empty);
}
