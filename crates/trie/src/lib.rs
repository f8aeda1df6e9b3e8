//! A Merkle-Patricia state trie persisted in redb.
//!
//! - Nodes are stored under their path from the root and the block that wrote them
//!   (`store`), so the trie as of any retained block is read with one floor lookup per node.
//! - `state_root` computes a block's root from the keys it changed, reading only the nodes on
//!   their paths, and returns the changed nodes as a `TrieDiff` without writing anything.
//! - `TrieWriter::write_diff` stores a diff as block N; `TrieWriter::prune` drops versions
//!   no retained block needs, through a queue keyed by the block that superseded them.
//! - `WarmTries` loads the paths of keys ahead of a root computation (the builder does it
//!   between pre-confirmation ticks); `state_root_warm` then is left with the hashing.
//! - `RunningState` keeps an open block's state trie between roots, so a replica hashes
//!   each pre-confirmation's changes as they arrive and the seal's check only the rest.
//! - `OrderedTrie` keeps a growing block's transactions or receipts trie between roots, so
//!   each pre-confirmation's roots cost only the transactions it added.
//! - `account_proof` builds EIP-1186 proofs from any reader, including an `Overlay` of a
//!   pending diff.
//!
//! See README.md for the layout and the costs.

mod account;
mod diff;
mod error;
mod keys;
mod mpt;
mod ordered;
mod prefetch;
mod proof;
mod reader;
mod running;
mod state;
mod store;

pub use account::{AccountFields, AccountUpdate};
pub use diff::{NodeDiff, TrieDiff};
pub use error::{Owner, TrieError, TrieResult};
pub use ordered::OrderedTrie;
pub use prefetch::WarmTries;
pub use proof::{account_proof, AccountProof, StorageProof};
pub use reader::{NodeReader, Overlay};
pub use running::RunningState;
pub use state::{current_root, state_root, state_root_warm};
pub use store::{
    create_tables, prune, unwind_diff, write_diff, PruneStats, TrieAt, TrieSnapshot, TrieWriter, WriteStats,
    ACCOUNT_NODES, PRUNE_QUEUE, STORAGE_NODES, TRIE_META,
};

pub use alloy_trie::{Nibbles, TrieAccount, EMPTY_ROOT_HASH};
