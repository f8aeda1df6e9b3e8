//! Pending state: roots and proofs over a diff that is not written (`Overlay`), diffs
//! stacked on diffs, and the errors a caller can meet.

use crate::common;

use alloy_primitives::{B256, U256};
use alloy_trie::{proof::verify_proof, Nibbles};
use common::model::{check_proofs, BlockGen, Model};
use common::{commit_block, init_tables, memory_db, prune_to, Rng};
use preconf_trie::{
    account_proof, current_root, state_root, AccountFields, AccountUpdate, Overlay, TrieError, TrieSnapshot,
    EMPTY_ROOT_HASH,
};
use redb::ReadableDatabase;

#[test]
fn proofs_over_pending_state_verify_against_the_pending_root() {
    let db = memory_db();
    init_tables(&db);
    let mut gen = BlockGen::new(42);
    let mut model = Model::default();
    for block in 0..30 {
        let updates = gen.next_block(&model, block);
        commit_block(&db, block, &updates);
        model.apply(&updates);
    }
    let head_root = model.root();
    let txn = db.begin_read().unwrap();
    let snapshot = TrieSnapshot::open(&txn).unwrap();
    let head = snapshot.latest();

    // Two pre-confirmation steps, each computed on top of the previous one's diff.
    let first = gen.next_block(&model, 30);
    let (root1, mut diff) = state_root(&head, &first).unwrap();
    let mut pending = model.clone();
    pending.apply(&first);
    assert_eq!(root1, pending.root());
    let overlay = Overlay::new(&diff, head);
    assert_eq!(current_root(&overlay).unwrap(), root1);
    check_proofs(&overlay, &pending, root1, &mut gen.rng, 6);

    let second = gen.next_block(&pending, 31);
    let (root2, diff2) = state_root(&Overlay::new(&diff, head), &second).unwrap();
    pending.apply(&second);
    assert_eq!(root2, pending.root());
    diff.merge(diff2);
    let merged = Overlay::new(&diff, head);
    assert_eq!(current_root(&merged).unwrap(), root2);
    check_proofs(&merged, &pending, root2, &mut gen.rng, 6);

    // Nothing was written: the head is unchanged, and the merged diff commits as one block.
    assert_eq!(current_root(&head).unwrap(), head_root);
    drop(snapshot);
    drop(txn);
    let write = db.begin_write().unwrap();
    preconf_trie::write_diff(&write, 30, &diff).unwrap();
    write.commit().unwrap();
    let txn = db.begin_read().unwrap();
    assert_eq!(current_root(&TrieSnapshot::open(&txn).unwrap().latest()).unwrap(), root2);
}

#[test]
fn proofs_reject_wrong_values() {
    // The verifier is not vacuous: a present key does not verify as absent or altered.
    let db = memory_db();
    init_tables(&db);
    let mut rng = Rng::new(5);
    let address = rng.b256();
    let slot = rng.b256();
    let fields = AccountFields { nonce: 1, balance: U256::from(10), code_hash: rng.b256() };
    let others: Vec<AccountUpdate> = (0..50)
        .map(|_| AccountUpdate {
            hashed_address: rng.b256(),
            account: Some(fields),
            storage_wiped: false,
            storage: vec![],
        })
        .collect();
    let mut updates = others;
    updates.push(AccountUpdate {
        hashed_address: address,
        account: Some(fields),
        storage_wiped: false,
        storage: vec![(slot, U256::from(7))],
    });
    let (root, _) = commit_block(&db, 0, &updates);
    let txn = db.begin_read().unwrap();
    let snapshot = TrieSnapshot::open(&txn).unwrap();
    let proof = account_proof(&snapshot.latest(), address, &[slot]).unwrap();
    let account = proof.account.expect("account present");
    assert_ne!(account.storage_root, EMPTY_ROOT_HASH);
    let leaf = alloy_rlp::encode(account);
    let key = Nibbles::unpack(address);
    verify_proof(root, key, Some(leaf.clone()), &proof.proof).unwrap();
    assert!(verify_proof(root, key, None, &proof.proof).is_err());
    assert!(verify_proof(root, key, Some(vec![1, 2, 3]), &proof.proof).is_err());
    assert!(verify_proof(B256::repeat_byte(1), key, Some(leaf), &proof.proof).is_err());
    let storage = &proof.storage[0];
    assert_eq!(storage.value, U256::from(7));
    let slot_key = Nibbles::unpack(slot);
    verify_proof(account.storage_root, slot_key, Some(alloy_rlp::encode(U256::from(7))), &storage.proof).unwrap();
    assert!(
        verify_proof(account.storage_root, slot_key, Some(alloy_rlp::encode(U256::from(8))), &storage.proof).is_err()
    );
}

