//! Taking the newest blocks back out of the store: a consensus client's forkchoice moved the
//! head to an earlier block, or to a sibling of one (derivation replaces unsafe blocks).
//!
//! The history tables are keyed by account, so what a block wrote is read from its change
//! set (kept by a node the Engine API drives); the trie nodes it wrote are those its change
//! set gives over its parent's trie, computed again. Blocks go newest first, so each one's
//! parent trie is whole when it is read. Everything goes in one durable transaction: a crash
//! leaves the store before or after the unwind, never in between.

use alloy_primitives::{keccak256, B256};
use redb::ReadableTable;

use super::{
    change_sets::CHANGE_SETS, codec, history::HISTORY_KEYS, trie, Store, ACCOUNTS, BODIES, HASHES, HEADERS, META,
    META_FINALIZED, META_HEAD, META_SAFE, NUMBERS, RECEIPTS, STORAGE, TX_INDEX,
};
use crate::error::{ChainResult, InternalError};

impl Store {
    /// Drops every block after `to`; `to` becomes the head. Every dropped block must have its
    /// change set (`change_sets_from`), and `to` must be within the trie's kept history.
    pub fn unwind_to(&self, to: u64) -> ChainResult<()> {
        self.unwind_to_with_meta(to, &[])
    }

    /// `unwind_to`, writing `meta` in the same transaction (a replica's stream position).
    pub fn unwind_to_with_meta(&self, to: u64, extra: &[(&str, &[u8])]) -> ChainResult<()> {
        let snapshot = self.snapshot()?;
        let Some(head) = snapshot.head() else { return Ok(()) };
        if to >= head {
            return Ok(());
        }
        let mut txn = self.db.begin_write()?;
        txn.set_durability(redb::Durability::Immediate)?;
        for number in (to + 1..=head).rev() {
            let changes = self.change_set(number)?.ok_or(InternalError::MissingBlock(number))?;
            let (_, diff) = trie::state_root(&snapshot.trie().at(number - 1)?, &changes)?;
            let hash = snapshot.block_hash(number)?.unwrap_or_default();
            let body = snapshot.body(number)?.unwrap_or_default();
            let tx_hashes: Vec<B256> = body.txs.iter().map(|t| keccak256(&t.raw)).collect();
            txn.open_table(HEADERS)?.remove(number)?;
            txn.open_table(HASHES)?.remove(number)?;
            txn.open_table(NUMBERS)?.remove(&hash.0)?;
            txn.open_table(BODIES)?.remove(number)?;
            txn.open_table(RECEIPTS)?.remove(number)?;
            txn.open_table(CHANGE_SETS)?.remove(number)?;
            txn.open_table(HISTORY_KEYS)?.remove(number)?;
            {
                let mut index = txn.open_table(TX_INDEX)?;
                for h in &tx_hashes {
                    let here = index.get(&h.0)?.is_some_and(|v| codec::decode_tx_location(v.value()).0 == number);
                    if here {
                        index.remove(&h.0)?;
                    }
                }
            }
            {
                let mut accounts = txn.open_table(ACCOUNTS)?;
                let mut storage = txn.open_table(STORAGE)?;
                for (address, change) in &changes.accounts {
                    accounts.remove(&codec::account_key(address, number))?;
                    for slot in change.storage.keys() {
                        storage.remove(&codec::storage_key(address, slot, number))?;
                    }
                    if change.storage_wiped {
                        // The wipe zeroed every slot the account held at this block.
                        let mut from = [0u8; 60];
                        from[..20].copy_from_slice(address.as_slice());
                        let mut to_key = [0xffu8; 60];
                        to_key[..20].copy_from_slice(address.as_slice());
                        let written: Vec<[u8; 60]> = storage
                            .range::<&[u8; 60]>(&from..=&to_key)?
                            .filter_map(|e| e.ok().map(|(k, _)| *k.value()))
                            .filter(|k| codec::u64_from(&k[52..]) == number)
                            .collect();
                        for key in written {
                            storage.remove(&key)?;
                        }
                    }
                }
            }
            preconf_trie::unwind_diff(&txn, number, &diff)?;
        }
        {
            let mut meta = txn.open_table(META)?;
            meta.insert(META_HEAD, to.to_be_bytes().as_slice())?;
            meta.remove(META_SAFE)?;
            meta.remove(META_FINALIZED)?;
            for (key, value) in extra {
                meta.insert(*key, *value)?;
            }
        }
        txn.commit()?;
        Ok(())
    }
}
