//! A replica's running trie against the one-pass root: random blocks cut in random ticks,
//! of which a random prefix was applied before the seal (a replica that saw only some of
//! the pre-confirmations), on two real stores: one written with the running trie's diffs,
//! one with the one-pass diffs, whose roots must stay equal block after block.

use alloy_consensus::Header;
use alloy_primitives::{Address, B256, KECCAK256_EMPTY, U256};

use super::WarmTrie;
use crate::changes::{AccountChange, AccountState, StateChanges};
use crate::store::{BlockWrite, Store, StoredBody, StoredReceipts};

struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        (z ^ (z >> 31)) % n
    }
}

fn info(rng: &mut Rng) -> Option<AccountState> {
    let code_hash = if rng.below(3) == 0 { B256::with_last_byte(7) } else { KECCAK256_EMPTY };
    Some(AccountState { nonce: rng.below(5), balance: U256::from(1 + rng.below(1000)), code_hash })
}

/// One pre-confirmation's changes over 24 addresses and 8 slots each: balances, storage
/// writes and clears, deletions, re-creations.
fn tick(rng: &mut Rng) -> StateChanges {
    let mut changes = StateChanges::default();
    for _ in 0..1 + rng.below(6) {
        let address = Address::with_last_byte(rng.below(24) as u8);
        let mut change = AccountChange { info: info(rng), ..Default::default() };
        match rng.below(10) {
            0 => change = AccountChange { info: None, storage_wiped: true, ..Default::default() },
            1 => change.storage_wiped = true,
            _ => {}
        }
        if change.info.is_some() && rng.below(2) == 0 {
            for _ in 0..1 + rng.below(4) {
                change.storage.insert(U256::from(rng.below(8)), U256::from(rng.below(4)));
            }
        }
        let mut one = StateChanges::default();
        one.accounts.insert(address, change);
        changes.extend(one);
    }
    changes
}

fn commit(store: &Store, number: u64, changes: &StateChanges, trie: &preconf_trie::TrieDiff, root: B256) {
    let header = Header { number, state_root: root, ..Default::default() };
    store
        .commit_block(BlockWrite {
            header: &header,
            hash: B256::with_last_byte(number as u8),
            body: &StoredBody::default(),
            receipts: &StoredReceipts::default(),
            tx_hashes: &[],
            changes,
            trie,
        })
        .unwrap();
}

/// Blocks of `1 + below(max_ticks)` random ticks, seeds `seeds`: `run` feeds a fresh
/// running trie some of a block's ticks (and says what it did, for the failure message);
/// its seal root must be the one-pass root, and the store written with its diff must hold
/// the same trie as the one written with the one-pass diff, block after block.
fn against_one_pass(
    seeds: std::ops::Range<u64>,
    blocks: u64,
    max_ticks: u64,
    mut run: impl FnMut(&mut Rng, &mut WarmTrie, &[StateChanges]) -> String,
) {
    for seed in seeds {
        let mut rng = Rng(seed);
        let (running_store, one_pass_store) = (Store::in_memory().unwrap(), Store::in_memory().unwrap());
        for number in 1..=blocks {
            let ticks: Vec<StateChanges> = (0..1 + rng.below(max_ticks)).map(|_| tick(&mut rng)).collect();
            let mut block = StateChanges::default();
            ticks.iter().for_each(|t| block.extend(t.clone()));
            let (expected, one_pass_diff) = one_pass_store.state_root(&block).unwrap();

            let mut warm = WarmTrie::new(running_store.snapshot().unwrap());
            let did = run(&mut rng, &mut warm, &ticks);
            let (root, diff) = warm.state_root(&block).unwrap();
            assert_eq!(root, expected, "seed {seed} block {number}: {did}");

            commit(&running_store, number, &block, &diff, root);
            commit(&one_pass_store, number, &block, &one_pass_diff, expected);
            let empty = StateChanges::default();
            assert_eq!(
                running_store.state_root(&empty).unwrap().0,
                expected,
                "seed {seed} block {number}: the running diff stored another trie"
            );
        }
    }
}

#[test]
fn seal_after_some_ticks_gives_the_one_pass_root_and_a_trie_that_stays_right() {
    against_one_pass(0..8, 40, 5, |rng, warm, ticks| {
        let seen = rng.below(ticks.len() as u64 + 1) as usize;
        ticks[..seen].iter().for_each(|t| warm.advance(t));
        format!("{seen} of {} ticks applied", ticks.len())
    });
}

/// A builder's path: pre-confirmations handed over as published, applied (merged) by the
/// idle-time `prefetch` once `APPLY_EVERY` has passed, the rest left to the seal.
#[test]
fn a_builder_applies_its_preconfirmations_when_due_and_seals_the_one_pass_root() {
    let far = std::time::Instant::now() + std::time::Duration::from_secs(60);
    against_one_pass(100..108, 20, 7, |rng, warm, ticks| {
        let mut applied = 0;
        for t in ticks {
            warm.preconfirmed(t);
            // Not due yet: idle time leaves it queued.
            if !warm.seal_near {
                warm.prefetch(far);
                assert!(warm.unapplied.is_some(), "not due: left for later");
            }
            if rng.below(4) == 0 {
                // Near the seal every pre-confirmation is due at once.
                warm.seal_near();
            }
            if warm.seal_near {
                assert!(warm.behind());
                warm.prefetch(far);
                assert!(warm.unapplied.is_none() && !warm.held.is_empty());
                applied += 1;
            } else if rng.below(2) == 0 {
                warm.applied_at = Some(std::time::Instant::now() - super::APPLY_EVERY);
                assert!(warm.behind(), "a due application asks for idle time");
                warm.prefetch(far);
                assert!(warm.unapplied.is_none() && !warm.held.is_empty());
                applied += 1;
            }
        }
        format!("{applied} applications")
    });
}
