//! Pruning keeps the last N blocks' roots and proofs intact and deletes exactly the
//! versions (and tombstones) no reader of those blocks can need.

use crate::common;

use std::collections::VecDeque;

use alloy_primitives::B256;
use common::layout::check_layout;
use common::model::{check_proofs, BlockGen, Model};
use common::{commit_block, init_tables, memory_db, prune_to, TempDb};
use preconf_trie::{current_root, TrieError, TrieSnapshot, ACCOUNT_NODES, PRUNE_QUEUE, STORAGE_NODES};
use redb::{Database, ReadableDatabase, ReadableTable, ReadableTableMetadata};

/// Every node version in the store: (table and path, block, is tombstone), in key order.
fn versions(db: &Database) -> Vec<(Vec<u8>, u64, bool)> {
    let txn = db.begin_read().unwrap();
    let mut out = Vec::new();
    for entry in txn.open_table(ACCOUNT_NODES).unwrap().iter().unwrap() {
        let (k, v) = entry.unwrap();
        let k = k.value();
        out.push(([&[0u8][..], &k[..33]].concat(), block_of(k), v.value().is_empty()));
    }
    for entry in txn.open_table(STORAGE_NODES).unwrap().iter().unwrap() {
        let (k, v) = entry.unwrap();
        let k = k.value();
        out.push(([&[1u8][..], &k[..65]].concat(), block_of(k), v.value().is_empty()));
    }
    out
}

fn block_of(key: &[u8]) -> u64 {
    u64::from_be_bytes(key[key.len() - 8..].try_into().unwrap())
}

/// How many versions a reader at `keep_from` or later can still need: a version that a
/// later version superseded at or before `keep_from` is not, nor is a tombstone at or
/// before `keep_from` (nothing older is left for it to hide).
fn needed(all: &[(Vec<u8>, u64, bool)], keep_from: u64) -> usize {
    let mut count = 0;
    for (i, (path, block, tombstone)) in all.iter().enumerate() {
        let superseded_at = all.get(i + 1).filter(|next| &next.0 == path).map(|next| next.1);
        let superseded = superseded_at.is_some_and(|at| at <= keep_from);
        let old_tombstone = *tombstone && *block <= keep_from;
        if !(superseded || old_tombstone) {
            count += 1;
        }
    }
    count
}

fn queue_below(db: &Database, keep_from: u64) -> usize {
    let txn = db.begin_read().unwrap();
    let queue = txn.open_table(PRUNE_QUEUE).unwrap();
    let end = (keep_from + 1).to_be_bytes();
    queue.range::<&[u8]>(..&end[..]).unwrap().count()
}

fn run(db: &Database, seed: u64, window: u64, blocks: u64) {
    init_tables(db);
    let mut gen = BlockGen::new(seed);
    let mut model = Model::default();
    let mut recent: VecDeque<(u64, B256, Model)> = VecDeque::new();
    let mut deleted_total = 0;
    for block in 0..blocks {
        let updates = gen.next_block(&model, block);
        let (root, _) = commit_block(db, block, &updates);
        model.apply(&updates);
        assert_eq!(root, model.root());
        recent.push_back((block, root, model.clone()));
        if block + 1 < window {
            continue;
        }
        let keep_from = block + 1 - window;
        let before = versions(db);
        let stats = prune_to(db, keep_from);
        let after = versions(db);
        deleted_total += stats.versions_deleted;
        assert_eq!(after.len(), needed(&before, keep_from), "block {block}: wrong versions left");
        assert_eq!(before.len() - after.len(), stats.versions_deleted as usize);
        assert_eq!(queue_below(db, keep_from), 0);
        assert!(after.iter().all(|(_, b, tombstone)| !tombstone || *b > keep_from), "old tombstone left");
        while recent.front().is_some_and(|(b, _, _)| *b < keep_from) {
            recent.pop_front();
        }
        if block % 7 == 0 || block + 1 == blocks {
            check_window(db, &recent, keep_from, &mut gen);
        }
    }
    check_layout(db, recent.back().unwrap().1);
    assert!(deleted_total > 0, "nothing was pruned");
}

/// Roots and proofs of every retained block; older blocks answer `Pruned`.
fn check_window(db: &Database, recent: &VecDeque<(u64, B256, Model)>, keep_from: u64, gen: &mut BlockGen) {
    let txn = db.begin_read().unwrap();
    let snapshot = TrieSnapshot::open(&txn).unwrap();
    assert_eq!(snapshot.oldest_available(), keep_from);
    for (block, root, state) in recent {
        let at = snapshot.at(*block).unwrap();
        assert_eq!(current_root(&at).unwrap(), *root, "root of retained block {block}");
        if *block == keep_from || block % 5 == 0 {
            check_proofs(&at, state, *root, &mut gen.rng, 2);
        }
    }
    if keep_from > 0 {
        match snapshot.at(keep_from - 1) {
            Err(TrieError::Pruned { block, oldest }) => {
                assert_eq!((block, oldest), (keep_from - 1, keep_from))
            }
            other => panic!("expected Pruned, got {:?}", other.map(|a| a.block())),
        }
    }
}

#[test]
fn prune_keeps_the_last_128_blocks() {
    let temp = TempDb::new("prune");
    run(&temp.db, 7, 128, 128 + 90);
}

#[test]
fn prune_with_a_short_window_removes_superseded_versions_and_tombstones() {
    for seed in 20..26 {
        run(&memory_db(), seed, 1 + seed % 4, 80);
    }
}

#[test]
fn pruned_store_stays_bounded() {
    // Rewriting the same keys block after block: without pruning the versions pile up,
    // with a window they stay proportional to the window.
    let db = memory_db();
    init_tables(&db);
    let mut gen = BlockGen::new(3);
    let mut model = Model::default();
    let first = gen.next_block(&model, 0);
    commit_block(&db, 0, &first);
    model.apply(&first);
    let keys: Vec<B256> = model.accounts.keys().copied().collect();
    let mut sizes = Vec::new();
    for block in 1..=300u64 {
        let updates: Vec<_> = keys
            .iter()
            .take(5)
            .map(|k| preconf_trie::AccountUpdate {
                hashed_address: *k,
                account: Some(preconf_trie::AccountFields { nonce: block, ..model.accounts[k].fields }),
                storage_wiped: false,
                storage: vec![],
            })
            .collect();
        commit_block(&db, block, &updates);
        model.apply(&updates);
        if block >= 8 {
            prune_to(&db, block - 7);
        }
        let txn = db.begin_read().unwrap();
        sizes.push(txn.open_table(ACCOUNT_NODES).unwrap().len().unwrap());
    }
    assert_eq!(sizes[100], sizes[299], "node versions grow although pruned: {sizes:?}");
}
