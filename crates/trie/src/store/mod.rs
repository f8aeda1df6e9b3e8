//! The trie's redb tables and the read view of a committed snapshot.
//!
//! Every node is stored under its path from the root and the block that wrote it; an empty
//! value is a removal (tombstone). Reading "the trie as of block N" is one floor lookup per
//! node: the last version at or below N. Versions a block makes obsolete are listed in a
//! prune queue keyed by that block, so pruning never scans the node tables.

mod writer;

use alloy_primitives::{Bytes, B256};
use alloy_trie::Nibbles;
use redb::{ReadOnlyTable, ReadTransaction, ReadableTable, TableDefinition, WriteTransaction};

use crate::error::{TrieError, TrieResult};
use crate::keys::{account_key, key_block, storage_key, ACCOUNT_KEY_LEN, STORAGE_KEY_LEN};
use crate::reader::NodeReader;

pub use writer::{prune, unwind_diff, write_diff, PruneStats, TrieWriter, WriteStats};

/// (packed path, path length, block) -> node RLP, empty = removed at that block
pub const ACCOUNT_NODES: TableDefinition<&[u8; ACCOUNT_KEY_LEN], &[u8]> = TableDefinition::new("trie_account_nodes");
/// (hashed address, packed path, path length, block) -> node RLP, empty = removed
pub const STORAGE_NODES: TableDefinition<&[u8; STORAGE_KEY_LEN], &[u8]> = TableDefinition::new("trie_storage_nodes");
/// (superseding block, table tag, node key) -> (): versions to delete once no reader needs them
pub const PRUNE_QUEUE: TableDefinition<&[u8], ()> = TableDefinition::new("trie_prune_queue");
/// "oldest_block" -> the oldest block whose trie is still complete
pub const TRIE_META: TableDefinition<&str, u64> = TableDefinition::new("trie_meta");

pub(crate) const META_OLDEST: &str = "oldest_block";

/// Creates the trie's tables, so read snapshots can open them before the first block.
pub fn create_tables(txn: &WriteTransaction) -> TrieResult<()> {
    txn.open_table(ACCOUNT_NODES)?;
    txn.open_table(STORAGE_NODES)?;
    txn.open_table(PRUNE_QUEUE)?;
    txn.open_table(TRIE_META)?;
    Ok(())
}

/// The newest version of a node at or below the upper key: (its block, its bytes).
pub(crate) fn floor<const N: usize, T>(table: &T, from: &[u8; N], to: &[u8; N]) -> TrieResult<Option<(u64, Bytes)>>
where
    T: ReadableTable<&'static [u8; N], &'static [u8]>,
{
    let mut range = table.range::<&[u8; N]>(from..=to)?;
    match range.next_back() {
        None => Ok(None),
        Some(entry) => {
            let (key, value) = entry?;
            Ok(Some((key_block(key.value()), Bytes::copy_from_slice(value.value()))))
        }
    }
}

/// A node as a reader sees it: absent, or removed by a tombstone, are both `None`.
pub(crate) fn live(version: Option<(u64, Bytes)>) -> Option<Bytes> {
    version.map(|(_, bytes)| bytes).filter(|bytes| !bytes.is_empty())
}

/// The trie tables of one committed read transaction, opened once. Answers for any block
/// from `oldest_available()` to the snapshot's head.
pub struct TrieSnapshot {
    accounts: ReadOnlyTable<&'static [u8; ACCOUNT_KEY_LEN], &'static [u8]>,
    storage: ReadOnlyTable<&'static [u8; STORAGE_KEY_LEN], &'static [u8]>,
    oldest: u64,
}

impl TrieSnapshot {
    /// Needs the tables to exist (`create_tables`, or any committed `TrieWriter`).
    pub fn open(txn: &ReadTransaction) -> TrieResult<Self> {
        let oldest = txn.open_table(TRIE_META)?.get(META_OLDEST)?.map(|v| v.value()).unwrap_or(0);
        Ok(Self { accounts: txn.open_table(ACCOUNT_NODES)?, storage: txn.open_table(STORAGE_NODES)?, oldest })
    }

    /// The oldest block whose trie is complete: older versions may have been pruned.
    pub fn oldest_available(&self) -> u64 {
        self.oldest
    }

    /// The trie as of the end of `block`; `TrieError::Pruned` when it is no longer complete.
    pub fn at(&self, block: u64) -> TrieResult<TrieAt<'_>> {
        if block < self.oldest {
            return Err(TrieError::Pruned { block, oldest: self.oldest });
        }
        Ok(TrieAt { snapshot: self, block })
    }

    /// The newest trie in this snapshot.
    pub fn latest(&self) -> TrieAt<'_> {
        TrieAt { snapshot: self, block: u64::MAX }
    }
}

/// A `TrieSnapshot` read as of one block.
#[derive(Clone, Copy)]
pub struct TrieAt<'a> {
    snapshot: &'a TrieSnapshot,
    block: u64,
}

impl TrieAt<'_> {
    pub fn block(&self) -> u64 {
        self.block
    }
}

impl NodeReader for TrieAt<'_> {
    fn account_node(&self, path: &Nibbles) -> TrieResult<Option<Bytes>> {
        let found = floor(&self.snapshot.accounts, &account_key(path, 0), &account_key(path, self.block))?;
        Ok(live(found))
    }

    fn storage_node(&self, owner: &B256, path: &Nibbles) -> TrieResult<Option<Bytes>> {
        let from = storage_key(owner, path, 0);
        let found = floor(&self.snapshot.storage, &from, &storage_key(owner, path, self.block))?;
        Ok(live(found))
    }
}