#[test]
fn errors_are_typed() {
    let db = memory_db();
    init_tables(&db);
    let fields = AccountFields { nonce: 0, balance: U256::from(1), code_hash: B256::ZERO };
    let a = B256::repeat_byte(0xaa);
    let one = AccountUpdate { hashed_address: a, account: Some(fields), storage_wiped: false, storage: vec![] };
    for block in 0..5 {
        let mut u = one.clone();
        u.account.as_mut().unwrap().nonce = block;
        commit_block(&db, block, &[u]);
    }
    let txn = db.begin_read().unwrap();
    let snapshot = TrieSnapshot::open(&txn).unwrap();
    match state_root(&snapshot.latest(), &[one.clone(), one.clone()]) {
        Err(TrieError::DuplicateAccount(addr)) => assert_eq!(addr, a),
        other => panic!("expected DuplicateAccount, got {:?}", other.map(|r| r.0)),
    }
    drop(snapshot);
    drop(txn);
    prune_to(&db, 3);
    let txn = db.begin_read().unwrap();
    let snapshot = TrieSnapshot::open(&txn).unwrap();
    let err = snapshot.at(2).err().expect("block 2 is pruned");
    assert!(matches!(err, TrieError::Pruned { block: 2, oldest: 3 }));
    assert_eq!(err.to_string(), "state of block 2 is no longer available: trie history goes back to block 3");
    assert!(snapshot.at(3).is_ok());
}

#[test]
fn empty_state_has_the_empty_root_and_empty_proofs() {
    let db = memory_db();
    init_tables(&db);
    let txn = db.begin_read().unwrap();
    let snapshot = TrieSnapshot::open(&txn).unwrap();
    assert_eq!(current_root(&snapshot.latest()).unwrap(), EMPTY_ROOT_HASH);
    let key = B256::repeat_byte(3);
    let proof = account_proof(&snapshot.latest(), key, &[key]).unwrap();
    assert!(proof.proof.is_empty() && proof.account.is_none());
    verify_proof(EMPTY_ROOT_HASH, Nibbles::unpack(key), None, &proof.proof).unwrap();
    // Creating and deleting everything returns to the empty root and leaves no live node.
    let fields = AccountFields { nonce: 1, balance: U256::ZERO, code_hash: B256::ZERO };
    let keys: Vec<B256> = (0..20u8).map(|i| B256::repeat_byte(i.wrapping_mul(37))).collect();
    drop(snapshot);
    drop(txn);
    let create: Vec<_> = keys
        .iter()
        .map(|k| AccountUpdate {
            hashed_address: *k,
            account: Some(fields),
            storage_wiped: false,
            storage: vec![(*k, U256::from(1))],
        })
        .collect();
    let (root, _) = commit_block(&db, 0, &create);
    assert_ne!(root, EMPTY_ROOT_HASH);
    let delete: Vec<_> = keys
        .iter()
        .map(|k| AccountUpdate { hashed_address: *k, account: None, storage_wiped: true, storage: vec![] })
        .collect();
    let (root, _) = commit_block(&db, 1, &delete);
    assert_eq!(root, EMPTY_ROOT_HASH);
    let layout = common::layout::check_layout(&db, root);
    assert_eq!((layout.account_nodes, layout.storage_nodes), (0, 0));
}
