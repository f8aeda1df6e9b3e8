//! State roots of simulated blocks (`--profile geth`) over an imported chain's persisted
//! trie: nothing changed is the base block's root; a pending overlay's changes are folded
//! in as the store would fold them.

use std::sync::Arc;

use alloy_primitives::{map::AddressSet, Address, U256};
use preconf_chain::changes::{AccountChange, AccountState, StateChanges};
use preconf_chain::exec::simulate::state_root::simulated_state_root;
use preconf_chain::state::{CodeCache, Overlay, StateView};
use preconf_chain::store::trie;
use revm::database::CacheDB;
use revm::primitives::hardfork::SpecId;
use revm::state::AccountInfo;

use super::support;

#[test]
fn simulated_roots_start_from_the_base_and_include_pending_and_written_changes() {
    let dir = support::TempDir::new("simroots");
    let (store, genesis) = support::open(&dir);
    support::import(&store, &genesis, support::file_blocks()).0.unwrap();
    let snapshot = store.snapshot().unwrap();
    let head = snapshot.header(54).unwrap().unwrap();
    let base =
        StateView { snapshot: snapshot.clone(), block: 54, overlay: None, codes: Arc::new(CodeCache::default()) };

    // Nothing changed: the head's own root. Loading accounts changes nothing either.
    let mut db = CacheDB::new(base.clone());
    assert_eq!(simulated_state_root(&base, &db, &AddressSet::default(), SpecId::OSAKA).unwrap(), head.state_root);
    let rich = Address::repeat_byte(0x42);
    let _ = revm::Database::basic(&mut db, rich).unwrap();
    assert_eq!(simulated_state_root(&base, &db, &AddressSet::default(), SpecId::OSAKA).unwrap(), head.state_root);

    // An account written outside the EVM (an override) counts once it is named.
    db.insert_account_info(rich, AccountInfo { balance: U256::from(7), ..Default::default() });
    let mut expected = StateChanges::default();
    let fields = AccountState { nonce: 0, balance: U256::from(7), code_hash: alloy_primitives::KECCAK256_EMPTY };
    expected.accounts.insert(rich, AccountChange { info: Some(fields), ..Default::default() });
    let written: AddressSet = [rich].into_iter().collect();
    let (want, _) = trie::state_root(&snapshot.trie().latest(), &expected).unwrap();
    assert_eq!(simulated_state_root(&base, &db, &written, SpecId::OSAKA).unwrap(), want);
    assert_ne!(want, head.state_root);

    // A pending base: its overlay's changes come first, the simulation's on top.
    let other = Address::repeat_byte(0x43);
    let mut layer = StateChanges::default();
    let pending_fields = AccountState { balance: U256::from(9), ..fields };
    layer.accounts.insert(other, AccountChange { info: Some(pending_fields), ..Default::default() });
    let pending = StateView { overlay: Some(Overlay::default().with(Arc::new(layer.clone()))), ..base.clone() };
    let db = CacheDB::new(pending.clone());
    let (want, _) = trie::state_root(&snapshot.trie().latest(), &layer).unwrap();
    assert_eq!(simulated_state_root(&pending, &db, &AddressSet::default(), SpecId::OSAKA).unwrap(), want);
}
