//! Several blocks in flight read as committed; a batch commits in one
//! transaction; bounded history (`set_history_blocks`) keeps every read in its window exact
//! and refuses older ones; a store of an unknown schema stops with one line.

use std::sync::Arc;

use alloy_consensus::Header;
use alloy_primitives::{keccak256, Address, B256, U256};
use preconf_chain::changes::{AccountChange, AccountState, StateChanges};
use preconf_chain::store::codec::StoredTx;
use preconf_chain::store::{InFlightBlock, Store, StoredBody, StoredReceipts};
use preconf_chain::ChainError;

const A: Address = Address::repeat_byte(0xa);
const B: Address = Address::repeat_byte(0xb);

fn account(balance: u64, nonce: u64) -> AccountState {
    AccountState { nonce, balance: U256::from(balance), code_hash: alloy_primitives::KECCAK256_EMPTY }
}

/// Block `n`: A's balance becomes n, slot 1 of A becomes n, and every third block B changes.
fn block_changes(n: u64) -> StateChanges {
    let mut c = StateChanges::default();
    let mut a = AccountChange { info: Some(account(n, n)), ..Default::default() };
    a.storage.insert(U256::from(1), U256::from(n));
    c.accounts.insert(A, a);
    if n.is_multiple_of(3) {
        c.accounts.insert(B, AccountChange { info: Some(account(100 + n, 0)), ..Default::default() });
    }
    c
}

/// Seals blocks `from..=to` on top of the store and its in-flight `tips`, as the builder
/// does: each state root over the trie with the earlier tips laid on it.
fn seal(store: &Store, tips: &mut Vec<Arc<InFlightBlock>>, from: u64, to: u64) {
    for n in from..=to {
        let snapshot = store.snapshot_with_tips(tips.clone()).unwrap();
        let reader = snapshot.trie_reader_at(u64::MAX).unwrap();
        let c = block_changes(n);
        let (state_root, trie) = preconf_chain::store::trie::state_root(&&*reader, &c).unwrap();
        drop(reader);
        let header = Header { number: n, state_root, ..Default::default() };
        // One transaction, indexed under the hash of its bytes as a real one is.
        let raw = alloy_primitives::Bytes::from(vec![n as u8; 8]);
        let tx = keccak256(&raw);
        let body = StoredBody { txs: vec![StoredTx { raw, sender: A }], ..Default::default() };
        let block = InFlightBlock::new(
            header,
            B256::with_last_byte(n as u8),
            body,
            StoredReceipts::default(),
            vec![tx],
            Arc::new(c),
            trie,
        );
        tips.push(Arc::new(block));
    }
}

fn tx_hash(n: u64) -> B256 {
    keccak256([n as u8; 8])
}

fn commit(store: &Store, tips: &mut Vec<Arc<InFlightBlock>>) {
    let writes: Vec<_> = tips.iter().map(|t| t.write()).collect();
    store.commit_blocks(&writes, &[], true).unwrap();
    tips.clear();
}

#[test]
fn several_blocks_in_flight_read_as_they_will_once_committed_in_one_batch() {
    let store = Store::in_memory().unwrap();
    let mut tips = Vec::new();
    seal(&store, &mut tips, 0, 1);
    commit(&store, &mut tips);
    seal(&store, &mut tips, 2, 5);
    let in_flight = store.snapshot_with_tips(tips.clone()).unwrap();
    assert_eq!(in_flight.head(), Some(5));
    assert_eq!(in_flight.durable_head(), Some(1));
    let roots: Vec<B256> = tips.iter().map(|t| t.header.state_root).collect();
    commit(&store, &mut tips);
    let after = store.snapshot().unwrap();
    assert_eq!(after.head(), Some(5));
    for snap in [&in_flight, &after] {
        for n in 0..=5 {
            assert_eq!(snap.account(&A, n).unwrap(), after.account(&A, n).unwrap(), "A at {n}");
            assert_eq!(snap.account(&B, n).unwrap(), after.account(&B, n).unwrap(), "B at {n}");
            assert_eq!(snap.storage(&A, &U256::from(1), n).unwrap(), U256::from(n), "slot at {n}");
            assert_eq!(snap.block_hash(n).unwrap(), Some(B256::with_last_byte(n as u8)));
            assert_eq!(snap.tx_location(&tx_hash(n)).unwrap(), Some((n, 0)));
        }
    }
    // The roots computed over the tips are the committed trie's.
    for (i, root) in roots.iter().enumerate() {
        let n = 2 + i as u64;
        let stored = preconf_chain::store::trie::state_root(&after.trie().at(n).unwrap(), &StateChanges::default());
        assert_eq!(stored.unwrap().0, *root, "root of block {n}");
    }
}

