//! A read view of the store with its tables opened once. History is append-only, so one
//! snapshot answers reads at its own head and at every earlier block; the builder takes a
//! new one after each sealed block and readers keep whichever they started with. A
//! snapshot may carry sealed blocks that are still being committed (`InFlightBlock`s, the
//! tips): it answers for them from memory, as the store will once their commit lands.

use std::sync::Arc;

use alloy_consensus::Header;
use alloy_primitives::{Address, Bytes, B256, U256};
use alloy_rlp::Decodable;
use redb::{ReadOnlyTable, ReadTransaction, ReadableTable};

use super::codec::{self, StoredBody, StoredReceipts};
use super::in_flight::InFlightBlock;
use super::*;
use crate::changes::AccountState;
use crate::error::{UpstreamError, UpstreamFailure};

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
    /// The oldest block whose bodies, receipts and state history are kept (`--history-blocks`).
    history_from: u64,
    /// The sealed blocks after `head` that the committer is writing, oldest first.
    tips: Vec<Arc<InFlightBlock>>,
    /// A forked chain's upstream, for what the tables never held.
    upstream: Option<Upstream>,
}

impl StoreSnapshot {
    pub(super) fn new(txn: ReadTransaction) -> ChainResult<Self> {
        let meta = txn.open_table(META)?;
        let head = meta.get(META_HEAD)?.map(|v| codec::u64_from(v.value()));
        let safe = meta.get(META_SAFE)?.map(|v| codec::u64_from(v.value()));
        let finalized = meta.get(META_FINALIZED)?.map(|v| codec::u64_from(v.value()));
        let history_from = meta.get(META_HISTORY_FROM)?.map_or(0, |v| codec::u64_from(v.value()));
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
            history_from,
            tips: Vec::new(),
            upstream: None,
        })
    }

    pub(super) fn with_upstream(mut self, upstream: Option<Upstream>) -> Self {
        self.upstream = upstream;
        self
    }

    /// A forked chain's upstream, when reads at `block` may fall through to it; a read
    /// before the fork block is refused (the upstream's history is not served here).
    fn upstream_at(&self, block: u64) -> ChainResult<Option<&Upstream>> {
        match &self.upstream {
            Some(u) if block < u.fork_block => Err(UpstreamError {
                upstream: u.source.upstream(),
                failure: UpstreamFailure::BeforeFork { block, fork: u.fork_block },
            }
            .into()),
            other => Ok(other.as_ref()),
        }
    }

    /// This snapshot with `tips` (consecutive, oldest first) on top. Their commits may
    /// have landed when the snapshot was taken: a tip then answers what the tables would.
    pub(super) fn with_tips(mut self, tips: Vec<Arc<InFlightBlock>>) -> Self {
        // Tips the snapshot already holds answer the same from the tables.
        let head = self.head;
        self.tips = tips.into_iter().filter(|t| head.is_none_or(|h| t.number() > h)).collect();
        self
    }

    /// The account history table, for walks over the whole state (walk.rs).
    pub(super) fn accounts_table(&self) -> &ReadOnlyTable<&'static [u8; 28], &'static [u8]> {
        &self.accounts
    }

    /// The storage history table, for walks over the whole state (walk.rs).
    pub(super) fn storage_table(&self) -> &ReadOnlyTable<&'static [u8; 60], &'static [u8; 32]> {
        &self.storage
    }

    /// The blocks still being committed, oldest first.
    pub fn tips(&self) -> &[Arc<InFlightBlock>] {
        &self.tips
    }

    /// The in-flight blocks a read at `block` includes, newest first.
    fn tips_at(&self, block: u64) -> impl Iterator<Item = &InFlightBlock> {
        self.tips.iter().rev().map(|t| &**t).filter(move |t| t.number() <= block)
    }

    fn tip_numbered(&self, number: u64) -> Option<&InFlightBlock> {
        let first = self.tips.first()?.number();
        let t = self.tips.get(number.checked_sub(first)? as usize)?;
        Some(&**t).filter(|t| t.number() == number)
    }

    /// The state trie as of `block` (a stored one or an in-flight one), with the in-flight
    /// blocks up to it laid over the committed trie.
    pub fn trie_reader_at(&self, block: u64) -> ChainResult<Box<dyn preconf_trie::NodeReader + '_>> {
        let tips: Vec<&InFlightBlock> = self.tips.iter().map(|t| &**t).filter(|t| t.number() <= block).collect();
        if tips.is_empty() {
            return Ok(Box::new(self.trie.at(block)?));
        }
        Ok(Box::new(TipsTrie { tips, base: self.trie.latest() }))
    }

    /// The oldest block whose bodies, receipts and state are kept (0 on an archive node).
    pub fn history_from(&self) -> u64 {
        self.history_from
    }

    /// Fails with `Pruned` when `block`'s state or body is older than the kept history.
    pub fn check_history(&self, block: u64) -> ChainResult<()> {
        if block < self.history_from {
            return Err(ChainError::Pruned { block, from: self.history_from });
        }
        Ok(())
    }

    pub fn trie(&self) -> &preconf_trie::TrieSnapshot {
        &self.trie
    }

    /// The newest block this snapshot holds.
    pub fn head(&self) -> Option<u64> {
        match self.tips.last() {
            Some(t) => Some(t.number()),
            None => self.head,
        }
    }

    /// The newest block the store holds durably.
    pub fn durable_head(&self) -> Option<u64> {
        self.head
    }

    /// The `safe` block an import named, if the store has one (see `Store::set_fork_choice`).
    pub fn safe(&self) -> Option<u64> {
        // Writing a block clears an import's fork choice; the in-flight ones will too.
        self.safe.filter(|_| self.tips.is_empty())
    }

    /// The `finalized` block an import named, if the store has one.
    pub fn finalized(&self) -> Option<u64> {
        self.finalized.filter(|_| self.tips.is_empty())
    }

    /// The account as of the end of `block`; `None` when it does not exist.
    pub fn account(&self, address: &Address, block: u64) -> ChainResult<Option<AccountState>> {
        if let Some(known) = self.tips_at(block).find_map(|t| t.changes.account(address)) {
            return Ok(known);
        }
        self.check_history(block)?;
        let from = codec::account_key(address, 0);
        let to = codec::account_key(address, block);
        let mut range = self.accounts.range::<&[u8; 28]>(&from..=&to)?;
        match range.next_back() {
            Some(entry) => Ok(codec::decode_account(entry?.1.value())),
            None => match self.upstream_at(block)? {
                Some(u) => u.source.account(address),
                None => Ok(None),
            },
        }
    }

    /// The slot's value as of the end of `block`.
    pub fn storage(&self, address: &Address, slot: &U256, block: u64) -> ChainResult<U256> {
        if let Some(known) = self.tips_at(block).find_map(|t| t.changes.storage(address, slot)) {
            return Ok(known);
        }
        self.check_history(block)?;
        let from = codec::storage_key(address, slot, 0);
        let to = codec::storage_key(address, slot, block);
        let mut range = self.storage.range::<&[u8; 60]>(&from..=&to)?;
        match range.next_back() {
            Some(entry) => Ok(U256::from_be_bytes(*entry?.1.value())),
            None => match self.upstream_at(block)? {
                Some(u) => self.upstream_storage(u, address, slot, block),
                None => Ok(U256::ZERO),
            },
        }
    }

    /// Every slot the account has written up to the end of `block` (zeroed ones included:
    /// read the values with [`Self::storage`]).
    pub fn storage_slots(&self, address: &Address, block: u64) -> ChainResult<Vec<U256>> {
        self.check_history(block)?;
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
        for t in self.tips_at(block) {
            if let Some(change) = t.changes.accounts.get(address) {
                slots.extend(change.storage.keys().copied());
            }
        }
        Ok(slots)
    }

    pub fn code(&self, hash: &B256) -> ChainResult<Option<Bytes>> {
        if let Some(code) = self.tips.iter().find_map(|t| t.changes.codes.get(hash)) {
            return Ok(Some(code.clone()));
        }
        match self.codes.get(&hash.0)? {
            Some(v) => Ok(Some(Bytes::copy_from_slice(v.value()))),
            None => match &self.upstream {
                Some(u) => u.source.code(hash),
                None => Ok(None),
            },
        }
    }

    /// A slot never written locally, on a forked chain: the upstream's value, unless the
    /// account has no code upstream, or it was created or cleared here since the fork
    /// (then nothing of the upstream's storage is left).
    fn upstream_storage(&self, u: &Upstream, address: &Address, slot: &U256, block: u64) -> ChainResult<U256> {
        if LOCAL_RING_BUFFERS.contains(address) || self.local_account_fresh(address, block)? {
            return Ok(U256::ZERO);
        }
        match u.source.account(address)? {
            Some(a) if a.code_hash != alloy_primitives::KECCAK256_EMPTY => u.source.storage(address, slot),
            _ => Ok(U256::ZERO),
        }
    }

    /// Whether the account's local history (since the fork) started it afresh: it did not
    /// exist at some point, so the upstream's storage is gone.
    fn local_account_fresh(&self, address: &Address, block: u64) -> ChainResult<bool> {
        if self.tips_at(block).any(|t| t.changes.accounts.get(address).is_some_and(|c| c.storage_wiped)) {
            return Ok(true);
        }
        let from = codec::account_key(address, 0);
        let to = codec::account_key(address, block);
        for entry in self.accounts.range::<&[u8; 28]>(&from..=&to)? {
            if codec::decode_account(entry?.1.value()).is_none() {
                return Ok(true);
            }
        }
        Ok(false)
    }

    pub fn header(&self, number: u64) -> ChainResult<Option<Header>> {
        if let Some(t) = self.tip_numbered(number) {
            return Ok(Some(t.header.clone()));
        }
        match self.headers.get(number)? {
            Some(v) => Header::decode(&mut v.value())
                .map(Some)
                .map_err(|e| InternalError::CorruptHeader { number, source: Cause::new(e) }.into()),
            None => Ok(None),
        }
    }

    pub fn block_hash(&self, number: u64) -> ChainResult<Option<B256>> {
        if let Some(t) = self.tip_numbered(number) {
            return Ok(Some(t.hash));
        }
        match self.hashes.get(number)? {
            Some(v) => Ok(Some(B256::from(*v.value()))),
            None => match &self.upstream {
                Some(u) if number < u.fork_block => u.source.block_hash(number),
                _ => Ok(None),
            },
        }
    }

    pub fn block_number(&self, hash: &B256) -> ChainResult<Option<u64>> {
        if let Some(t) = self.tips.iter().find(|t| t.hash == *hash) {
            return Ok(Some(t.number()));
        }
        Ok(self.numbers.get(&hash.0)?.map(|v| v.value()))
    }

    pub fn body(&self, number: u64) -> ChainResult<Option<StoredBody>> {
        if let Some(t) = self.tip_numbered(number) {
            return Ok(Some(t.body.clone()));
        }
        self.check_body(number)?;
        match self.bodies.get(number)? {
            Some(v) => codec::decode(v.value()).map(Some).ok_or_else(|| InternalError::CorruptBody(number).into()),
            None => Ok(None),
        }
    }

    pub fn receipts(&self, number: u64) -> ChainResult<Option<StoredReceipts>> {
        if let Some(t) = self.tip_numbered(number) {
            return Ok(Some(t.receipts.clone()));
        }
        self.check_body(number)?;
        match self.receipts.get(number)? {
            Some(v) => {
                codec::decode_receipts(v.value()).map(Some).ok_or_else(|| InternalError::CorruptReceipts(number).into())
            }
            None => Ok(None),
        }
    }

    /// Where a transaction was included: (block number, index).
    pub fn tx_location(&self, hash: &B256) -> ChainResult<Option<(u64, u32)>> {
        if let Some((t, i)) = self.tips.iter().find_map(|t| t.tx_index.get(hash).map(|i| (t, *i))) {
            return Ok(Some((t.number(), i)));
        }
        Ok(self.tx_index.get(&hash.0)?.map(|v| codec::decode_tx_location(v.value())))
    }

    /// A pruned block's body and receipts are gone; its header stays (block hashes, numbers).
    fn check_body(&self, number: u64) -> ChainResult<()> {
        match self.head {
            Some(head) if number <= head => self.check_history(number),
            _ => Ok(()),
        }
    }
}

