//! A sealed block on its way to disk. The builder seals a block (state root, hash) and
//! hands it to the committer thread; until that durable commit lands, snapshots carry the
//! block in memory and answer for it exactly as the store will (reth serves its
//! not-yet-persisted canonical blocks the same way). This keeps the commit, which grows
//! with the block and the disk, off the pre-confirmation clock.

use std::sync::Arc;

use alloy_consensus::Header;
use alloy_primitives::{map::B256Map, B256};
use preconf_trie::TrieDiff;

use super::{BlockWrite, StoredBody, StoredReceipts};
use crate::changes::StateChanges;

pub struct InFlightBlock {
    pub header: Header,
    pub hash: B256,
    pub body: StoredBody,
    pub receipts: StoredReceipts,
    pub tx_hashes: Vec<B256>,
    /// Transaction hash -> index in the block.
    pub tx_index: B256Map<u32>,
    pub changes: Arc<StateChanges>,
    /// The state trie nodes the block changed, over the previous block's trie.
    pub trie: TrieDiff,
    /// Durable before this node writes it: a replica's block, streamed only once its leader
    /// stored it (or its cluster's log holds it). It counts as `safe` at once.
    pub durable_upstream: bool,
}

impl InFlightBlock {
    pub fn new(
        header: Header,
        hash: B256,
        body: StoredBody,
        receipts: StoredReceipts,
        tx_hashes: Vec<B256>,
        changes: Arc<StateChanges>,
        trie: TrieDiff,
    ) -> Self {
        let tx_index = tx_hashes.iter().enumerate().map(|(i, h)| (*h, i as u32)).collect();
        Self { header, hash, body, receipts, tx_hashes, tx_index, changes, trie, durable_upstream: false }
    }

    /// The block is durable elsewhere already (see `durable_upstream`).
    pub fn durable_upstream(mut self) -> Self {
        self.durable_upstream = true;
        self
    }

    pub fn number(&self) -> u64 {
        self.header.number
    }

    /// The block as the store writes it.
    pub fn write(&self) -> BlockWrite<'_> {
        BlockWrite {
            header: &self.header,
            hash: self.hash,
            body: &self.body,
            receipts: &self.receipts,
            tx_hashes: &self.tx_hashes,
            changes: self.changes.as_ref(),
            trie: &self.trie,
        }
    }
}
