//! Property test: over random sequences of blocks the incremental root equals the root
//! computed from scratch over all leaves, the stored layout matches the trie, older
//! blocks keep their roots, proofs verify at the head and at older blocks, and a root
//! computed from tries prefetched along part of the keys is the same.

use crate::common;

use alloy_primitives::B256;
use common::layout::check_layout;
use common::model::{check_proofs, BlockGen, Model};
use common::{commit_block, init_tables, memory_db, pending_root, warm_root, TempDb};
use preconf_trie::{current_root, TrieSnapshot};
use redb::{Database, ReadableDatabase};

fn run(seed: u64, db: &Database, blocks: u64) {
    init_tables(db);
    let mut gen = BlockGen::new(seed);
    let mut model = Model::default();
    let mut history: Vec<(B256, Model)> = Vec::new();
    let mut proofs = 0;
    let mut inline_seen = 0;
    for block in 0..blocks {
        let updates = gen.next_block(&model, block);
        // Read-only over the committed head first (as for a pending block), then for real.
        let (pending, pending_diff) = pending_root(db, &updates);
        let (warm, warm_diff) = warm_root(db, &updates, &mut gen.rng);
        let (root, diff) = commit_block(db, block, &updates);
        model.apply(&updates);
        assert_eq!(root, model.root(), "seed {seed} block {block}: incremental root differs from scratch");
        assert_eq!((pending, &pending_diff), (root, &diff), "seed {seed} block {block}: read-only run differs");
        assert_eq!((warm, &warm_diff), (root, &diff), "seed {seed} block {block}: run from prefetched tries differs");
        if block % 5 == 4 {
            inline_seen += check_layout(db, root).inline_nodes;
        }
        history.push((root, model.clone()));
    }
    check_layout(db, history.last().unwrap().0);

    let txn = db.begin_read().unwrap();
    let snapshot = TrieSnapshot::open(&txn).unwrap();
    for (block, (root, state)) in history.iter().enumerate() {
        let at = snapshot.at(block as u64).unwrap();
        assert_eq!(current_root(&at).unwrap(), *root, "seed {seed}: root of block {block} changed later");
        if block % 3 == 0 || block + 1 == history.len() {
            proofs += check_proofs(&at, state, *root, &mut gen.rng, 4);
        }
    }
    assert!(proofs > 0);
    assert!(inline_seen > 0, "seed {seed}: no inline node was exercised");
}

#[test]
fn random_blocks_in_memory() {
    for seed in 0..16 {
        run(seed, &memory_db(), 70);
    }
}

#[test]
fn random_blocks_in_a_file() {
    for seed in 100..104 {
        let temp = TempDb::new("random");
        run(seed, &temp.db, 70);
    }
}
