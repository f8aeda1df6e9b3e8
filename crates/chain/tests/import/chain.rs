//! The whole chain imports: head 54 with the hash the upstream fork choice names, the state
//! geth dumped at the head, receipts in their fork's form, and the fork choice.

use std::time::Duration;

use alloy_consensus::Eip658Value;
use alloy_primitives::{Address, B256, U256};
use preconf_chain::api::blocks::load_block;
use preconf_chain::import::{import_chain, ImportConfig, ImportError, ImportGenesis};

use super::{kit, support};

pub const HEAD_HASH: &str = "0xd226371d0b1551adb03fb52b71f08e3e11247fe9b1af994768af8cdaa8e7dcd7";

#[test]
fn imports_all_54_blocks_to_the_recorded_head() {
    let dir = support::TempDir::new("chain");
    let (store, genesis) = support::open(&dir);
    let (result, reports) = support::import(&store, &genesis, support::file_blocks());
    let done = result.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((done.head, done.imported, done.skipped, done.transactions), (54, 54, 0, 249));
    let snapshot = store.snapshot().unwrap();
    assert_eq!(snapshot.head(), Some(54));
    assert_eq!(snapshot.block_hash(54).unwrap().unwrap().to_string(), HEAD_HASH);
    for block in kit::blocks() {
        let n = block.header.number;
        assert_eq!(snapshot.block_hash(n).unwrap(), Some(block.header.hash_slow()), "hash of block {n}");
    }
    // Reported after every block (interval zero), then once more at the end.
    assert_eq!(reports.len(), 55);
    assert_eq!(reports.iter().map(|r| r.head).take(54).collect::<Vec<_>>(), (1..=54).collect::<Vec<_>>());
    assert!(done.blocks_per_second() > 0.0);
}

#[test]
fn head_state_is_the_one_geth_dumped() {
    let dir = support::TempDir::new("state");
    let (store, genesis) = support::open(&dir);
    support::import(&store, &genesis, support::file_blocks()).0.unwrap();
    let snapshot = store.snapshot().unwrap();
    let text = std::fs::read_to_string(kit::kit_dir().join("chain/headstate.json")).unwrap();
    let dump: serde_json::Value = serde_json::from_str(&text).unwrap();
    let accounts = dump["accounts"].as_object().unwrap();
    assert_eq!(accounts.len(), 114);
    let mut slots = 0;
    for (address, want) in accounts {
        let address: Address = address.parse().unwrap();
        let got = snapshot.account(&address, 54).unwrap().unwrap_or_else(|| panic!("{address} exists"));
        assert_eq!(got.balance, want["balance"].as_str().unwrap().parse::<U256>().unwrap(), "balance of {address}");
        assert_eq!(got.nonce, want["nonce"].as_u64().unwrap(), "nonce of {address}");
        assert_eq!(got.code_hash, want["codeHash"].as_str().unwrap().parse::<B256>().unwrap(), "code of {address}");
        for (slot, value) in want["storage"].as_object().into_iter().flatten() {
            let slot: U256 = slot.parse().unwrap();
            let value = U256::from_str_radix(value.as_str().unwrap(), 16).unwrap();
            assert_eq!(snapshot.storage(&address, &slot, 54).unwrap(), value, "{address} slot {slot}");
            slots += 1;
        }
    }
    assert!(slots > 50, "the dump's storage is compared ({slots} slots)");
}

#[test]
fn receipts_carry_state_roots_before_byzantium_and_status_after() {
    let dir = support::TempDir::new("receipts");
    let (store, genesis) = support::open(&dir);
    support::import(&store, &genesis, support::file_blocks()).0.unwrap();
    let snapshot = store.snapshot().unwrap();
    let mut roots = Vec::new();
    for n in 1..=54u64 {
        let block = load_block(&snapshot, n).unwrap().unwrap();
        for t in &block.txs {
            match t.receipt.status {
                Eip658Value::PostState(root) => {
                    assert!(n < 9, "block {n} is Byzantium: status, not a root");
                    roots.push(root);
                }
                Eip658Value::Eip658(_) => assert!(n >= 9, "block {n} is before Byzantium: a state root"),
            }
        }
        // The last transaction's root is the block's state before the miner's reward.
        let header_root = block.header.state_root;
        if let Some(Eip658Value::PostState(root)) = block.txs.last().map(|t| t.receipt.status) {
            assert_ne!(root, header_root, "block {n}: the reward comes after the last receipt");
        }
    }
    assert!(roots.len() > 59, "block 2 alone has 59 pre-Byzantium receipts, got {}", roots.len());
    let distinct: std::collections::BTreeSet<_> = roots.iter().collect();
    assert_eq!(distinct.len(), roots.len(), "every transaction changes the state");
}

fn config(dir: &support::TempDir, safe: Option<u64>, finalized: Option<u64>) -> ImportConfig {
    ImportConfig {
        datadir: dir.0.clone(),
        genesis: ImportGenesis::File(support::genesis_file(), None),
        blocks_file: kit::chain_file(),
        safe,
        finalized,
        db_cache_bytes: 64 << 20,
        progress_every: Duration::from_secs(1),
    }
}

#[test]
fn fork_choice_is_the_head_unless_named() {
    let dir = support::TempDir::new("forkchoice");
    let summary = import_chain(&config(&dir, None, None), &mut |_| {}).unwrap();
    assert_eq!((summary.progress.head, summary.safe, summary.finalized), (54, 54, 54));
    assert_eq!(summary.head_hash.to_string(), HEAD_HASH);
    // Again on the same datadir: nothing to import, the fork choice as asked.
    let again = import_chain(&config(&dir, Some(50), Some(40)), &mut |_| {}).unwrap();
    assert_eq!((again.progress.imported, again.progress.skipped), (0, 54));
    assert_eq!((again.safe, again.finalized), (50, 40));
    let store = preconf_chain::store::Store::open(&dir.0, 8 << 20).unwrap();
    assert_eq!(store.fork_choice().unwrap(), Some((50, 40)));
    let snapshot = store.snapshot().unwrap();
    assert_eq!((snapshot.safe(), snapshot.finalized()), (Some(50), Some(40)));
    drop((snapshot, store));
    for (safe, finalized) in [(Some(55), None), (Some(40), Some(50)), (None, Some(60))] {
        let e = import_chain(&config(&dir, safe, finalized), &mut |_| {}).unwrap_err();
        let fork_choice = matches!(e, ImportError::FinalizedAfterSafe { .. } | ImportError::ForkChoice { .. });
        assert!(fork_choice, "{safe:?}/{finalized:?}: {e}");
    }
}
