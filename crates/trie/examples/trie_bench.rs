//! State-scaling micro-benchmark of the persisted trie (run with --release):
//!
//!   cargo run --release -p preconf-trie --example trie_bench -- [accounts...] [--slots N] [--blocks N] [--no-sync]
//!
//! For each size: streams a genesis of that many accounts in chunks of 50,000 (block 0,
//! reader = the write transaction), checks its root against alloy-trie's HashBuilder over
//! the same leaves, then seals blocks of 1,000 new accounts + 1,000 updated accounts and
//! reports the time to compute the root, write the diff and commit. `--slots N` also
//! imports one contract with N storage slots. `--no-sync` commits blocks without fsync
//! (Durability::None), to tell the cost of the sync from the cost of the page writes.
//! `--prefetch` loads the changed keys' paths first (timed apart), as the builder does
//! between ticks, and times the root over that cache.

use std::time::{Duration, Instant};

use alloy_primitives::{keccak256, B256, KECCAK256_EMPTY, U256};
use alloy_trie::{HashBuilder, Nibbles, TrieAccount, EMPTY_ROOT_HASH};
use preconf_trie::{state_root, state_root_warm, AccountFields, AccountUpdate, TrieSnapshot, TrieWriter, WarmTries};
use redb::{Database, Durability, ReadableDatabase};

const CHUNK: u64 = 50_000;

/// Key i of n: sorted in i and spread over the key space like hashes.
fn key(i: u64, n: u64) -> B256 {
    let step = U256::MAX / U256::from(n);
    let offset = U256::from_be_bytes(keccak256(i.to_be_bytes()).0) % step;
    B256::from(U256::from(i) * step + offset)
}

fn fields(i: u64, version: u64) -> AccountFields {
    AccountFields { nonce: version, balance: U256::from(i) * U256::from(1_000_000_007u64), code_hash: KECCAK256_EMPTY }
}

fn account(hashed_address: B256, fields: AccountFields) -> AccountUpdate {
    AccountUpdate { hashed_address, account: Some(fields), storage_wiped: false, storage: vec![] }
}

fn peak_rss_mib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap_or("VmHWM: 0 kB");
    line.split_whitespace().nth(1).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0) / 1024
}

fn open_db(dir: &std::path::Path) -> Database {
    std::fs::create_dir_all(dir).unwrap();
    Database::builder().set_cache_size(256 << 20).create(dir.join("trie.redb")).unwrap()
}

/// Streams `chunks` through one write transaction as block 0 and commits it.
fn import(db: &Database, chunks: impl Iterator<Item = Vec<AccountUpdate>>) -> B256 {
    let mut txn = db.begin_write().unwrap();
    txn.set_durability(Durability::Immediate).unwrap();
    let mut root = EMPTY_ROOT_HASH;
    {
        let mut writer = TrieWriter::open(&txn).unwrap();
        for chunk in chunks {
            let (r, diff) = state_root(&writer, &chunk).unwrap();
            writer.write_diff(0, &diff).unwrap();
            root = r;
        }
    }
    txn.commit().unwrap();
    root
}

fn reference_root(n: u64) -> B256 {
    let mut builder = HashBuilder::default();
    for i in 0..n {
        let f = fields(i, 0);
        let leaf = alloy_rlp::encode(TrieAccount::new(f.nonce, f.balance, EMPTY_ROOT_HASH, f.code_hash));
        builder.add_leaf(Nibbles::unpack(key(i, n)), &leaf);
    }
    builder.root()
}

