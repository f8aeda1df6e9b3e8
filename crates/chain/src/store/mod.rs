//! The on-disk chain: headers, bodies, receipts, the state history and the state trie,
//! in one redb file.
//!
//! Archive design: state is stored as history, never overwritten. Every block appends the
//! values it changed under keys `(address, block)` and `(address, slot, block)`, big-endian,
//! so the value of anything as of block N is one floor lookup: the last entry whose key is
//! `<= (address, slot, N)`. Reads at the head and at any past block take the same path, and
//! a block's writes never disturb readers of earlier blocks. The Merkle-Patricia trie is
//! persisted node by node (crates/trie) in the same write transaction as its block, so the
//! state root never needs the whole state in memory. (docs/storage.md explains why.)

pub mod change_sets;
pub mod codec;
mod fork_choice;
mod fork_side;
pub mod genesis;
mod history;
mod in_flight;
mod memory_backend;
mod rewind;
mod snapshot;
mod sorted;
pub mod trie;
mod unwind;
pub mod verify;
mod walk;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use alloy_consensus::Header;
use alloy_primitives::{B256, U256};
use alloy_rlp::Encodable;
use redb::{Database, Durability, ReadableDatabase, ReadableTable, TableDefinition};

pub use codec::{StoredBody, StoredReceipts};
pub use fork_side::{Upstream, META_FORK};
pub(crate) use history::META_HISTORY_FROM;
use history::{KeyList, Tally, HISTORY_KEYS};
pub use in_flight::InFlightBlock;
pub use rewind::StoreSavepoint;
pub use snapshot::StoreSnapshot;

use preconf_trie::TrieDiff;

use crate::changes::StateChanges;
use crate::error::{Cause, ChainError, ChainResult, ConfigError, InternalError};

pub(crate) const META: TableDefinition<&str, &[u8]> = TableDefinition::new("meta");
pub(crate) const HEADERS: TableDefinition<u64, &[u8]> = TableDefinition::new("headers");
pub(crate) const HASHES: TableDefinition<u64, &[u8; 32]> = TableDefinition::new("block_hashes");
pub(crate) const NUMBERS: TableDefinition<&[u8; 32], u64> = TableDefinition::new("block_numbers");
pub(crate) const BODIES: TableDefinition<u64, &[u8]> = TableDefinition::new("bodies");
pub(crate) const RECEIPTS: TableDefinition<u64, &[u8]> = TableDefinition::new("receipts");
/// tx hash -> (block number BE, index BE)
pub(crate) const TX_INDEX: TableDefinition<&[u8; 32], &[u8; 12]> = TableDefinition::new("tx_index");
/// (address, block BE) -> account state, empty when the account does not exist
pub(crate) const ACCOUNTS: TableDefinition<&[u8; 28], &[u8]> = TableDefinition::new("account_history");
/// (address, slot, block BE) -> value
pub(crate) const STORAGE: TableDefinition<&[u8; 60], &[u8; 32]> = TableDefinition::new("storage_history");
pub(crate) const CODES: TableDefinition<&[u8; 32], &[u8]> = TableDefinition::new("codes");

const META_HEAD: &str = "head";
const META_GENESIS: &str = "genesis_hash";
/// The genesis file without its alloc (chain config and header fields), as JSON: a datadir
/// knows its chain without the genesis file.
const META_SPEC: &str = "genesis_spec";
const META_SCHEMA: &str = "schema";
/// The `safe` and `finalized` blocks an import named (absent: the head, and the head minus
/// `--finality-depth`). Writing a block clears them: from then on the node's own rules apply.
pub(crate) const META_SAFE: &str = "safe";
pub(crate) const META_FINALIZED: &str = "finalized";
/// Bytes of keys and values the store holds (`preconf_store_live_bytes`), kept up to date
/// by every write: the file only grows (redb reuses freed pages), so its size cannot show
/// a pruned store staying flat.
const META_LIVE_BYTES: &str = "live_bytes";
/// 3: `history_keys`, `history_from` and `live_bytes` (bounded history). A version-2 store
/// is migrated on open: the new table starts empty and the live bytes are counted once.
const SCHEMA_VERSION: &[u8] = b"3";
const SCHEMA_MIGRATES_FROM: &[u8] = b"2";
/// redb's page cache over an in-memory store. The pages are in memory already; the cache
/// only spares hot pages a copy per read, and a large one would hold the state twice.
const MEMORY_CACHE_BYTES: usize = 16 << 20;

