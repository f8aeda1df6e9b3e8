//! The write side: the trie inside the write transaction of a block. Reads see the newest
//! versions including this transaction's own writes, so a large genesis can be imported
//! in chunks: compute a chunk's diff against the transaction, write it, repeat.

use alloy_primitives::{Bytes, B256};
use alloy_trie::Nibbles;
use redb::{ReadableTable, Table, WriteTransaction};

use super::{floor, live, ACCOUNT_NODES, META_OLDEST, PRUNE_QUEUE, STORAGE_NODES, TRIE_META};
use crate::diff::{NodeDiff, TrieDiff};
use crate::error::TrieResult;
use crate::keys::{
    account_key, key_block, queue_key, storage_key, ACCOUNT_KEY_LEN, STORAGE_KEY_LEN, TAG_ACCOUNT, TAG_STORAGE,
};
use crate::reader::NodeReader;

type NodeTable<'txn, const N: usize> = Table<'txn, &'static [u8; N], &'static [u8]>;

/// How many queue entries one pass of `prune` reads before removing them.
const PRUNE_BATCH: usize = 4096;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WriteStats {
    /// Node versions written.
    pub written: u64,
    /// Tombstones written.
    pub removed: u64,
    /// Older versions queued for pruning.
    pub queued: u64,
    /// Bytes of keys and values added to the tables (less what was overwritten).
    pub bytes: i64,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PruneStats {
    pub queue_entries: u64,
    /// Node versions (and tombstones) deleted.
    pub versions_deleted: u64,
    /// Bytes of keys and values deleted (versions and queue entries).
    pub bytes: u64,
}

/// The trie tables opened in one write transaction. Reading through it gives the newest
/// version of every node, uncommitted writes included.
pub struct TrieWriter<'txn> {
    accounts: NodeTable<'txn, ACCOUNT_KEY_LEN>,
    storage: NodeTable<'txn, STORAGE_KEY_LEN>,
    queue: Table<'txn, &'static [u8], ()>,
    meta: Table<'txn, &'static str, u64>,
}

impl<'txn> TrieWriter<'txn> {
    /// Opens (creating if needed) the trie tables. redb allows one open handle per table,
    /// so drop this before opening them another way in the same transaction.
    pub fn open(txn: &'txn WriteTransaction) -> TrieResult<Self> {
        Ok(Self {
            accounts: txn.open_table(ACCOUNT_NODES)?,
            storage: txn.open_table(STORAGE_NODES)?,
            queue: txn.open_table(PRUNE_QUEUE)?,
            meta: txn.open_table(TRIE_META)?,
        })
    }

    /// Writes a diff as the trie of `block`. Blocks must be written in increasing order;
    /// writing the same block again (genesis chunks) overwrites its versions in place.
    pub fn write_diff(&mut self, block: u64, diff: &TrieDiff) -> TrieResult<WriteStats> {
        let mut stats = WriteStats::default();
        let queue = &mut self.queue;
        write_nodes(&mut self.accounts, queue, TAG_ACCOUNT, &diff.accounts, block, &mut stats, account_key)?;
        for (owner, nodes) in &diff.storage {
            let key = |path: &Nibbles, b: u64| storage_key(owner, path, b);
            write_nodes(&mut self.storage, queue, TAG_STORAGE, nodes, block, &mut stats, key)?;
        }
        Ok(stats)
    }

    /// Deletes every version no reader at `keep_from` or later needs, and records
    /// `keep_from` as the oldest available block. Cost: O(entries pruned).
    pub fn prune(&mut self, keep_from: u64) -> TrieResult<PruneStats> {
        let mut stats = PruneStats::default();
        // Queue keys start with the superseding block: everything at or below `keep_from`.
        let end = keep_from.checked_add(1).map(u64::to_be_bytes);
        loop {
            let batch = {
                let range = match &end {
                    Some(end) => self.queue.range::<&[u8]>(..&end[..])?,
                    None => self.queue.range::<&[u8]>(..)?,
                };
                range
                    .take(PRUNE_BATCH)
                    .map(|entry| entry.map(|(k, _)| k.value().to_vec()))
                    .collect::<Result<Vec<_>, _>>()?
            };
            if batch.is_empty() {
                break;
            }
            for entry in &batch {
                self.queue.remove(entry.as_slice())?;
                stats.queue_entries += 1;
                stats.bytes += entry.len() as u64;
                let superseded_at = key_block(&entry[..8]);
                let node_key = &entry[9..];
                let deleted = match entry[8] {
                    TAG_ACCOUNT => delete_version(&mut self.accounts, node_key, superseded_at)?,
                    _ => delete_version(&mut self.storage, node_key, superseded_at)?,
                };
                if let Some(value_len) = deleted {
                    stats.versions_deleted += 1;
                    stats.bytes += (node_key.len() + value_len) as u64;
                }
            }
        }
        if keep_from > self.oldest_available()? {
            self.meta.insert(META_OLDEST, keep_from)?;
        }
        Ok(stats)
    }

