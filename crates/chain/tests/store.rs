//! The store: archive reads return values as of each block; a reopened store continues.

use alloy_consensus::Header;
use alloy_primitives::{Address, B256, U256};
use preconf_chain::state::changes::{AccountChange, AccountState, StateChanges};
use preconf_chain::store::{BlockWrite, Store, StoredBody, StoredReceipts};

fn account(balance: u64, nonce: u64) -> AccountState {
    AccountState { nonce, balance: U256::from(balance), code_hash: alloy_primitives::KECCAK256_EMPTY }
}

/// (address, new state or deleted, slots written, storage wiped)
type Entry = (Address, Option<AccountState>, Vec<(u64, u64)>, bool);

fn changes(entries: Vec<Entry>) -> StateChanges {
    let mut c = StateChanges::default();
    for (address, info, slots, wiped) in entries {
        let mut change = AccountChange { info, storage_wiped: wiped, ..Default::default() };
        for (k, v) in slots {
            change.storage.insert(U256::from(k), U256::from(v));
        }
        c.accounts.insert(address, change);
    }
    c
}

fn commit(store: &Store, number: u64, c: &StateChanges) {
    let header = Header { number, ..Default::default() };
    store
        .commit_block(BlockWrite {
            header: &header,
            hash: B256::with_last_byte(number as u8 + 1),
            body: &StoredBody::default(),
            receipts: &StoredReceipts::default(),
            tx_hashes: &[],
            changes: c,
        })
        .unwrap();
}

const A: Address = Address::repeat_byte(0xa);
const B: Address = Address::repeat_byte(0xb);

fn write_history(store: &Store) {
    commit(store, 0, &changes(vec![(A, Some(account(1, 0)), vec![(7, 70)], false)]));
    commit(
        store,
        1,
        &changes(vec![(A, Some(account(5, 1)), vec![(8, 80)], false), (B, Some(account(9, 0)), vec![], false)]),
    );
    commit(store, 2, &changes(vec![(B, Some(account(10, 0)), vec![], false)]));
    // Block 3 destroys A: its account and every slot are gone from then on.
    commit(store, 3, &changes(vec![(A, None, vec![], true)]));
}

#[test]
fn historical_reads_return_the_value_as_of_each_block() {
    let store = Store::in_memory().unwrap();
    write_history(&store);
    let snap = store.snapshot().unwrap();
    assert_eq!(snap.head(), Some(3));
    assert_eq!(snap.account(&A, 0).unwrap(), Some(account(1, 0)));
    assert_eq!(snap.account(&A, 1).unwrap(), Some(account(5, 1)));
    assert_eq!(snap.account(&A, 2).unwrap(), Some(account(5, 1)), "unchanged in block 2");
    assert_eq!(snap.account(&A, 3).unwrap(), None, "destroyed in block 3");
    assert_eq!(snap.account(&B, 0).unwrap(), None, "created in block 1");
    assert_eq!(snap.account(&B, 2).unwrap(), Some(account(10, 0)));
    assert_eq!(snap.storage(&A, &U256::from(7), 0).unwrap(), U256::from(70));
    assert_eq!(snap.storage(&A, &U256::from(8), 0).unwrap(), U256::ZERO);
    assert_eq!(snap.storage(&A, &U256::from(8), 2).unwrap(), U256::from(80));
    assert_eq!(snap.storage(&A, &U256::from(7), 3).unwrap(), U256::ZERO, "wiped with the account");
    assert_eq!(snap.storage(&A, &U256::from(8), 3).unwrap(), U256::ZERO);
    assert_eq!(snap.block_hash(2).unwrap(), Some(B256::with_last_byte(3)));
    assert_eq!(snap.block_number(&B256::with_last_byte(3)).unwrap(), Some(2));
}

#[test]
fn a_reopened_store_continues_where_it_stopped() {
    let dir = std::env::temp_dir().join(format!("preconf-store-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let root_before = {
        let store = Store::open(&dir).unwrap();
        write_history(&store);
        store.load_state_trie().unwrap().root()
    };
    let store = Store::open(&dir).unwrap();
    assert_eq!(store.head().unwrap(), Some(3));
    let snap = store.snapshot().unwrap();
    assert_eq!(snap.account(&A, 1).unwrap(), Some(account(5, 1)));
    assert_eq!(snap.account(&B, 3).unwrap(), Some(account(10, 0)));
    assert_eq!(store.load_state_trie().unwrap().root(), root_before);
    // And it keeps appending.
    commit(&store, 4, &changes(vec![(B, Some(account(11, 1)), vec![(1, 2)], false)]));
    let snap = store.snapshot().unwrap();
    assert_eq!(snap.account(&B, 3).unwrap(), Some(account(10, 0)));
    assert_eq!(snap.account(&B, 4).unwrap(), Some(account(11, 1)));
    drop(store);
    std::fs::remove_dir_all(&dir).unwrap();
}