/// One sealed block as the store writes it.
pub struct BlockWrite<'a> {
    pub header: &'a Header,
    pub hash: B256,
    pub body: &'a StoredBody,
    pub receipts: &'a StoredReceipts,
    pub tx_hashes: &'a [B256],
    pub changes: &'a StateChanges,
    /// The state trie nodes the block changed (`trie::state_root` over the parent).
    pub trie: &'a TrieDiff,
}

/// The store's pages: a redb file, or memory (`--ephemeral`).
enum Backing {
    File(PathBuf),
    Memory(memory_backend::SparseMemoryBackend),
}

pub struct Store {
    db: Database,
    /// Where redb keeps its pages.
    backing: Backing,
    /// Write each block's change set too (`change_sets`): set on a node that publishes.
    keep_change_sets: AtomicBool,
    /// `--history-blocks`: keep this many blocks of history (0: everything, an archive).
    history_blocks: AtomicU64,
    /// A forked chain's upstream: answers for the state never written locally.
    upstream: parking_lot::RwLock<Option<Upstream>>,
}

impl Store {
    /// Opens (or creates) the store in `datadir`, with `cache_bytes` of page cache (redb's
    /// cache is what the store's memory grows to, whatever the size of the state).
    pub fn open(datadir: &Path, cache_bytes: usize) -> ChainResult<Self> {
        std::fs::create_dir_all(datadir)
            .map_err(|e| ConfigError::CreateDatadir { dir: datadir.to_path_buf(), source: Cause::new(e) })?;
        let path = datadir.join("chain.redb");
        let told = AtomicBool::new(false);
        let db = Database::builder()
            .set_cache_size(cache_bytes)
            .set_repair_callback(move |_| {
                if !told.swap(true, Ordering::Relaxed) {
                    crate::log::warn(
                        "store",
                        "the store was not closed cleanly (a crash or kill -9): checking the whole file, \
                         which takes a while on a large state",
                        serde_json::json!({}),
                    );
                }
            })
            .create(&path)
            .map_err(|e| ConfigError::OpenStore { path: path.clone(), source: Cause::new(e) })?;
        Self::init(db, Backing::File(path))
    }

    /// A store that lives in memory only (`--ephemeral`), in chunks taken as redb writes
    /// them (`memory_backend`).
    pub fn in_memory() -> ChainResult<Self> {
        let memory = memory_backend::SparseMemoryBackend::default();
        let db = Database::builder().set_cache_size(MEMORY_CACHE_BYTES).create_with_backend(memory.clone())?;
        Self::init(db, Backing::Memory(memory))
    }

    fn init(db: Database, backing: Backing) -> ChainResult<Self> {
        let txn = db.begin_write()?;
        create_tables(&txn)?;
        txn.commit()?;
        Ok(Self {
            db,
            backing,
            keep_change_sets: Default::default(),
            history_blocks: AtomicU64::new(0),
            upstream: Default::default(),
        })
    }

    /// `--history-blocks`: from now on keep the last `blocks` blocks of history and prune
    /// older ones as blocks are committed (0: keep everything).
    pub fn set_history_blocks(&self, blocks: u64) {
        self.history_blocks.store(blocks, Ordering::Relaxed);
    }

    /// Bytes of keys and values the store holds (not its file's size, which grows in steps
    /// and never shrinks).
    pub fn live_bytes(&self) -> ChainResult<u64> {
        let txn = self.db.begin_read()?;
        let meta = txn.open_table(META)?;
        Ok(meta.get(META_LIVE_BYTES)?.map_or(0, |v| codec::u64_from(v.value())))
    }

    /// One last, empty commit that records redb's allocator state, so that the next open
    /// loads it instead of walking the whole file. JavaScript owns the node and the process
    /// exits without dropping the database, which redb cannot tell from a crash: without
    /// this, every restart would cost a scan of the whole store, O(state).
    pub fn checkpoint_for_restart(&self) -> ChainResult<()> {
        let mut txn = self.db.begin_write()?;
        txn.set_quick_repair(true);
        txn.commit()?;
        Ok(())
    }

    /// Size of the store: its file, or the memory an in-memory store holds.
    pub fn size_bytes(&self) -> Option<u64> {
        match &self.backing {
            Backing::File(path) => std::fs::metadata(path).ok().map(|m| m.len()),
            Backing::Memory(memory) => Some(memory.resident_bytes()),
        }
    }

