//! A block's state trie kept between roots. A replica receives an open block's changes one
//! pre-confirmation at a time; applying each as it arrives leaves the sealed block's check
//! with only what changed after the last one, instead of the whole block's hashing.
//!
//! Invariant, kept by every `apply`: the parent's trie with `diff` written over it is the
//! trie held in memory. So any sequence of updates may be applied (repeated, superseded by
//! later values, or the whole block again at the seal): the root is that of the final
//! values, and the diff takes the parent's trie there.

use alloy_primitives::B256;
use alloy_trie::{TrieAccount, EMPTY_ROOT_HASH};

use crate::account::{decode_account, AccountUpdate};
use crate::diff::TrieDiff;
use crate::error::{TrieError, TrieResult};
use crate::mpt::{Link, Trie};
use crate::prefetch::WarmTries;
use crate::reader::NodeReader;

#[derive(Default)]
pub struct RunningState {
    tries: WarmTries,
    /// Every node changed since the parent's trie, by path (`None`: removed).
    diff: TrieDiff,
}

impl From<WarmTries> for RunningState {
    fn from(tries: WarmTries) -> Self {
        Self { tries, diff: TrieDiff::default() }
    }
}

impl RunningState {
    /// Sets the accounts of `updates` (each at most once) to their values over what earlier
    /// calls set, and returns the state root. Reads and re-hashes only the paths of these
    /// keys (a value equal to the one held changes nothing). `reader` must be the parent's
    /// trie every time. After an error the state holds nothing (as new).
    pub fn apply<R: NodeReader + ?Sized>(&mut self, reader: &R, updates: &[AccountUpdate]) -> TrieResult<B256> {
        let applied = self.try_apply(reader, updates);
        if applied.is_err() {
            *self = Self::default();
        }
        applied
    }

    /// Loads the nodes on the paths of `account` and of its `slots` (hashed keys).
    pub fn prefetch<R: NodeReader + ?Sized>(&mut self, reader: &R, account: &B256, slots: &[B256]) -> TrieResult<()> {
        self.tries.prefetch(reader, account, slots)
    }

    pub fn into_diff(self) -> TrieDiff {
        self.diff
    }

    fn try_apply<R: NodeReader + ?Sized>(&mut self, reader: &R, updates: &[AccountUpdate]) -> TrieResult<B256> {
        let mut order: Vec<&AccountUpdate> = updates.iter().collect();
        order.sort_unstable_by_key(|u| u.hashed_address);
        if let Some(pair) = order.windows(2).find(|w| w[0].hashed_address == w[1].hashed_address) {
            return Err(TrieError::DuplicateAccount(pair[0].hashed_address));
        }
        let mut accounts = self.tries.trie(reader, None)?;
        let mut leaf = Vec::with_capacity(110);
        for update in order {
            let address = update.hashed_address;
            let Some(fields) = update.account else {
                self.wipe_storage(reader, address)?;
                accounts.remove(&address)?;
                continue;
            };
            let storage_root = if update.storage_wiped || !update.storage.is_empty() {
                let mut storage = match update.storage_wiped {
                    true => self.wipe_storage(reader, address)?,
                    false => self.tries.trie(reader, Some(address))?,
                };
                for (slot, value) in &update.storage {
                    if value.is_zero() {
                        storage.remove(slot)?;
                    } else {
                        storage.insert(slot, alloy_rlp::encode(value))?;
                    }
                }
                let (root, nodes) = storage.commit();
                if !nodes.is_empty() {
                    self.diff.storage.entry(address).or_default().extend(nodes);
                }
                self.tries.keep(Some(address), storage.into_root());
                root
            } else {
                // Storage untouched: keep the root the account's current leaf commits to.
                match accounts.get(&address)? {
                    Some(old) => decode_account(&old, address)?.storage_root,
                    None => EMPTY_ROOT_HASH,
                }
            };
            let account = TrieAccount::new(fields.nonce, fields.balance, storage_root, fields.code_hash);
            leaf.clear();
            alloy_rlp::Encodable::encode(&account, &mut leaf);
            accounts.insert(&address, leaf.clone())?;
        }
        let (root, nodes) = accounts.commit();
        self.diff.accounts.extend(nodes);
        self.tries.keep(None, accounts.into_root());
        Ok(root)
    }

    /// Empties `owner`'s storage trie: the parent's nodes and those written since are
    /// removed. Returns the empty trie (its removals already in the diff).
    fn wipe_storage<'r, R: NodeReader + ?Sized>(&mut self, reader: &'r R, owner: B256) -> TrieResult<Trie<'r, R>> {
        let mut wiped = Trie::wiped(reader, Some(owner))?;
        let (_, vacated) = wiped.commit();
        let nodes = self.diff.storage.entry(owner).or_default();
        nodes.values_mut().for_each(|node| *node = None);
        nodes.extend(vacated);
        if nodes.is_empty() {
            self.diff.storage.remove(&owner);
        }
        self.tries.keep(Some(owner), Link::Empty);
        Ok(wiped)
    }
}
