//! Known roots, and genesis imports streamed in chunks through the ordinary update path.

use crate::common;

use alloy_primitives::{b256, keccak256, B256, KECCAK256_EMPTY, U256};
use common::layout::check_layout;
use common::model::{random_fields, Model};
use common::{commit_block, init_tables, memory_db, Rng, TempDb};
use preconf_trie::{current_root, state_root, AccountFields, AccountUpdate, TrieWriter, EMPTY_ROOT_HASH};
use redb::Database;

/// Imports updates (sorted by hashed address) in chunks, all as block 0, each chunk
/// computed against the write transaction that already holds the earlier chunks.
fn import_in_chunks(db: &Database, updates: &[AccountUpdate], chunk: usize) -> B256 {
    let txn = db.begin_write().unwrap();
    let mut root = EMPTY_ROOT_HASH;
    {
        let mut writer = TrieWriter::open(&txn).unwrap();
        for part in updates.chunks(chunk) {
            let (r, diff) = state_root(&writer, part).unwrap();
            writer.write_diff(0, &diff).unwrap();
            root = r;
        }
        assert_eq!(current_root(&writer).unwrap(), root);
    }
    txn.commit().unwrap();
    root
}

#[test]
fn empty_root_is_the_known_constant() {
    assert_eq!(EMPTY_ROOT_HASH, b256!("56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421"));
    let db = memory_db();
    init_tables(&db);
    let (root, diff) = commit_block(&db, 0, &[]);
    assert_eq!(root, EMPTY_ROOT_HASH);
    assert!(diff.is_empty());
}

#[test]
fn hive_genesis_root_matches_geth_and_hash_builder() {
    let genesis: alloy_genesis::Genesis = serde_json::from_str(include_str!("fixtures/hive-genesis.json")).unwrap();
    let mut updates: Vec<AccountUpdate> = genesis
        .alloc
        .iter()
        .map(|(address, account)| AccountUpdate {
            hashed_address: keccak256(address),
            account: Some(AccountFields {
                nonce: account.nonce.unwrap_or(0),
                balance: account.balance,
                code_hash: account.code.as_ref().map(keccak256).unwrap_or(KECCAK256_EMPTY),
            }),
            storage_wiped: false,
            storage: account
                .storage
                .iter()
                .flatten()
                .map(|(slot, value)| (keccak256(slot), U256::from_be_bytes(value.0)))
                .collect(),
        })
        .collect();
    updates.sort_by_key(|u| u.hashed_address);
    assert!(updates.iter().any(|u| !u.storage.is_empty()), "fixture has storage");
    let mut model = Model::default();
    model.apply(&updates);
    // Recorded by go-ethereum for the execution-apis test chain (get-genesis.io).
    let geth = b256!("dc43f460541a253c0f64b6943ef83fa3bd601699a255622f088d46f7fde359fc");
    assert_eq!(model.root(), geth, "HashBuilder over all leaves");
    for chunk in [1, 3, updates.len()] {
        let db = memory_db();
        assert_eq!(import_in_chunks(&db, &updates, chunk), geth, "chunks of {chunk}");
        check_layout(&db, geth);
    }
}

#[test]
fn streamed_genesis_with_a_large_contract_matches_hash_builder() {
    let temp = TempDb::new("genesis");
    let mut rng = Rng::new(77);
    let mut updates: Vec<AccountUpdate> = (0..20_000)
        .map(|_| AccountUpdate {
            hashed_address: rng.b256(),
            account: Some(random_fields(&mut rng)),
            storage_wiped: false,
            storage: vec![],
        })
        .collect();
    updates.sort_by_key(|u| u.hashed_address);
    // A contract with 30,000 slots arrives in three updates of sorted slots, one per call.
    let contract = updates[12_345].hashed_address;
    let fields = updates[12_345].account;
    let mut slots: Vec<(B256, U256)> = (0..30_000).map(|_| (rng.b256(), rng.value())).collect();
    slots.sort();
    let mut model = Model::default();
    model.apply(&updates);
    let root = import_in_chunks(&temp.db, &updates, 2_500);
    assert_eq!(root, model.root());
    let mut root = root;
    for (i, part) in slots.chunks(10_000).enumerate() {
        let update =
            AccountUpdate { hashed_address: contract, account: fields, storage_wiped: false, storage: part.to_vec() };
        root = import_in_chunks(&temp.db, std::slice::from_ref(&update), 1);
        model.apply(&[update]);
        assert_eq!(root, model.root(), "after storage chunk {i}");
    }
    let layout = check_layout(&temp.db, root);
    assert!(layout.account_nodes > 20_000 && layout.storage_nodes > 30_000, "{layout:?}");

    // A block on top, then a wipe of the large storage: every one of its nodes goes.
    let block: Vec<AccountUpdate> = (0..200)
        .map(|_| AccountUpdate {
            hashed_address: rng.b256(),
            account: Some(random_fields(&mut rng)),
            storage_wiped: false,
            storage: vec![],
        })
        .collect();
    let (root, diff) = commit_block(&temp.db, 1, &block);
    model.apply(&block);
    assert_eq!(root, model.root());
    assert!(diff.accounts.len() < 200 * 8, "a block of 200 accounts rewrote {} nodes", diff.accounts.len());
    let wipe = AccountUpdate {
        hashed_address: contract,
        account: fields,
        storage_wiped: true,
        storage: vec![(rng.b256(), U256::from(1))],
    };
    let (root, diff) = commit_block(&temp.db, 2, std::slice::from_ref(&wipe));
    model.apply(&[wipe]);
    assert_eq!(root, model.root());
    assert!(diff.storage[&contract].len() >= layout.storage_nodes);
    let after = check_layout(&temp.db, root);
    assert_eq!(after.storage_nodes, 1);
}
