//! Property test for `RunningState`: a block applied one pre-confirmation at a time (its
//! changes split in random ticks), then as a whole at the seal, gives the root computed
//! from scratch, and a diff that takes the parent's trie to the same nodes as the diff of
//! the block computed in one pass. Also when ticks are skipped or a tick is repeated.

use crate::common;

use std::collections::BTreeMap;

use alloy_primitives::{Bytes, B256};
use common::model::{BlockGen, Model};
use common::{commit_block, init_tables, memory_db, pending_root};
use preconf_trie::{AccountUpdate, Nibbles, NodeDiff, NodeReader, RunningState, TrieDiff, TrieSnapshot};
use redb::{Database, ReadableDatabase};

/// The block's change set from its ticks, as the chain folds them: later values win, a
/// deletion empties the storage, and an account re-created after one starts from none.
fn merge(ticks: &[Vec<AccountUpdate>]) -> Vec<AccountUpdate> {
    let mut merged: BTreeMap<B256, AccountUpdate> = BTreeMap::new();
    for update in ticks.iter().flatten() {
        let Some(into) = merged.get_mut(&update.hashed_address) else {
            merged.insert(update.hashed_address, update.clone());
            continue;
        };
        let was_deleted = into.account.is_none();
        into.account = update.account;
        if update.account.is_none() || update.storage_wiped || was_deleted {
            into.storage_wiped = true;
            into.storage = update.storage.clone();
        } else {
            into.storage.extend(update.storage.iter().copied());
        }
    }
    merged.into_values().collect()
}

/// What the node at `path` is once `diff` is written over `base`.
fn effective(diff: &NodeDiff, path: &Nibbles, base: impl FnOnce() -> Option<Bytes>) -> Option<Bytes> {
    match diff.get(path) {
        Some(node) => node.clone(),
        None => base(),
    }
}

/// Both diffs leave every path of either with the same node over `reader`.
fn same_effect(reader: &impl NodeReader, ours: &TrieDiff, theirs: &TrieDiff, what: &str) {
    for path in ours.accounts.keys().chain(theirs.accounts.keys()) {
        let base = || reader.account_node(path).unwrap();
        assert_eq!(
            effective(&ours.accounts, path, base),
            effective(&theirs.accounts, path, base),
            "{what}: account node {path:?}"
        );
    }
    let empty = NodeDiff::new();
    for owner in ours.storage.keys().chain(theirs.storage.keys()) {
        let (a, b) = (ours.storage.get(owner).unwrap_or(&empty), theirs.storage.get(owner).unwrap_or(&empty));
        for path in a.keys().chain(b.keys()) {
            let base = || reader.storage_node(owner, path).unwrap();
            assert_eq!(effective(a, path, base), effective(b, path, base), "{what}: storage node {owner} {path:?}");
        }
    }
}

fn run(seed: u64, db: &Database, blocks: u64) {
    init_tables(db);
    let mut gen = BlockGen::new(seed);
    let mut model = Model::default();
    for block in 0..blocks {
        let mut ticks = Vec::new();
        let mut after = model.clone();
        for _ in 0..1 + gen.rng.below(5) {
            let tick = gen.next_block(&after, block);
            after.apply(&tick);
            ticks.push(tick);
        }
        let whole = merge(&ticks);
        let (root, diff) = pending_root(db, &whole);
        assert_eq!(root, after.root(), "seed {seed} block {block}: the merged block is not the ticks");

        let txn = db.begin_read().unwrap();
        let snapshot = TrieSnapshot::open(&txn).unwrap();
        let reader = snapshot.latest();
        // As a replica: every tick as it comes, then the whole block at the seal.
        let mut running = RunningState::default();
        for (i, tick) in ticks.iter().enumerate() {
            let mut seen = model.clone();
            ticks[..=i].iter().for_each(|t| seen.apply(t));
            assert_eq!(running.apply(&reader, tick).unwrap(), seen.root(), "seed {seed} block {block} tick {i}");
        }
        assert_eq!(running.apply(&reader, &whole).unwrap(), root, "seed {seed} block {block}: at the seal");
        same_effect(&reader, &running.into_diff(), &diff, &format!("seed {seed} block {block}"));

        // Some ticks missed (a budget ran out, a pre-confirmation was skipped), one twice.
        let mut partial = RunningState::default();
        for tick in &ticks {
            if gen.rng.chance(50) {
                partial.apply(&reader, tick).unwrap();
            }
            if gen.rng.chance(20) {
                partial.apply(&reader, tick).unwrap();
            }
        }
        assert_eq!(partial.apply(&reader, &whole).unwrap(), root, "seed {seed} block {block}: partial");
        same_effect(&reader, &partial.into_diff(), &diff, &format!("seed {seed} block {block} partial"));
        drop(snapshot);
        drop(txn);

        let (committed, _) = commit_block(db, block, &whole);
        assert_eq!(committed, root);
        model = after;
    }
}

#[test]
fn ticks_then_the_seal_give_the_one_pass_root_and_nodes() {
    for seed in 0..16 {
        run(seed, &memory_db(), 60);
    }
}