#[test]
fn bounded_history_keeps_its_window_exact_and_refuses_older_reads() {
    let archive = Store::in_memory().unwrap();
    let pruned = Store::in_memory().unwrap();
    pruned.set_history_blocks(4);
    for store in [&archive, &pruned] {
        let mut tips = Vec::new();
        for n in 0..=40 {
            seal(store, &mut tips, n, n);
            // Batches of one and of three blocks.
            if n < 20 || n.is_multiple_of(3) {
                commit(store, &mut tips);
            }
        }
        commit(store, &mut tips);
    }
    let (a, p) = (archive.snapshot().unwrap(), pruned.snapshot().unwrap());
    assert_eq!(a.history_from(), 0);
    assert_eq!(p.history_from(), 37, "the last 4 blocks are kept");
    for n in 37..=40 {
        assert_eq!(p.account(&A, n).unwrap(), a.account(&A, n).unwrap());
        assert_eq!(p.account(&B, n).unwrap(), a.account(&B, n).unwrap(), "B last changed at 36, below the window");
        assert_eq!(p.storage(&A, &U256::from(1), n).unwrap(), a.storage(&A, &U256::from(1), n).unwrap());
        assert!(p.body(n).unwrap().is_some());
        assert_eq!(p.tx_location(&tx_hash(n)).unwrap(), Some((n, 0)));
    }
    for n in [0, 10, 36] {
        let e = p.account(&A, n).unwrap_err();
        assert!(matches!(e, ChainError::Pruned { .. }), "{e}");
        assert!(e.to_string().contains("pruned history unavailable") && e.to_string().contains("from block 37"), "{e}");
        assert!(matches!(p.body(n), Err(ChainError::Pruned { .. })));
        assert_eq!(p.tx_location(&tx_hash(n)).unwrap(), None);
        assert_eq!(p.block_hash(n).unwrap(), Some(B256::with_last_byte(n as u8)), "headers stay");
    }
    // What the store holds: less than the archive (here mostly trie versions, kept 128 blocks either way).
    let (live_a, live_p) = (archive.live_bytes().unwrap(), pruned.live_bytes().unwrap());
    assert!(live_p < live_a, "pruned {live_p} bytes, archive {live_a}");
}

#[test]
fn a_store_of_another_schema_stops_with_one_line_naming_both() {
    let dir = std::env::temp_dir().join(format!("preconf-schema-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    drop(Store::open(&dir, 1 << 20).unwrap());
    {
        let db = redb::Database::open(dir.join("chain.redb")).unwrap();
        let txn = db.begin_write().unwrap();
        let def: redb::TableDefinition<&str, &[u8]> = redb::TableDefinition::new("meta");
        txn.open_table(def).unwrap().insert("schema", b"9".as_slice()).unwrap();
        txn.commit().unwrap();
    }
    let e = Store::open(&dir, 1 << 20).err().expect("schema 9 must not open");
    let line = e.to_string();
    assert!(!line.contains('\n'));
    assert!(
        line.contains("store schema 9") && line.contains("(schema 3;") && line.contains("migrates schema 2"),
        "{line}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