    /// The oldest block whose trie is complete.
    pub fn oldest_available(&self) -> TrieResult<u64> {
        Ok(self.meta.get(META_OLDEST)?.map(|v| v.value()).unwrap_or(0))
    }
}

impl NodeReader for TrieWriter<'_> {
    fn account_node(&self, path: &Nibbles) -> TrieResult<Option<Bytes>> {
        Ok(live(floor(&self.accounts, &account_key(path, 0), &account_key(path, u64::MAX))?))
    }

    fn storage_node(&self, owner: &B256, path: &Nibbles) -> TrieResult<Option<Bytes>> {
        let (from, to) = (storage_key(owner, path, 0), storage_key(owner, path, u64::MAX));
        Ok(live(floor(&self.storage, &from, &to)?))
    }
}

/// `TrieWriter::open(txn)?.write_diff(block, diff)`.
pub fn write_diff(txn: &WriteTransaction, block: u64, diff: &TrieDiff) -> TrieResult<WriteStats> {
    TrieWriter::open(txn)?.write_diff(block, diff)
}

/// `TrieWriter::open(txn)?.prune(keep_from)`.
pub fn prune(txn: &WriteTransaction, keep_from: u64) -> TrieResult<PruneStats> {
    TrieWriter::open(txn)?.prune(keep_from)
}

fn write_nodes<const N: usize>(
    table: &mut NodeTable<'_, N>,
    queue: &mut Table<'_, &'static [u8], ()>,
    tag: u8,
    nodes: &NodeDiff,
    block: u64,
    stats: &mut WriteStats,
    key: impl Fn(&Nibbles, u64) -> [u8; N],
) -> TrieResult<()> {
    for (path, node) in nodes {
        let at = key(path, block);
        let previous = floor(table, &key(path, 0), &at)?;
        let node = node.as_ref().map(|b| &b[..]);
        match (&previous, node) {
            // Already absent: nothing to record.
            (None, None) => continue,
            (Some((_, old)), None) if old.is_empty() => continue,
            // Unchanged bytes: the existing version serves.
            (Some((_, old)), Some(new)) if old.as_ref() == new => continue,
            _ => {}
        }
        if let Some((version, _)) = previous {
            if version < block {
                let q = queue_key(block, tag, &key(path, version));
                if queue.insert(q.as_slice(), ())?.is_none() {
                    stats.bytes += q.len() as i64;
                }
                stats.queued += 1;
            }
        }
        let value = node.unwrap_or(&[]);
        match table.insert(&at, value)? {
            Some(old) => stats.bytes += value.len() as i64 - old.value().len() as i64,
            None => stats.bytes += (N + value.len()) as i64,
        }
        match node {
            Some(_) => stats.written += 1,
            None => {
                // The tombstone itself goes once no reader can see what it hides.
                let q = queue_key(block, tag, &at);
                if queue.insert(q.as_slice(), ())?.is_none() {
                    stats.bytes += q.len() as i64;
                }
                stats.removed += 1;
            }
        }
    }
    Ok(())
}

/// Deletes a queued version; `Some(value length)` when one was deleted. An entry whose
/// version is its own queue block is a tombstone's; it is deleted only while it still is
/// a tombstone (the same block may have written a node over it).
fn delete_version<const N: usize>(
    table: &mut NodeTable<'_, N>,
    node_key: &[u8],
    queued_at: u64,
) -> TrieResult<Option<usize>> {
    let Ok(node_key) = <&[u8; N]>::try_from(node_key) else {
        return Ok(None);
    };
    if key_block(node_key) == queued_at {
        let is_tombstone = table.get(node_key)?.is_some_and(|v| v.value().is_empty());
        if !is_tombstone {
            return Ok(None);
        }
    }
    Ok(table.remove(node_key)?.map(|v| v.value().len()))
}

/// Takes block `block`'s versions back out of the trie: every node `diff` (the diff that
/// block wrote, computed again over its parent) names at `block`, and the prune-queue
/// entries the block made. The caller unwinds from the newest block down, so that the
/// versions the block superseded are visible again.
pub fn unwind_diff(txn: &WriteTransaction, block: u64, diff: &TrieDiff) -> TrieResult<()> {
    let mut w = TrieWriter::open(txn)?;
    for path in diff.accounts.keys() {
        w.accounts.remove(&account_key(path, block))?;
    }
    for (owner, nodes) in &diff.storage {
        for path in nodes.keys() {
            w.storage.remove(&storage_key(owner, path, block))?;
        }
    }
    let (from, to) = (block.to_be_bytes(), (block + 1).to_be_bytes());
    let queued = w
        .queue
        .range::<&[u8]>(&from[..]..&to[..])?
        .map(|entry| entry.map(|(k, _)| k.value().to_vec()))
        .collect::<Result<Vec<_>, _>>()?;
    for key in queued {
        w.queue.remove(key.as_slice())?;
    }
    Ok(())
}
