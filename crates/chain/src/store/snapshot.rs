//! A read view of the store with its tables opened once. History is append-only, so one
//! snapshot answers reads at its own head and at every earlier block; the builder takes a
//! new one after each sealed block and readers keep whichever they started with. A
//! snapshot may carry one sealed block that is still being committed (`InFlightBlock`):
//! it answers for that block from memory, as the store will once the commit lands.

use std::sync::Arc;

use alloy_consensus::Header;
use alloy_primitives::{Address, Bytes, B256, U256};
use alloy_rlp::Decodable;
use redb::{ReadOnlyTable, ReadTransaction, ReadableTable};

use super::codec::{self, StoredBody, StoredReceipts};
use super::in_flight::InFlightBlock;
use super::*;
use crate::changes::AccountState;

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
    /// The sealed block after `head` that the committer is writing, if any.
    tip: Option<Arc<InFlightBlock>>,
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
            tip: None,
        })
    }

    /// This snapshot with `tip` on top. The commit may already have landed when the
    /// snapshot was taken: the tip then answers exactly what the tables would.
    pub(super) fn with_tip(mut self, tip: Arc<InFlightBlock>) -> Self {
        self.tip = Some(tip);
        self
    }

    /// The block still being committed, if any.
    pub fn tip(&self) -> Option<&Arc<InFlightBlock>> {
        self.tip.as_ref()
    }

    /// The in-flight block when a read at `block` includes it.
    fn tip_at(&self, block: u64) -> Option<&InFlightBlock> {
        self.tip.as_deref().filter(|t| block >= t.number())
    }

    fn tip_numbered(&self, number: u64) -> Option<&InFlightBlock> {
        self.tip.as_deref().filter(|t| t.number() == number)
    }

    pub fn trie(&self) -> &preconf_trie::TrieSnapshot {
        &self.trie
    }

    /// The newest block this snapshot holds.
    pub fn head(&self) -> Option<u64> {
        match &self.tip {
            Some(t) => Some(t.number()),
            None => self.head,
        }
    }

    /// The `safe` block an import named, if the store has one (see `Store::set_fork_choice`).
    pub fn safe(&self) -> Option<u64> {
        // Writing a block clears an import's fork choice; the in-flight one will too.
        self.safe.filter(|_| self.tip.is_none())
    }

    /// The `finalized` block an import named, if the store has one.
    pub fn finalized(&self) -> Option<u64> {
        self.finalized.filter(|_| self.tip.is_none())
    }

    /// The account as of the end of `block`; `None` when it does not exist.
    pub fn account(&self, address: &Address, block: u64) -> ChainResult<Option<AccountState>> {
        if let Some(known) = self.tip_at(block).and_then(|t| t.changes.account(address)) {
            return Ok(known);
        }
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
        if let Some(known) = self.tip_at(block).and_then(|t| t.changes.storage(address, slot)) {
            return Ok(known);
        }
        let from = codec::storage_key(address, slot, 0);
        let to = codec::storage_key(address, slot, block);
        let mut range = self.storage.range::<&[u8; 60]>(&from..=&to)?;
        match range.next_back() {
            Some(entry) => Ok(U256::from_be_bytes(*entry?.1.value())),
            None => Ok(U256::ZERO),
        }
    }

    /// Every slot the account has written up to the end of `block` (zeroed ones included:
    /// read the values with [`Self::storage`]).
    pub fn storage_slots(&self, address: &Address, block: u64) -> ChainResult<Vec<U256>> {
        let mut from = [0u8; 60];
        from[..20].copy_from_slice(address.as_slice());
        let mut to = [0xffu8; 60];
        to[..20].copy_from_slice(address.as_slice());
        let mut slots = Vec::new();
        for entry in self.storage.range::<&[u8; 60]>(&from..=&to)? {
            let key = *entry?.0.value();
            let written = u64::from_be_bytes(key[52..].try_into().expect("8 bytes"));
            let slot = U256::from_be_slice(&key[20..52]);
            if written <= block && slots.last() != Some(&slot) {
                slots.push(slot);
            }
        }
        if let Some(change) = self.tip_at(block).and_then(|t| t.changes.accounts.get(address)) {
            slots.extend(change.storage.keys().copied());
        }
        Ok(slots)
    }

    pub fn code(&self, hash: &B256) -> ChainResult<Option<Bytes>> {
        if let Some(code) = self.tip.as_ref().and_then(|t| t.changes.codes.get(hash)) {
            return Ok(Some(code.clone()));
        }
        Ok(self.codes.get(&hash.0)?.map(|v| Bytes::copy_from_slice(v.value())))
    }

    pub fn header(&self, number: u64) -> ChainResult<Option<Header>> {
        if let Some(t) = self.tip_numbered(number) {
            return Ok(Some(t.header.clone()));
        }
        match self.headers.get(number)? {
            Some(v) => Header::decode(&mut v.value())
                .map(Some)
                .map_err(|e| ChainError::Internal(format!("corrupt header {number}: {e}"))),
            None => Ok(None),
        }
    }

    pub fn block_hash(&self, number: u64) -> ChainResult<Option<B256>> {
        if let Some(t) = self.tip_numbered(number) {
            return Ok(Some(t.hash));
        }
        Ok(self.hashes.get(number)?.map(|v| B256::from(*v.value())))
    }

    pub fn block_number(&self, hash: &B256) -> ChainResult<Option<u64>> {
        if let Some(t) = self.tip.as_deref().filter(|t| t.hash == *hash) {
            return Ok(Some(t.number()));
        }
        Ok(self.numbers.get(&hash.0)?.map(|v| v.value()))
    }

    pub fn body(&self, number: u64) -> ChainResult<Option<StoredBody>> {
        if let Some(t) = self.tip_numbered(number) {
            return Ok(Some(t.body.clone()));
        }
        match self.bodies.get(number)? {
            Some(v) => {
                codec::decode(v.value()).map(Some).ok_or_else(|| ChainError::Internal(format!("corrupt body {number}")))
            }
            None => Ok(None),
        }
    }

    pub fn receipts(&self, number: u64) -> ChainResult<Option<StoredReceipts>> {
        if let Some(t) = self.tip_numbered(number) {
            return Ok(Some(t.receipts.clone()));
        }
        match self.receipts.get(number)? {
            Some(v) => codec::decode(v.value())
                .map(Some)
                .ok_or_else(|| ChainError::Internal(format!("corrupt receipts {number}"))),
            None => Ok(None),
        }
    }

    /// Where a transaction was included: (block number, index).
    pub fn tx_location(&self, hash: &B256) -> ChainResult<Option<(u64, u32)>> {
        if let Some((t, i)) = self.tip.as_deref().and_then(|t| t.tx_index.get(hash).map(|i| (t, *i))) {
            return Ok(Some((t.number(), i)));
        }
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
