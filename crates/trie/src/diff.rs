//! `TrieDiff`: the nodes one state-root computation wrote and removed, by path. It is
//! computed read-only and written separately (`TrieWriter::write_diff`), so roots of
//! blocks that are never committed, and proofs over them (`Overlay`), cost no write.

use std::collections::BTreeMap;

use alloy_primitives::{Bytes, B256};
use alloy_trie::Nibbles;

/// Node changes of one trie: path -> new node RLP, or `None` when the path lost its node.
pub type NodeDiff = BTreeMap<Nibbles, Option<Bytes>>;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TrieDiff {
    pub accounts: NodeDiff,
    /// Storage tries by hashed address.
    pub storage: BTreeMap<B256, NodeDiff>,
}

impl TrieDiff {
    /// Folds a diff computed on top of this one (through an `Overlay` of it) into it, so
    /// that the result applies to this diff's base.
    pub fn merge(&mut self, later: TrieDiff) {
        self.accounts.extend(later.accounts);
        for (owner, nodes) in later.storage {
            self.storage.entry(owner).or_default().extend(nodes);
        }
    }

    /// Number of node entries (writes and removals).
    pub fn len(&self) -> usize {
        self.accounts.len() + self.storage.values().map(|n| n.len()).sum::<usize>()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
