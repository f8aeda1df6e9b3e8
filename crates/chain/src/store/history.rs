//! Bounded history (`--history-blocks N`): bodies, receipts, the transaction index, change
//! sets and the account/storage history of blocks older than the last N are removed, a
//! bounded amount in each commit, so the store stops growing with the chain.
//!
//! State history is keyed by account, so "what block B changed" is not in those tables. A
//! pruning node records it per block (`history_keys`: the accounts and slots the block
//! wrote). Once B is old enough, every entry of those keys below B is superseded by B's and
//! is deleted; B's own entry stays as the value of every later block until a newer block
//! supersedes it in turn. Reads at `history_from` or later find the same floor entries as
//! before; older reads answer `pruned history unavailable`.

use alloy_primitives::{keccak256, Address, U256};
use redb::{ReadableTable, TableDefinition, WriteTransaction};

use super::codec::{self, StoredBody};
use super::{change_sets, ACCOUNTS, BODIES, META, RECEIPTS, STORAGE, TX_INDEX};
use crate::error::{ChainError, ChainResult, InternalError};

/// block number -> the keys its state history wrote (see `KeyList`).
pub(crate) const HISTORY_KEYS: TableDefinition<u64, &[u8]> = TableDefinition::new("history_keys");
/// The oldest block whose body, receipts and state are complete (absent: 0, an archive).
pub(crate) const META_HISTORY_FROM: &str = "history_from";

const TAG_ACCOUNT: u8 = 0;
const TAG_SLOT: u8 = 1;

/// The keys one block's state history wrote: `0 | address` or `1 | address | slot`.
#[derive(Default)]
pub(crate) struct KeyList(Vec<u8>);

impl KeyList {
    pub fn account(&mut self, address: &Address) {
        self.0.push(TAG_ACCOUNT);
        self.0.extend_from_slice(address.as_slice());
    }

    pub fn slot(&mut self, address: &Address, slot: &U256) {
        self.0.push(TAG_SLOT);
        self.0.extend_from_slice(address.as_slice());
        self.0.extend_from_slice(&slot.to_be_bytes::<32>());
    }

    pub fn bytes(&self) -> &[u8] {
        &self.0
    }
}

/// Bytes the store holds in keys and values, as this transaction changed them.
#[derive(Default, Clone, Copy)]
pub(crate) struct Tally(pub i64);

impl Tally {
    pub fn add(&mut self, key: usize, value: usize) {
        self.0 += (key + value) as i64;
    }
    pub fn sub(&mut self, key: usize, value: usize) {
        self.0 -= (key + value) as i64;
    }
}

/// The oldest block with complete history, as this transaction sees it.
pub(crate) fn history_from(txn: &WriteTransaction) -> ChainResult<u64> {
    Ok(txn.open_table(META)?.get(META_HISTORY_FROM)?.map_or(0, |v| codec::u64_from(v.value())))
}

/// Moves the history window up towards `head + 1 - keep`, by at most `budget` blocks.
pub(crate) fn prune(txn: &WriteTransaction, head: u64, keep: u64, budget: u64, tally: &mut Tally) -> ChainResult<()> {
    let target = (head + 1).saturating_sub(keep.max(1));
    let from = history_from(txn)?;
    if target <= from {
        return Ok(());
    }
    let until = target.min(from + budget.max(1));
    {
        let mut bodies = txn.open_table(BODIES)?;
        let mut receipts = txn.open_table(RECEIPTS)?;
        let mut tx_index = txn.open_table(TX_INDEX)?;
        let mut sets = txn.open_table(change_sets::CHANGE_SETS)?;
        for b in from..until {
            if let Some(body) = bodies.remove(b)? {
                let raw = body.value();
                tally.sub(8, raw.len());
                let decoded: StoredBody = codec::decode(raw).ok_or(InternalError::CorruptBody(b))?;
                for tx in &decoded.txs {
                    if tx_index.remove(&keccak256(&tx.raw).0)?.is_some() {
                        tally.sub(32, 12);
                    }
                }
            }
            if let Some(r) = receipts.remove(b)? {
                tally.sub(8, r.value().len());
            }
            if let Some(s) = sets.remove(b)? {
                tally.sub(8, s.value().len());
            }
        }
    }
    {
        let mut keys = txn.open_table(HISTORY_KEYS)?;
        let mut accounts = txn.open_table(ACCOUNTS)?;
        let mut storage = txn.open_table(STORAGE)?;
        // Each block's list once: blocks up to `from` were done by earlier commits.
        let first = if from == 0 { 0 } else { from + 1 };
        for b in first..=until {
            let Some(list) = keys.remove(b)? else { continue };
            let list = list.value().to_vec();
            tally.sub(8, list.len());
            let mut rest = &list[..];
            while let Some((&tag, tail)) = rest.split_first() {
                let address = Address::from_slice(tail.get(..20).ok_or_else(corrupt)?);
                if tag == TAG_ACCOUNT {
                    let (lo, hi) = (codec::account_key(&address, 0), codec::account_key(&address, b));
                    for entry in accounts.extract_from_if::<&[u8; 28], _>(&lo..&hi, |_, _| true)? {
                        let (k, v) = entry?;
                        tally.sub(k.value().len(), v.value().len());
                    }
                    rest = &tail[20..];
                } else {
                    let slot = U256::from_be_slice(tail.get(20..52).ok_or_else(corrupt)?);
                    let (lo, hi) = (codec::storage_key(&address, &slot, 0), codec::storage_key(&address, &slot, b));
                    for entry in storage.extract_from_if::<&[u8; 60], _>(&lo..&hi, |_, _| true)? {
                        let (k, v) = entry?;
                        tally.sub(k.value().len(), v.value().len());
                    }
                    rest = &tail[52..];
                }
            }
        }
    }
    txn.open_table(META)?.insert(META_HISTORY_FROM, until.to_be_bytes().as_slice())?;
    Ok(())
}

fn corrupt() -> ChainError {
    InternalError::CorruptHistoryKeys.into()
}