    /// A consistent read view of everything committed so far.
    pub fn snapshot(&self) -> ChainResult<Arc<StoreSnapshot>> {
        Ok(Arc::new(StoreSnapshot::new(self.db.begin_read()?)?.with_upstream(self.upstream())))
    }

    /// A snapshot of everything committed so far with `tip`, the sealed block being
    /// committed, on top.
    pub fn snapshot_with_tip(&self, tip: Arc<InFlightBlock>) -> ChainResult<Arc<StoreSnapshot>> {
        self.snapshot_with_tips(vec![tip])
    }

    /// A snapshot of everything committed so far with `tips`, sealed blocks still being
    /// committed (consecutive, oldest first), on top.
    pub fn snapshot_with_tips(&self, tips: Vec<Arc<InFlightBlock>>) -> ChainResult<Arc<StoreSnapshot>> {
        Ok(Arc::new(StoreSnapshot::new(self.db.begin_read()?)?.with_upstream(self.upstream()).with_tips(tips)))
    }

    /// The genesis hash the store was created with, if any block was written.
    pub fn genesis_hash(&self) -> ChainResult<Option<B256>> {
        let txn = self.db.begin_read()?;
        let meta = txn.open_table(META)?;
        Ok(meta.get(META_GENESIS)?.map(|v| B256::from_slice(v.value())))
    }

    /// The number of the newest sealed block, if any.
    pub fn head(&self) -> ChainResult<Option<u64>> {
        let txn = self.db.begin_read()?;
        let meta = txn.open_table(META)?;
        Ok(meta.get(META_HEAD)?.map(|v| codec::u64_from(v.value())))
    }

    /// A `meta` entry written with `commit_block_with_meta`.
    pub fn meta(&self, key: &str) -> ChainResult<Option<Vec<u8>>> {
        let txn = self.db.begin_read()?;
        let meta = txn.open_table(META)?;
        Ok(meta.get(key)?.map(|v| v.value().to_vec()))
    }

    /// The stored genesis spec (chain config and header fields, no alloc), as JSON.
    pub fn genesis_spec(&self) -> ChainResult<Option<String>> {
        let txn = self.db.begin_read()?;
        let meta = txn.open_table(META)?;
        Ok(meta.get(META_SPEC)?.map(|v| String::from_utf8_lossy(v.value()).into_owned()))
    }

    /// The state root after `changes` on top of the newest stored block, and the trie
    /// nodes it changed: O(changes × trie depth), whatever the size of the state.
    pub fn state_root(&self, changes: &StateChanges) -> ChainResult<(B256, TrieDiff)> {
        let txn = self.db.begin_read()?;
        let trie = preconf_trie::TrieSnapshot::open(&txn)?;
        trie::state_root(&trie.latest(), changes)
    }

    /// Writes a sealed block, its state changes and its trie nodes in one durable
    /// transaction, and prunes trie versions older than the kept history.
    pub fn commit_block(&self, block: BlockWrite<'_>) -> ChainResult<()> {
        self.commit_block_with_meta(block, &[], true)
    }

    /// `commit_block`, with `meta` entries written in the same transaction (a replica's
    /// stream position: durable exactly when the block is). Not `durable`: no fsync; the
    /// block becomes durable with the next durable commit, and a crash before it rolls the
    /// store back to the last durable one (a replica catching up re-reads the stream).
    pub fn commit_block_with_meta(
        &self,
        block: BlockWrite<'_>,
        meta: &[(&str, &[u8])],
        durable: bool,
    ) -> ChainResult<()> {
        self.commit_blocks(std::slice::from_ref(&block), meta, durable)
    }