fn bench_accounts(n: u64, blocks: u64, durability: Durability, prefetch_first: bool) {
    let dir = std::env::temp_dir().join(format!("trie-bench-{}-{n}", std::process::id()));
    let db = open_db(&dir);
    let start = Instant::now();
    let chunks = (0..n)
        .step_by(CHUNK as usize)
        .map(|from| (from..(from + CHUNK).min(n)).map(|i| account(key(i, n), fields(i, 0))).collect::<Vec<_>>());
    let root = import(&db, chunks);
    let genesis = start.elapsed();
    assert_eq!(root, reference_root(n), "genesis root differs from HashBuilder");
    println!("accounts {n:>9}: genesis import {:>8.2?} (root verified), peak RSS {} MiB", genesis, peak_rss_mib());

    let mut compute = Vec::new();
    let mut write = Vec::new();
    let mut commit = Vec::new();
    let mut prefetch = Vec::new();
    let mut nodes = 0;
    for block in 1..=blocks {
        let mut updates: Vec<AccountUpdate> =
            (0..1_000).map(|j| account(keccak256((block * 1_000_000 + j).to_be_bytes()), fields(j, 1))).collect();
        let stride = (n / 1_000).max(1);
        updates.extend((0..1_000.min(n)).map(|j| {
            let i = (j * stride + block) % n;
            account(key(i, n), fields(i, block))
        }));
        if prefetch_first {
            // The builder's way: the paths are loaded ahead of the seal, through a read
            // snapshot of the parent; the root then reads only the cache.
            let read = db.begin_read().unwrap();
            let snapshot = TrieSnapshot::open(&read).unwrap();
            let reader = snapshot.latest();
            let mut warm = WarmTries::default();
            let p0 = Instant::now();
            for u in &updates {
                warm.prefetch(&reader, &u.hashed_address, &[]).unwrap();
            }
            prefetch.push(p0.elapsed());
            let r0 = Instant::now();
            let (_, diff) = state_root_warm(&reader, &updates, warm).unwrap();
            compute.push(r0.elapsed());
            drop(snapshot);
            drop(read);
            let mut txn = db.begin_write().unwrap();
            txn.set_durability(durability).unwrap();
            let t1 = Instant::now();
            let mut writer = TrieWriter::open(&txn).unwrap();
            writer.write_diff(block, &diff).unwrap();
            drop(writer);
            let t2 = Instant::now();
            txn.commit().unwrap();
            write.push(t2 - t1);
            commit.push(t2.elapsed());
            nodes += diff.len();
            continue;
        }
        let mut txn = db.begin_write().unwrap();
        txn.set_durability(durability).unwrap();
        let t0 = Instant::now();
        let mut writer = TrieWriter::open(&txn).unwrap();
        let (_, diff) = state_root(&writer, &updates).unwrap();
        let t1 = Instant::now();
        writer.write_diff(block, &diff).unwrap();
        drop(writer);
        let t2 = Instant::now();
        txn.commit().unwrap();
        compute.push(t1 - t0);
        write.push(t2 - t1);
        commit.push(t2.elapsed());
        nodes += diff.len();
    }
    let file = std::fs::metadata(dir.join("trie.redb")).map(|m| m.len() >> 20).unwrap_or(0);
    println!(
        "accounts {n:>9}: block of 1,000 new + 1,000 updated: root {} | write {} | commit {} ({} nodes/block), file {file} MiB",
        summary(&compute),
        summary(&write),
        summary(&commit),
        nodes / blocks as usize,
    );
    if prefetch_first {
        println!("accounts {n:>9}: prefetch before the root {}", summary(&prefetch));
    }
    drop(db);
    let _ = std::fs::remove_dir_all(&dir);
}

fn bench_slots(n: u64) {
    let dir = std::env::temp_dir().join(format!("trie-bench-slots-{}-{n}", std::process::id()));
    let db = open_db(&dir);
    let contract = keccak256(b"contract");
    let value = |i: u64| U256::from(i + 1);
    let start = Instant::now();
    let chunks = (0..n).step_by(CHUNK as usize).map(|from| {
        let storage = (from..(from + CHUNK).min(n)).map(|i| (key(i, n), value(i))).collect();
        vec![AccountUpdate { hashed_address: contract, account: Some(fields(0, 1)), storage_wiped: false, storage }]
    });
    let root = import(&db, chunks);
    let elapsed = start.elapsed();
    let mut builder = HashBuilder::default();
    for i in 0..n {
        builder.add_leaf(Nibbles::unpack(key(i, n)), &alloy_rlp::encode(value(i)));
    }
    let f = fields(0, 1);
    let leaf = alloy_rlp::encode(TrieAccount::new(f.nonce, f.balance, builder.root(), f.code_hash));
    let mut state = HashBuilder::default();
    state.add_leaf(Nibbles::unpack(contract), &leaf);
    assert_eq!(root, state.root(), "storage genesis root differs from HashBuilder");
    println!("slots    {n:>9}: genesis import {:>8.2?} (root verified), peak RSS {} MiB", elapsed, peak_rss_mib());
    drop(db);
    let _ = std::fs::remove_dir_all(&dir);
}

fn summary(samples: &[Duration]) -> String {
    let mut sorted = samples.to_vec();
    sorted.sort();
    format!("p50 {:>7.2?} max {:>7.2?}", sorted[sorted.len() / 2], sorted[sorted.len() - 1])
}

fn main() {
    let mut sizes = Vec::new();
    let mut slots = None;
    let mut blocks = 10;
    let mut durability = Durability::Immediate;
    let mut prefetch_first = false;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--slots" => slots = args.next().and_then(|v| v.parse().ok()),
            "--no-sync" => durability = Durability::None,
            "--prefetch" => prefetch_first = true,
            "--blocks" => blocks = args.next().and_then(|v| v.parse().ok()).unwrap_or(blocks),
            n => sizes.push(n.parse::<u64>().expect("account count")),
        }
    }
    if sizes.is_empty() && slots.is_none() {
        sizes = vec![10_000, 100_000, 1_000_000];
        slots = Some(1_000_000);
    }
    for n in sizes {
        bench_accounts(n, blocks, durability, prefetch_first);
    }
    if let Some(n) = slots {
        bench_slots(n);
    }
}
