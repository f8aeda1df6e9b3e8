//! Typed failures of the trie.

use alloy_primitives::B256;
use alloy_trie::Nibbles;

/// Which trie a node belongs to: the account trie, or the storage trie of one account.
pub type Owner = Option<B256>;

#[derive(Debug, thiserror::Error)]
pub enum TrieError {
    /// The redb store failed.
    #[error("trie store: {0}")]
    Store(#[from] redb::Error),
    /// A parent references a node that the reader does not have: the reader's block has
    /// been pruned, or the store is inconsistent.
    #[error("trie node missing: {} at path {path:?}", owner_name(owner))]
    MissingNode { owner: Owner, path: Nibbles },
    /// Stored bytes are not a valid trie node (or not the node the parent references).
    #[error("trie node corrupt: {} at path {path:?}: {reason}", owner_name(owner))]
    CorruptNode { owner: Owner, path: Nibbles, reason: String },
    /// The caller asked for a block whose trie versions have been pruned.
    #[error("state of block {block} is no longer available: trie history goes back to block {oldest}")]
    Pruned { block: u64, oldest: u64 },
    /// `state_root` received two updates for the same account.
    #[error("account {0} appears twice in one state update")]
    DuplicateAccount(B256),
}

fn owner_name(owner: &Owner) -> String {
    match owner {
        None => "account trie".to_string(),
        Some(a) => format!("storage trie of {a}"),
    }
}

pub type TrieResult<T> = Result<T, TrieError>;

macro_rules! from_redb {
    ($($t:ty),*) => {$(
        impl From<$t> for TrieError {
            fn from(e: $t) -> Self {
                TrieError::Store(e.into())
            }
        }
    )*};
}
from_redb!(redb::StorageError, redb::TableError);