    /// Writes consecutive sealed blocks in one transaction (a committer that fell behind
    /// catches up with one fsync), then prunes what the kept history no longer needs.
    pub fn commit_blocks(&self, blocks: &[BlockWrite<'_>], meta: &[(&str, &[u8])], durable: bool) -> ChainResult<()> {
        let Some(newest) = blocks.last().map(|b| b.header.number) else { return Ok(()) };
        let mut txn = self.db.begin_write()?;
        let durability = if durable { Durability::Immediate } else { Durability::None };
        txn.set_durability(durability)?;
        let keep = self.history_blocks.load(Ordering::Relaxed);
        let mut tally = Tally::default();
        for block in blocks {
            let number = block.header.number;
            let mut keys = (keep > 0).then(KeyList::default);
            write_block(&txn, block, keys.as_mut(), &mut tally)?;
            if let Some(keys) = keys {
                tally.add(8, keys.bytes().len());
                txn.open_table(HISTORY_KEYS)?.insert(number, keys.bytes())?;
            }
            if self.keep_change_sets.load(Ordering::Relaxed) {
                tally.0 += change_sets::write(&txn, number, block.changes)? as i64;
            }
            tally.0 += preconf_trie::write_diff(&txn, number, block.trie)?.bytes;
        }
        if !meta.is_empty() {
            let mut table = txn.open_table(META)?;
            for (key, value) in meta {
                table.insert(*key, *value)?;
            }
        }
        let pruned = preconf_trie::prune(&txn, newest.saturating_sub(trie::TRIE_HISTORY))?;
        tally.0 -= pruned.bytes as i64;
        if keep > 0 {
            // Two blocks of history for each block written: a window that fell behind (a
            // restart with a smaller N) catches up without holding up any one commit.
            history::prune(&txn, newest, keep, 2 * blocks.len() as u64, &mut tally)?;
        }
        add_live_bytes(&txn, tally)?;
        txn.commit()?;
        Ok(())
    }

    /// Where the genesis import spills its sorted runs: beside the store's file, or a fresh
    /// temporary directory for a store in memory.
    pub(crate) fn scratch_dir(&self) -> PathBuf {
        match &self.backing {
            Backing::File(path) => path.with_file_name("genesis-import.tmp"),
            Backing::Memory(_) => {
                static NEXT: AtomicU64 = AtomicU64::new(0);
                let n = NEXT.fetch_add(1, Ordering::Relaxed);
                std::env::temp_dir().join(format!("preconf-genesis-{}-{n}", std::process::id()))
            }
        }
    }

    /// A write transaction for the genesis import (see `genesis::GenesisWriter`).
    pub(crate) fn begin_genesis(&self) -> ChainResult<redb::WriteTransaction> {
        let mut txn = self.db.begin_write()?;
        txn.set_durability(Durability::Immediate)?;
        Ok(txn)
    }
}

/// Creates every table that is missing, and checks (or records, or migrates) the schema
/// version: at open, and after a wipe (`anvil_reset`).
fn create_tables(txn: &redb::WriteTransaction) -> ChainResult<()> {
    // Every table, so readers never meet a missing one.
    let mut meta = txn.open_table(META)?;
    txn.open_table(HEADERS)?;
    txn.open_table(HASHES)?;
    txn.open_table(NUMBERS)?;
    txn.open_table(BODIES)?;
    txn.open_table(RECEIPTS)?;
    txn.open_table(TX_INDEX)?;
    txn.open_table(ACCOUNTS)?;
    txn.open_table(STORAGE)?;
    txn.open_table(CODES)?;
    txn.open_table(change_sets::CHANGE_SETS)?;
    txn.open_table(HISTORY_KEYS)?;
    preconf_trie::create_tables(txn)?;
    let schema = meta.get(META_SCHEMA)?.map(|v| v.value().to_vec());
    match schema {
        None => {
            meta.insert(META_SCHEMA, SCHEMA_VERSION)?;
            meta.insert(META_LIVE_BYTES, 0u64.to_be_bytes().as_slice())?;
        }
        Some(v) if v == SCHEMA_VERSION => {}
        Some(v) if v == SCHEMA_MIGRATES_FROM => {
            drop(meta);
            migrate_from_2(txn)?;
        }
        Some(v) => return Err(schema_mismatch(&v)),
    }
    Ok(())
}

/// Everything of a block but its trie: header, body, receipts, index, state history, head;
/// `keys` collects what the state history wrote (for pruning).
fn write_block(
    txn: &redb::WriteTransaction,
    block: &BlockWrite<'_>,
    keys: Option<&mut KeyList>,
    tally: &mut Tally,
) -> ChainResult<()> {
    let number = block.header.number;
    let mut header_rlp = Vec::with_capacity(600);
    block.header.encode(&mut header_rlp);
    let body = codec::encode(block.body);
    let receipts = codec::encode_receipts(block.receipts).ok_or(InternalError::ReceiptToStore(number))?;
    txn.open_table(HEADERS)?.insert(number, header_rlp.as_slice())?;
    txn.open_table(HASHES)?.insert(number, &block.hash.0)?;
    txn.open_table(NUMBERS)?.insert(&block.hash.0, number)?;
    txn.open_table(BODIES)?.insert(number, body.as_slice())?;
    txn.open_table(RECEIPTS)?.insert(number, receipts.as_slice())?;
    tally.add(8, header_rlp.len() + body.len() + receipts.len() + 8 + 32 + 32 + 8 + 8 + 8);
    let mut tx_index = txn.open_table(TX_INDEX)?;
    for (i, hash) in block.tx_hashes.iter().enumerate() {
        if tx_index.insert(&hash.0, &codec::tx_location(number, i as u32))?.is_none() {
            tally.add(32, 12);
        }
    }
    drop(tx_index);
    write_state(txn, number, block.changes, keys, tally)?;
    let mut meta = txn.open_table(META)?;
    meta.insert(META_HEAD, number.to_be_bytes().as_slice())?;
    meta.remove(META_SAFE)?;
    meta.remove(META_FINALIZED)?;
    if number == 0 || meta.get(META_GENESIS)?.is_none() {
        meta.insert(META_GENESIS, block.hash.as_slice())?;
    }
    Ok(())
}

/// Appends one block's state changes to the history tables.
fn write_state(
    txn: &redb::WriteTransaction,
    number: u64,
    changes: &StateChanges,
    mut keys: Option<&mut KeyList>,
    tally: &mut Tally,
) -> ChainResult<()> {
    let mut accounts = txn.open_table(ACCOUNTS)?;
    let mut storage = txn.open_table(STORAGE)?;
    let mut codes = txn.open_table(CODES)?;
    for (hash, code) in &changes.codes {
        if codes.insert(&hash.0, code.as_ref())?.is_none() {
            tally.add(32, code.len());
        }
    }
    for (address, change) in &changes.accounts {
        let encoded = change.info.map(|s| codec::encode_account(&s)).unwrap_or_default();
        if accounts.insert(&codec::account_key(address, number), encoded.as_slice())?.is_none() {
            tally.add(28, encoded.len());
        }
        if let Some(keys) = keys.as_deref_mut() {
            keys.account(address);
        }
        let mut slots: Vec<(U256, [u8; 32])> = Vec::new();
        if change.storage_wiped {
            // Zero every slot the account held, so floor lookups at later blocks see them cleared.
            let live = snapshot::live_slots(&storage, address)?;
            slots.extend(live.into_iter().filter(|s| !change.storage.contains_key(s)).map(|s| (s, [0u8; 32])));
        }
        slots.extend(change.storage.iter().map(|(slot, value)| (*slot, value.to_be_bytes::<32>())));
        for (slot, value) in &slots {
            if storage.insert(&codec::storage_key(address, slot, number), value)?.is_none() {
                tally.add(60, 32);
            }
            if let Some(keys) = keys.as_deref_mut() {
                keys.slot(address, slot);
            }
        }
    }
    Ok(())
}

/// Adds a transaction's change to `META_LIVE_BYTES`.
fn add_live_bytes(txn: &redb::WriteTransaction, tally: Tally) -> ChainResult<()> {
    let mut meta = txn.open_table(META)?;
    let before = meta.get(META_LIVE_BYTES)?.map_or(0, |v| codec::u64_from(v.value()));
    meta.insert(META_LIVE_BYTES, before.saturating_add_signed(tally.0).to_be_bytes().as_slice())?;
    Ok(())
}

/// Opening a store of `found`'s schema: one line naming both versions.
fn schema_mismatch(found: &[u8]) -> ChainError {
    let text = |v: &[u8]| String::from_utf8_lossy(v).into_owned();
    ConfigError::Schema { found: text(found), supported: text(SCHEMA_VERSION), migrates: text(SCHEMA_MIGRATES_FROM) }
        .into()
}

/// Schema 2 -> 3: the new table exists already (`init`); the live bytes are counted once
/// (a walk of every table: O(store), this one time).
fn migrate_from_2(txn: &redb::WriteTransaction) -> ChainResult<()> {
    let stored = txn.stats()?.stored_bytes();
    let mut meta = txn.open_table(META)?;
    meta.insert(META_LIVE_BYTES, stored.to_be_bytes().as_slice())?;
    meta.insert(META_SCHEMA, SCHEMA_VERSION)?;
    Ok(())
}
