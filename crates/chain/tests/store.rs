//! The store: archive reads return values as of each block; a reopened store continues.

use alloy_consensus::Header;
use alloy_primitives::{Address, B256, U256};
use preconf_chain::changes::{AccountChange, AccountState, StateChanges};
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

/// Commits a block as the builder does: the state root over the stored trie, then the block.
fn commit(store: &Store, number: u64, c: &StateChanges) -> B256 {
    let (state_root, trie) = store.state_root(c).unwrap();
    let header = Header { number, state_root, ..Default::default() };
    store
        .commit_block(BlockWrite {
            header: &header,
            hash: B256::with_last_byte(number as u8 + 1),
            body: &StoredBody::default(),
            receipts: &StoredReceipts::default(),
            tx_hashes: &[],
            changes: c,
            trie: &trie,
        })
        .unwrap();
    state_root
}

/// (address, balance, nonce, non-zero slots)
type Model = (Address, u64, u64, Vec<(u64, u64)>);

/// The state root computed from scratch (alloy-trie), independent of the stored trie.
fn root_of(accounts: &[Model]) -> B256 {
    let alloc: std::collections::BTreeMap<Address, alloy_genesis::GenesisAccount> = accounts
        .iter()
        .map(|(a, balance, nonce, slots)| {
            let storage = slots.iter().map(|(k, v)| (B256::from(U256::from(*k)), B256::from(U256::from(*v)))).collect();
            (
                *a,
                alloy_genesis::GenesisAccount::default()
                    .with_balance(U256::from(*balance))
                    .with_nonce(Some(*nonce))
                    .with_storage(Some(storage)),
            )
        })
        .collect();
    alloy_trie::root::state_root_ref_unhashed(&alloc)
}

const A: Address = Address::repeat_byte(0xa);
const B: Address = Address::repeat_byte(0xb);

