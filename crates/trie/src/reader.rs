//! Where the trie reads its nodes from: a committed snapshot at some block, the write
//! transaction being built, or a diff layered on either.

use alloy_primitives::{Bytes, B256};
use alloy_trie::Nibbles;

use crate::diff::TrieDiff;
use crate::error::TrieResult;

/// Reads trie nodes by their path from the root. `None`: no node at that path.
pub trait NodeReader {
    fn account_node(&self, path: &Nibbles) -> TrieResult<Option<Bytes>>;
    fn storage_node(&self, owner: &B256, path: &Nibbles) -> TrieResult<Option<Bytes>>;
}

impl<R: NodeReader + ?Sized> NodeReader for &R {
    fn account_node(&self, path: &Nibbles) -> TrieResult<Option<Bytes>> {
        (**self).account_node(path)
    }
    fn storage_node(&self, owner: &B256, path: &Nibbles) -> TrieResult<Option<Bytes>> {
        (**self).storage_node(owner, path)
    }
}

/// A diff on top of a reader: what the reader would return after `diff` was written.
/// Serves pending (not yet sealed) state: intermediate roots and proofs over it.
pub struct Overlay<'a, R> {
    diff: &'a TrieDiff,
    base: R,
}

impl<'a, R: NodeReader> Overlay<'a, R> {
    pub fn new(diff: &'a TrieDiff, base: R) -> Self {
        Self { diff, base }
    }
}

impl<R: NodeReader> NodeReader for Overlay<'_, R> {
    fn account_node(&self, path: &Nibbles) -> TrieResult<Option<Bytes>> {
        match self.diff.accounts.get(path) {
            Some(node) => Ok(node.clone()),
            None => self.base.account_node(path),
        }
    }

    fn storage_node(&self, owner: &B256, path: &Nibbles) -> TrieResult<Option<Bytes>> {
        match self.diff.storage.get(owner).and_then(|nodes| nodes.get(path)) {
            Some(node) => Ok(node.clone()),
            None => self.base.storage_node(owner, path),
        }
    }
}

/// One trie of a reader: the account trie (`owner == None`) or one storage trie.
pub(crate) struct TrieSource<'r, R: ?Sized> {
    pub reader: &'r R,
    pub owner: Option<B256>,
}

impl<R: NodeReader + ?Sized> TrieSource<'_, R> {
    pub fn load(&self, path: &Nibbles) -> TrieResult<Option<Bytes>> {
        match &self.owner {
            None => self.reader.account_node(path),
            Some(owner) => self.reader.storage_node(owner, path),
        }
    }
}
