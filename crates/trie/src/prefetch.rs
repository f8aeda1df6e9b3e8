//! Loading a block's trie paths ahead of its seal. The builder calls `prefetch` for the
//! keys a block changes while it waits for the next pre-confirmation tick; the seal's
//! `state_root_warm` then starts from those tries, already read and decoded, and is left
//! with the in-memory updates and the hashing. The part of a seal that grows with the
//! state (one B-tree lookup and one decode per node on the changed paths) moves out of it.
//!
//! The tries hold what the reader returned, unchanged: they stay right as long as the
//! reader's trie does not change, so one `WarmTries` serves one parent block.

use std::collections::HashMap;

use alloy_primitives::B256;

use crate::error::TrieResult;
use crate::mpt::{Link, Trie};
use crate::reader::NodeReader;

#[derive(Default)]
pub struct WarmTries {
    /// The account trie's root, loaded along the prefetched paths (`None`: not opened).
    accounts: Option<Link>,
    storage: HashMap<B256, Link>,
}

impl WarmTries {
    /// Loads the nodes on the paths of `account` and of its `slots` (hashed keys).
    pub fn prefetch<R: NodeReader + ?Sized>(&mut self, reader: &R, account: &B256, slots: &[B256]) -> TrieResult<()> {
        let mut accounts = self.trie(reader, None)?;
        accounts.get(account)?;
        self.accounts = Some(accounts.into_root());
        if !slots.is_empty() {
            let mut storage = self.trie(reader, Some(*account))?;
            for slot in slots {
                storage.get(slot)?;
            }
            self.storage.insert(*account, storage.into_root());
        }
        Ok(())
    }

    /// Puts back the loaded (and possibly changed and re-hashed) root of `owner`'s trie.
    pub(crate) fn keep(&mut self, owner: Option<B256>, root: Link) {
        match owner {
            None => self.accounts = Some(root),
            Some(owner) => {
                self.storage.insert(owner, root);
            }
        }
    }

    /// The warm trie of `owner` (taken out), or the reader's, opened cold.
    pub(crate) fn trie<'r, R: NodeReader + ?Sized>(
        &mut self,
        reader: &'r R,
        owner: Option<B256>,
    ) -> TrieResult<Trie<'r, R>> {
        let warm = match owner {
            None => self.accounts.take(),
            Some(owner) => self.storage.remove(&owner),
        };
        match warm {
            Some(root) => Ok(Trie::with_root(reader, owner, root)),
            None => Trie::open(reader, owner),
        }
    }
}