/// Four blocks; returns each block's state root as committed.
fn write_history(store: &Store) -> Vec<B256> {
    vec![
        commit(store, 0, &changes(vec![(A, Some(account(1, 0)), vec![(7, 70)], false)])),
        commit(
            store,
            1,
            &changes(vec![(A, Some(account(5, 1)), vec![(8, 80)], false), (B, Some(account(9, 0)), vec![], false)]),
        ),
        commit(store, 2, &changes(vec![(B, Some(account(10, 0)), vec![], false)])),
        // Block 3 destroys A: its account and every slot are gone from then on.
        commit(store, 3, &changes(vec![(A, None, vec![], true)])),
    ]
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
    let roots = {
        let store = Store::open(&dir, 1 << 20).unwrap();
        write_history(&store)
    };
    // Each committed root equals the root computed from scratch over that block's state.
    assert_eq!(roots[0], root_of(&[(A, 1, 0, vec![(7, 70)])]));
    assert_eq!(roots[1], root_of(&[(A, 5, 1, vec![(7, 70), (8, 80)]), (B, 9, 0, vec![])]));
    assert_eq!(roots[2], root_of(&[(A, 5, 1, vec![(7, 70), (8, 80)]), (B, 10, 0, vec![])]));
    assert_eq!(roots[3], root_of(&[(B, 10, 0, vec![])]));
    let store = Store::open(&dir, 1 << 20).unwrap();
    assert_eq!(store.head().unwrap(), Some(3));
    let snap = store.snapshot().unwrap();
    assert_eq!(snap.account(&A, 1).unwrap(), Some(account(5, 1)));
    assert_eq!(snap.account(&B, 3).unwrap(), Some(account(10, 0)));
    // Reopened, the stored trie still holds block 3's root (read from disk, not rebuilt).
    assert_eq!(store.state_root(&StateChanges::default()).unwrap().0, roots[3]);
    // And it keeps appending.
    let root4 = commit(&store, 4, &changes(vec![(B, Some(account(11, 1)), vec![(1, 2)], false)]));
    assert_eq!(root4, root_of(&[(B, 11, 1, vec![(1, 2)])]));
    let snap = store.snapshot().unwrap();
    assert_eq!(snap.account(&B, 3).unwrap(), Some(account(10, 0)));
    assert_eq!(snap.account(&B, 4).unwrap(), Some(account(11, 1)));
    drop(store);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A sealed block still being committed: a snapshot carrying it as its tip answers every
/// read exactly as the store does once the commit has landed, at the tip and below it.
#[test]
fn an_in_flight_block_reads_as_it_will_once_committed() {
    use preconf_chain::store::InFlightBlock;
    use std::sync::Arc;

    let store = Store::in_memory().unwrap();
    write_history(&store);
    // Block 4 re-creates A with one slot (after block 3 destroyed it), updates B and adds code.
    let code = alloy_primitives::Bytes::from_static(&[0x60, 0x00, 0x60, 0x00, 0xf3]);
    let code_hash = alloy_primitives::keccak256(&code);
    let mut c = changes(vec![
        (A, Some(AccountState { code_hash, ..account(3, 0) }), vec![(9, 90)], true),
        (B, Some(account(11, 1)), vec![(1, 2)], false),
    ]);
    c.codes.insert(code_hash, code.clone());
    let (state_root, trie) = store.state_root(&c).unwrap();
    let header = Header { number: 4, state_root, gas_used: 21_000, ..Default::default() };
    let tx = B256::repeat_byte(0x77);
    let receipt = alloy_consensus::Receipt::<alloy_primitives::Log> {
        status: alloy_consensus::Eip658Value::Eip658(true),
        cumulative_gas_used: 21_000,
        logs: vec![],
    };
    let envelope = alloy_consensus::ReceiptEnvelope::Eip1559(receipt.with_bloom());
    let receipts =
        StoredReceipts { receipts: vec![alloy_eips::eip2718::Encodable2718::encoded_2718(&envelope).into()] };
    let tip = Arc::new(InFlightBlock::new(
        header.clone(),
        B256::with_last_byte(5),
        StoredBody::default(),
        receipts,
        vec![tx],
        Arc::new(c),
        trie,
    ));
    let before = store.snapshot().unwrap();
    let in_flight = store.snapshot_with_tip(tip.clone()).unwrap();
    assert_eq!(before.head(), Some(3));
    store.commit_block(tip.write()).unwrap();
    let after = store.snapshot().unwrap();

    for snap in [&in_flight, &after] {
        assert_eq!(snap.head(), Some(4));
        assert_eq!(snap.header(4).unwrap(), Some(header.clone()));
        assert_eq!(snap.block_hash(4).unwrap(), Some(B256::with_last_byte(5)));
        assert_eq!(snap.block_number(&B256::with_last_byte(5)).unwrap(), Some(4));
        assert_eq!(snap.tx_location(&tx).unwrap(), Some((4, 0)));
        assert_eq!(snap.receipts(4).unwrap().unwrap().receipts.len(), 1);
        assert_eq!(snap.code(&code_hash).unwrap(), Some(code.clone()));
        for block in [2, 3, 4, 5] {
            for who in [A, B] {
                assert_eq!(snap.account(&who, block).unwrap(), after.account(&who, block).unwrap());
            }
            for slot in [1u64, 7, 8, 9] {
                let (a, b) = (snap.storage(&A, &U256::from(slot), block), after.storage(&A, &U256::from(slot), block));
                assert_eq!(a.unwrap(), b.unwrap(), "slot {slot} at block {block}");
            }
        }
    }
    // Re-created after its destruction: the old slots stay cleared, the new one is set.
    assert_eq!(in_flight.storage(&A, &U256::from(7), 4).unwrap(), U256::ZERO);
    assert_eq!(in_flight.storage(&A, &U256::from(9), 4).unwrap(), U256::from(90));
    assert_eq!(in_flight.account(&B, 4).unwrap(), Some(account(11, 1)));
    // Below the tip, the in-flight block is invisible.
    assert_eq!(in_flight.account(&B, 3).unwrap(), Some(account(10, 0)));
    assert_eq!(in_flight.storage(&A, &U256::from(9), 3).unwrap(), U256::ZERO);
    // The snapshot taken before the hand-over knows nothing of block 4.
    assert_eq!(before.header(4).unwrap(), None);
    assert_eq!(before.tx_location(&tx).unwrap(), None);
}

/// `evm_revert`'s store: a savepoint, then blocks, then back; the state, the trie and the
/// whole-state walk are as they were, and the store goes on from there.
#[test]
fn a_restored_savepoint_takes_back_every_later_block() {
    let store = Store::in_memory().unwrap();
    let roots = write_history(&store);
    let back_to_3 = store.savepoint().unwrap();
    let root4 = commit(&store, 4, &changes(vec![(B, Some(account(11, 1)), vec![(1, 2)], false)]));
    commit(&store, 5, &changes(vec![(A, Some(account(1, 0)), vec![], false)]));
    assert_eq!(store.head().unwrap(), Some(5));

    store.restore(&back_to_3).unwrap();
    assert_eq!(store.head().unwrap(), Some(3));
    let snap = store.snapshot().unwrap();
    assert_eq!(snap.header(4).unwrap(), None);
    assert_eq!(snap.account(&B, 5).unwrap(), Some(account(10, 0)), "the history after the savepoint is gone");
    assert_eq!(store.state_root(&StateChanges::default()).unwrap().0, roots[3], "the trie went back too");
    let mut walked = Vec::new();
    snap.each_account(3, |a, s| walked.push((a, s))).unwrap();
    assert_eq!(walked, vec![(B, account(10, 0))]);
    // The same block again gets the same root: nothing of the first block 4 is left.
    assert_eq!(commit(&store, 4, &changes(vec![(B, Some(account(11, 1)), vec![(1, 2)], false)])), root4);
    let mut slots = Vec::new();
    store.snapshot().unwrap().each_slot(4, |a, k, v| slots.push((a, k, v))).unwrap();
    assert_eq!(slots, vec![(B, U256::from(1), U256::from(2))]);

    store.wipe().unwrap();
    assert_eq!(store.head().unwrap(), None);
}

/// An unsafe reorg's rewind (the Engine API): the blocks after 1 go (block 3 wiped A's
/// storage, block 2 changed B), the store reads as of block 1 again at its head, the trie
/// holds block 1's root, and a different block 2 goes on top of it.
#[test]
fn unwinding_takes_the_newest_blocks_back_out() {
    let store = Store::in_memory().unwrap();
    store.keep_change_sets(true);
    let roots = write_history(&store);
    store.unwind_to(1).unwrap();
    assert_eq!(store.head().unwrap(), Some(1));
    let snap = store.snapshot().unwrap();
    assert_eq!(snap.block_hash(2).unwrap(), None);
    assert_eq!(snap.block_number(&B256::with_last_byte(3)).unwrap(), None, "block 2's hash is gone");
    assert_eq!(snap.header(3).unwrap(), None);
    // Reads at (or past) the head see block 1's state: the wipe and block 2 are undone.
    assert_eq!(snap.account(&A, 3).unwrap(), Some(account(5, 1)));
    assert_eq!(snap.account(&B, 3).unwrap(), Some(account(9, 0)));
    assert_eq!(snap.storage(&A, &U256::from(7), 3).unwrap(), U256::from(70));
    assert_eq!(snap.storage(&A, &U256::from(8), 3).unwrap(), U256::from(80));
    assert_eq!(store.state_root(&StateChanges::default()).unwrap().0, roots[1]);
    assert!(store.change_set(2).unwrap().is_none());
    // Another block 2 on block 1: its root is the one computed from scratch.
    let root2 = commit(&store, 2, &changes(vec![(B, Some(account(11, 1)), vec![(1, 2)], false)]));
    assert_eq!(root2, root_of(&[(A, 5, 1, vec![(7, 70), (8, 80)]), (B, 11, 1, vec![(1, 2)])]));
    assert_eq!(store.snapshot().unwrap().account(&B, 2).unwrap(), Some(account(11, 1)));
}
