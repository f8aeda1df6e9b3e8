//! Shared test support: a seeded RNG, real redb databases (memory and file), a reference
//! model of the state with roots computed from scratch by alloy-trie's `HashBuilder`.
#![allow(dead_code)]

pub mod layout;
pub mod model;

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use alloy_primitives::{B256, U256};
use preconf_trie::{state_root, AccountUpdate, TrieDiff, TrieSnapshot, TrieWriter};
use redb::{Database, ReadableDatabase};

/// splitmix64: small, seeded, good enough to drive property tests reproducibly.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed ^ 0x9e37_79b9_7f4a_7c15)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in 0..n.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// True with probability `percent`/100.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    pub fn b256(&mut self) -> B256 {
        let mut b = [0u8; 32];
        for chunk in b.chunks_mut(8) {
            chunk.copy_from_slice(&self.next_u64().to_be_bytes());
        }
        B256::from(b)
    }

    /// A key that shares its first `shared` nibbles with `base` and differs right after.
    pub fn key_near(&mut self, base: &B256, shared: usize) -> B256 {
        let mut key = self.b256();
        for i in 0..shared {
            set_nibble(&mut key, i, nibble(base, i));
        }
        if shared < 64 {
            let differ = (nibble(base, shared) + 1 + self.below(15) as u8) % 16;
            set_nibble(&mut key, shared, differ);
        }
        key
    }

    /// Small values most of the time (their leaves are short enough to be inlined when
    /// keys share long prefixes), large ones sometimes.
    pub fn value(&mut self) -> U256 {
        match self.below(4) {
            0 => U256::from(self.next_u64()) << 128 | U256::from(self.next_u64()),
            _ => U256::from(1 + self.below(300)),
        }
    }
}

pub fn nibble(key: &B256, i: usize) -> u8 {
    let byte = key[i / 2];
    if i.is_multiple_of(2) {
        byte >> 4
    } else {
        byte & 0x0f
    }
}

pub fn set_nibble(key: &mut B256, i: usize, value: u8) {
    let byte = &mut key.0[i / 2];
    *byte = if i.is_multiple_of(2) { (*byte & 0x0f) | (value << 4) } else { (*byte & 0xf0) | value };
}

pub fn memory_db() -> Database {
    Database::builder().create_with_backend(redb::backends::InMemoryBackend::new()).expect("in-memory db")
}

/// A database file in a fresh temporary directory, removed on drop.
pub struct TempDb {
    pub db: Database,
    dir: PathBuf,
}

impl TempDb {
    pub fn new(name: &str) -> Self {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("preconf-trie-{name}-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let db = Database::create(dir.join("trie.redb")).expect("db file");
        TempDb { db, dir }
    }
}

impl Drop for TempDb {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Computes the block's root inside its write transaction, writes the diff, commits.
pub fn commit_block(db: &Database, block: u64, updates: &[AccountUpdate]) -> (B256, TrieDiff) {
    let txn = db.begin_write().unwrap();
    let result = {
        let mut writer = TrieWriter::open(&txn).unwrap();
        let (root, diff) = state_root(&writer, updates).unwrap();
        writer.write_diff(block, &diff).unwrap();
        (root, diff)
    };
    txn.commit().unwrap();
    result
}

/// Computes the root of `updates` on top of the committed head without writing.
pub fn pending_root(db: &Database, updates: &[AccountUpdate]) -> (B256, TrieDiff) {
    let txn = db.begin_read().unwrap();
    let snapshot = TrieSnapshot::open(&txn).unwrap();
    state_root(&snapshot.latest(), updates).unwrap()
}

/// `pending_root`, from tries prefetched along a random part of the updated keys (and of
/// some keys the block does not touch), as the builder does between ticks.
pub fn warm_root(db: &Database, updates: &[AccountUpdate], rng: &mut Rng) -> (B256, TrieDiff) {
    let txn = db.begin_read().unwrap();
    let snapshot = TrieSnapshot::open(&txn).unwrap();
    let reader = snapshot.latest();
    let mut warm = preconf_trie::WarmTries::default();
    for u in updates {
        if rng.chance(70) {
            let slots: Vec<B256> = u.storage.iter().filter(|_| rng.chance(70)).map(|(k, _)| *k).collect();
            warm.prefetch(&reader, &u.hashed_address, &slots).unwrap();
        }
        if rng.chance(10) {
            let elsewhere = B256::from(alloy_primitives::U256::from(rng.next_u64()) << 192);
            warm.prefetch(&reader, &elsewhere, &[B256::with_last_byte(rng.below(256) as u8)]).unwrap();
        }
    }
    preconf_trie::state_root_warm(&reader, updates, warm).unwrap()
}

pub fn prune_to(db: &Database, keep_from: u64) -> preconf_trie::PruneStats {
    let txn = db.begin_write().unwrap();
    let stats = preconf_trie::prune(&txn, keep_from).unwrap();
    txn.commit().unwrap();
    stats
}

pub fn init_tables(db: &Database) {
    let txn = db.begin_write().unwrap();
    preconf_trie::create_tables(&txn).unwrap();
    txn.commit().unwrap();
}
