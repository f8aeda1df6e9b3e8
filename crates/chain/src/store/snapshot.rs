//! A read view of the store with its tables opened once. History is append-only, so one
//! snapshot answers reads at its own head and at every earlier block; the builder takes a
//! new one after each sealed block and readers keep whichever they started with.

use alloy_consensus::Header;
use alloy_primitives::{Address, Bytes, B256, U256};
use alloy_rlp::Decodable;
use redb::{ReadOnlyTable, ReadTransaction, ReadableTable};

use super::codec::{self, StoredBody, StoredReceipts};
use super::*;
use crate::state::changes::AccountState;

pub struct StoreSnapshot {
    head: Option<u64>,
    /// `safe` and `finalized` as an import set them (`Store::set_fork_choice`).
    safe: Option<u64>,
    finalized: Option<u64>,
    /// The state trie as committed (proofs at the head and recent blocks).
    trie: preconf_trie::TrieSnapshot,
    headers: ReadOnlyTable<u64, &'static [u8]>,
    hashes: ReadOnlyTable<u64, &'static [u8; 32]>,
    numbers: ReadOnlyTable<&'static [u8; 32], u64>,
    bodies: ReadOnlyTable<u64, &'static [u8]>,
    receipts: ReadOnlyTable<u64, &'static [u8]>,
    tx_index: ReadOnlyTable<&'static [u8; 32], &'static [u8; 12]>,
    accounts: ReadOnlyTable<&'static [u8; 28], &'static [u8]>,
    storage: ReadOnlyTable<&'static [u8; 60], &'static [u8; 32]>,
    codes: ReadOnlyTable<&'static [u8; 32], &'static [u8]>,
}

impl StoreSnapshot {
    pub(super) fn new(txn: ReadTransaction) -> ChainResult<Self> {
        let meta = txn.open_table(META)?;
        let head = meta.get(META_HEAD)?.map(|v| codec::u64_from(v.value()));
        let safe = meta.get(META_SAFE)?.map(|v| codec::u64_from(v.value()));
        let finalized = meta.get(META_FINALIZED)?.map(|v| codec::u64_from(v.value()));
        Ok(Self {
            head,
            safe,
            finalized,
            trie: preconf_trie::TrieSnapshot::open(&txn)?,
            headers: txn.open_table(HEADERS)?,
            hashes: txn.open_table(HASHES)?,
            numbers: txn.open_table(NUMBERS)?,
            bodies: txn.open_table(BODIES)?,
            receipts: txn.open_table(RECEIPTS)?,
            tx_index: txn.open_table(TX_INDEX)?,
            accounts: txn.open_table(ACCOUNTS)?,
            storage: txn.open_table(STORAGE)?,
            codes: txn.open_table(CODES)?,
        })
    }

    pub fn trie(&self) -> &preconf_trie::TrieSnapshot {
        &self.trie
    }

    /// The newest block this snapshot holds.
    pub fn head(&self) -> Option<u64> {
        self.head
    }

    /// The `safe` block an import named, if the store has one (see `Store::set_fork_choice`).
    pub fn safe(&self) -> Option<u64> {
        self.safe
    }

    /// The `finalized` block an import named, if the store has one.
    pub fn finalized(&self) -> Option<u64> {
        self.finalized
    }

    /// The account as of the end of `block`; `None` when it does not exist.
    pub fn account(&self, address: &Address, block: u64) -> ChainResult<Option<AccountState>> {
        let from = codec::account_key(address, 0);
        let to = codec::account_key(address, block);
        let mut range = self.accounts.range::<&[u8; 28]>(&from..=&to)?;
        match range.next_back() {
            Some(entry) => Ok(codec::decode_account(entry?.1.value())),
            None => Ok(None),
        }
    }

    /// The slot's value as of the end of `block`.
    pub fn storage(&self, address: &Address, slot: &U256, block: u64) -> ChainResult<U256> {
        let from = codec::storage_key(address, slot, 0);
        let to = codec::storage_key(address, slot, block);
        let mut range = self.storage.range::<&[u8; 60]>(&from..=&to)?;
        match range.next_back() {
            Some(entry) => Ok(U256::from_be_bytes(*entry?.1.value())),
            None => Ok(U256::ZERO),
        }
    }

    pub fn code(&self, hash: &B256) -> ChainResult<Option<Bytes>> {
        Ok(self.codes.get(&hash.0)?.map(|v| Bytes::copy_from_slice(v.value())))
    }

    pub fn header(&self, number: u64) -> ChainResult<Option<Header>> {
        match self.headers.get(number)? {
            Some(v) => Header::decode(&mut v.value())
                .map(Some)
                .map_err(|e| ChainError::Internal(format!("corrupt header {number}: {e}"))),
            None => Ok(None),
        }
    }

    pub fn block_hash(&self, number: u64) -> ChainResult<Option<B256>> {
        Ok(self.hashes.get(number)?.map(|v| B256::from(*v.value())))
    }

    pub fn block_number(&self, hash: &B256) -> ChainResult<Option<u64>> {
        Ok(self.numbers.get(&hash.0)?.map(|v| v.value()))
    }

    pub fn body(&self, number: u64) -> ChainResult<Option<StoredBody>> {
        match self.bodies.get(number)? {
            Some(v) => {
                codec::decode(v.value()).map(Some).ok_or_else(|| ChainError::Internal(format!("corrupt body {number}")))
            }
            None => Ok(None),
        }
    }

    pub fn receipts(&self, number: u64) -> ChainResult<Option<StoredReceipts>> {
        match self.receipts.get(number)? {
            Some(v) => codec::decode(v.value())
                .map(Some)
                .ok_or_else(|| ChainError::Internal(format!("corrupt receipts {number}"))),
            None => Ok(None),
        }
    }

    /// Where a transaction was included: (block number, index).
    pub fn tx_location(&self, hash: &B256) -> ChainResult<Option<(u64, u32)>> {
        Ok(self.tx_index.get(&hash.0)?.map(|v| codec::decode_tx_location(v.value())))
    }
}

/// Slots of `address` whose newest value is non-zero.
pub(super) fn live_slots(
    table: &impl ReadableTable<&'static [u8; 60], &'static [u8; 32]>,
    address: &Address,
) -> ChainResult<Vec<U256>> {
    let mut from = [0u8; 60];
    from[..20].copy_from_slice(address.as_slice());
    let mut to = [0xffu8; 60];
    to[..20].copy_from_slice(address.as_slice());
    let mut live = Vec::new();
    let mut current: Option<(U256, bool)> = None;
    for entry in table.range::<&[u8; 60]>(&from..=&to)? {
        let (key, value) = entry?;
        let slot = U256::from_be_slice(&key.value()[20..52]);
        let nonzero = value.value() != &[0u8; 32];
        if let Some((s, nz)) = current {
            if s != slot && nz {
                live.push(s);
            }
        }
        current = Some((slot, nonzero));
    }
    if let Some((s, true)) = current {
        live.push(s);
    }
    Ok(live)
}
