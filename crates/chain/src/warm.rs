//! The seal's trie work, done ahead. Between pre-confirmation ticks the builder has idle
//! time; it spends it loading the trie paths of every key the open block changed so far
//! (`prefetch`), so the seal finds those nodes read and decoded and is left with the
//! in-memory updates and the hashing. Then it applies what it pre-confirmed to the block's
//! trie (`advance`, hashing only those paths): every `APPLY_EVERY`, then after each one once
//! the seal is near, so the seal, which the next block's first pre-confirmation waits for,
//! is left with what the last one changed. A replica applies each pre-confirmation as it
//! arrives, so checking the sealed block's state root is left with what changed after the
//! last one, and the pre-confirmations of the next block do not queue behind it. On a
//! large state the reads are what grows (one B-tree lookup per node, deeper trie, colder
//! pages): measured with
//! `cargo run --release -p preconf-trie --example trie_bench -- 10000 1000000 --prefetch`.
//!
//! The tries are read from the parent block's trie (the snapshot the block was opened
//! on, with the parent's diff on top while its commit is in flight), which never changes
//! while the block is open; the seal computes its root from the same reader.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use alloy_primitives::map::{AddressMap, AddressSet, HashMap, HashSet};
use alloy_primitives::{keccak256, Address, B256, U256};
use preconf_trie::{AccountUpdate, NodeReader, RunningState, TrieDiff};

use crate::changes::{AccountChange, AccountState, StateChanges};
use crate::error::ChainResult;
use crate::store::{trie, StoreSnapshot};

pub struct WarmTrie {
    /// The snapshot the block was opened on: its trie (with its tip) is the parent's.
    parent: Arc<StoreSnapshot>,
    tries: RunningState,
    accounts: AddressSet,
    slots: HashSet<(Address, U256)>,
    /// Keys changed and not loaded yet, oldest first.
    queue: VecDeque<(Address, Vec<U256>)>,
    /// What `advance` applied to `tries`, by account.
    held: AddressMap<Held>,
    /// A builder's pre-confirmations not applied yet (merged), and when it last applied.
    unapplied: Option<StateChanges>,
    applied_at: Option<Instant>,
    /// The seal is near: every pre-confirmation is applied as soon as there is time.
    seal_near: bool,
    /// What the last application took: the next starts only with twice that left before
    /// the tick (it cannot stop half-way, and a late tick is a gap).
    apply_took: Duration,
}

/// How often a builder applies its pre-confirmations to the running trie, until the seal is
/// near (then after every one). Each application re-hashes the paths it touches, the root's
/// among them: at a 10 ms interval, applying every one would hash the senders' paths and the
/// top of the trie 100 times a block.
pub const APPLY_EVERY: Duration = Duration::from_millis(100);

/// One account as the running trie holds it after the pre-confirmations applied.
#[derive(Default)]
struct Held {
    info: Option<AccountState>,
    /// Its storage was emptied (deleted or re-created) before `slots` were written.
    wiped: bool,
    slots: HashMap<U256, U256>,
}

impl Held {
    fn apply(&mut self, change: &AccountChange) {
        self.info = change.info;
        if change.info.is_none() || change.storage_wiped {
            self.wiped = true;
            self.slots.clear();
        }
        self.slots.extend(change.storage.iter().map(|(k, v)| (*k, *v)));
    }

    /// The update that takes this account to `change`, the block's final value for it:
    /// `None` when it is there already. In a block whose pre-confirmations were applied,
    /// most accounts are; a block that does not match them is caught by its state root.
    fn rest(&self, address: &Address, change: &AccountChange) -> Option<AccountUpdate> {
        let whole = || Some(trie::trie_update(address, change));
        let same_info = self.info == change.info;
        if change.info.is_none() {
            return if same_info && self.wiped { None } else { whole() };
        }
        let wipe_held = self.wiped && self.slots.keys().all(|k| change.storage.contains_key(k));
        if change.storage_wiped != self.wiped || (change.storage_wiped && !wipe_held) {
            return whole();
        }
        let slots: Vec<_> = change
            .storage
            .iter()
            .filter(|(slot, value)| self.slots.get(*slot) != Some(*value))
            .map(|(slot, value)| trie::hashed_slot(slot, value))
            .collect();
        if same_info && slots.is_empty() {
            return None;
        }
        Some(AccountUpdate {
            hashed_address: keccak256(address),
            account: change.info.map(trie::account_fields),
            storage_wiped: false,
            storage: slots,
        })
    }
}

impl WarmTrie {
    pub fn new(parent: Arc<StoreSnapshot>) -> Self {
        Self {
            parent,
            tries: RunningState::default(),
            accounts: AddressSet::default(),
            slots: HashSet::default(),
            queue: VecDeque::new(),
            held: AddressMap::default(),
            unapplied: None,
            applied_at: None,
            seal_near: false,
            apply_took: Duration::ZERO,
        }
    }

    /// A builder published `tick`: idle time applies it (with the ticks after it) to the
    /// running trie, so the seal is left with what the last ones changed.
    pub fn preconfirmed(&mut self, tick: &StateChanges) {
        if tick.is_empty() {
            return;
        }
        self.unapplied.get_or_insert_with(StateChanges::default).extend(tick.clone());
        self.applied_at.get_or_insert_with(Instant::now);
    }