/// The system contracts whose storage is a ring buffer every block writes a new slot of
/// (EIP-4788 beacon roots, EIP-2935 block hashes): on a fork they start empty rather than
/// cost the builder an upstream read per block (and stop it when the upstream is down).
/// BLOCKHASH does not read them: it asks the upstream for the hashes before the fork.
const LOCAL_RING_BUFFERS: [Address; 2] =
    [alloy_eips::eip4788::BEACON_ROOTS_ADDRESS, alloy_eips::eip2935::HISTORY_STORAGE_ADDRESS];

/// The committed trie with in-flight blocks' diffs on top (newest first wins).
struct TipsTrie<'a> {
    tips: Vec<&'a InFlightBlock>,
    base: preconf_trie::TrieAt<'a>,
}

impl preconf_trie::NodeReader for TipsTrie<'_> {
    fn account_node(&self, path: &preconf_trie::Nibbles) -> preconf_trie::TrieResult<Option<Bytes>> {
        for t in self.tips.iter().rev() {
            if let Some(node) = t.trie.accounts.get(path) {
                return Ok(node.clone());
            }
        }
        self.base.account_node(path)
    }

    fn storage_node(&self, owner: &B256, path: &preconf_trie::Nibbles) -> preconf_trie::TrieResult<Option<Bytes>> {
        for t in self.tips.iter().rev() {
            if let Some(node) = t.trie.storage.get(owner).and_then(|nodes| nodes.get(path)) {
                return Ok(node.clone());
            }
        }
        self.base.storage_node(owner, path)
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