    /// The block changed `address` (and `slots` of its stored storage): the next
    /// `prefetch` loads their paths. Costs what changed, so a tick's prefetch does not
    /// grow with the block.
    pub fn changed(&mut self, address: Address, slots: impl IntoIterator<Item = U256>) {
        let slots: Vec<U256> = slots.into_iter().filter(|slot| !self.slots.contains(&(address, *slot))).collect();
        if !slots.is_empty() || !self.accounts.contains(&address) {
            self.queue.push_back((address, slots));
        }
    }

    /// Whether keys changed that `prefetch` has not loaded yet, or pre-confirmations wait
    /// to be applied.
    pub fn behind(&self) -> bool {
        !self.queue.is_empty() || self.apply_due()
    }

    fn apply_due(&self) -> bool {
        self.unapplied.is_some() && (self.seal_near || self.applied_at.is_some_and(|at| at.elapsed() >= APPLY_EVERY))
    }

    /// The block is sealed within `APPLY_EVERY`: from now on idle time applies every
    /// pre-confirmation, so the seal is left with the last one's changes.
    pub fn seal_near(&mut self) {
        self.seal_near = true;
    }

    /// Idle time until `stop_at`: loads the paths of the changed keys not loaded yet,
    /// oldest first, then applies the pre-confirmations published since the last
    /// application if `APPLY_EVERY` has passed since it. A failed read leaves the rest to
    /// the seal, which reports it.
    pub fn prefetch(&mut self, stop_at: Instant) {
        self.load(stop_at);
        let started = Instant::now();
        if self.queue.is_empty() && self.apply_due() && started + 2 * self.apply_took < stop_at {
            if let Some(changes) = self.unapplied.take() {
                self.advance(&changes);
                self.applied_at = Some(Instant::now());
                self.apply_took = started.elapsed();
            }
        }
    }

    fn load(&mut self, stop_at: Instant) {
        if self.queue.is_empty() {
            return;
        }
        let parent = self.parent.clone();
        let done = with_parent_trie(&parent, |reader| {
            let mut hashed = Vec::new();
            // A clock read per account is cheap next to a cold path read: the tick must
            // not wait for the prefetch.
            while Instant::now() < stop_at {
                let Some((address, slots)) = self.queue.pop_front() else {
                    break;
                };
                hashed.clear();
                for slot in slots {
                    if self.slots.insert((address, slot)) {
                        hashed.push(keccak256(B256::from(slot)));
                    }
                }
                if self.accounts.insert(address) || !hashed.is_empty() {
                    self.tries.prefetch(reader, &keccak256(address), &hashed)?;
                }
            }
            Ok(())
        });
        if done.is_err() {
            // Leave everything to the seal (it reads the same trie and reports the error).
            self.tries = RunningState::default();
            self.queue.clear();
        }
    }

    /// Applies changes the block made (one pre-confirmation's) to its trie now, so the
    /// seal re-hashes only what changed after them. A failed read leaves everything to the
    /// seal, which reports it.
    pub fn advance(&mut self, changes: &StateChanges) {
        let parent = self.parent.clone();
        let updates = trie::trie_updates(changes);
        match with_parent_trie(&parent, |reader| Ok(self.tries.apply(reader, &updates)?)) {
            Ok(_) => {
                for (address, change) in changes.accounts.iter() {
                    self.held.entry(*address).or_default().apply(change);
                }
            }
            // The running state is empty again: the seal starts over.
            Err(_) => self.held.clear(),
        }
    }

    /// `advance`, and the state root of the block as of `changes` (a flashblocks
    /// follower checks each flashblock's root with it).
    pub fn advance_root(&mut self, changes: &StateChanges) -> ChainResult<B256> {
        let parent = self.parent.clone();
        let updates = trie::trie_updates(changes);
        let root = with_parent_trie(&parent, |reader| Ok(self.tries.apply(reader, &updates)?))?;
        for (address, change) in changes.accounts.iter() {
            self.held.entry(*address).or_default().apply(change);
        }
        Ok(root)
    }

    /// The block's state root and trie diff, from the tries loaded or advanced so far
    /// (used up): the seal applies what of the block's change set they do not hold yet.
    pub fn state_root(&mut self, changes: &StateChanges) -> ChainResult<(B256, TrieDiff)> {
        let mut tries = std::mem::take(&mut self.tries);
        let held = std::mem::take(&mut self.held);
        let updates: Vec<AccountUpdate> = match held.is_empty() {
            true => trie::trie_updates(changes),
            false => changes
                .accounts
                .iter()
                .filter_map(|(address, change)| match held.get(address) {
                    Some(h) => h.rest(address, change),
                    None => Some(trie::trie_update(address, change)),
                })
                .collect(),
        };
        with_parent_trie(&self.parent, |reader| {
            let root = tries.apply(reader, &updates)?;
            Ok((root, tries.into_diff()))
        })
    }
}

/// Runs `f` on the parent block's trie: the committed one, with the diffs of the blocks
/// still being committed on top.
impl WarmTrie {
    /// Runs `f` on the parent's trie, which a sealed block's trie diff lies over.
    pub fn with_parent<T>(&self, f: impl FnOnce(&dyn NodeReader) -> ChainResult<T>) -> ChainResult<T> {
        with_parent_trie(&self.parent, f)
    }
}

fn with_parent_trie<T>(parent: &StoreSnapshot, f: impl FnOnce(&dyn NodeReader) -> ChainResult<T>) -> ChainResult<T> {
    let reader = parent.trie_reader_at(u64::MAX)?;
    f(&*reader)
}

#[cfg(test)]
#[path = "warm_tests.rs"]
mod tests;
