//! Transactions and receipts by hash, and where a transaction stands.

use std::sync::Arc;

use alloy_primitives::B256;

use super::blocks::Blocks;
use crate::chain_state::ChainState;
use crate::error::ChainResult;
use crate::pool::TxStatus;
use crate::types::BlockData;
use crate::view::{ChainView, Resolved};

/// A transaction found by hash.
pub enum TxLookup {
    /// In a block at `index`: a sealed one (or, with `preconf_receipts`, the block being built).
    Executed { block: Arc<BlockData>, index: usize },
    /// Not in a sealed block yet: pooled, or pre-confirmed (reported without block fields,
    /// as geth reports pending transactions, unless `preconf_receipts`).
    Waiting { tx: Box<preconf_op::OpTx>, sender: alloy_primitives::Address },
}

/// Where a transaction stands.
#[derive(Clone, Debug)]
pub enum TxProgress {
    Preconfirmed { number: u64, index: u64, preconf_index: u64 },
    Included { number: u64, hash: B256, index: u64 },
    InPool(TxStatus),
    Unknown,
}

pub struct Transactions {
    chain: Arc<ChainState>,
    blocks: Arc<Blocks>,
}

impl Transactions {
    pub fn new(chain: Arc<ChainState>, blocks: Arc<Blocks>) -> Self {
        Self { chain, blocks }
    }

    /// Finds an executed transaction: pre-confirmed first, then sealed.
    pub fn find_executed(&self, view: &ChainView, hash: &B256) -> ChainResult<Option<(Arc<BlockData>, usize)>> {
        if let Some(p) = &view.pending {
            if let Some(i) = p.position(hash) {
                return Ok(Some((p.block.clone(), i)));
            }
        }
        let Some((number, index)) = view.snapshot.tx_location(hash)? else { return Ok(None) };
        if number > view.head_number() {
            return Ok(None);
        }
        Ok(self.blocks.block_data(view, Resolved::Sealed(number))?.map(|b| (b, index as usize)))
    }

    /// Only sealed blocks, unless pre-confirmed receipts were asked for (`--preconf-receipts`).
    fn visible(&self, found: Option<(Arc<BlockData>, usize)>) -> Option<(Arc<BlockData>, usize)> {
        found.filter(|(block, _)| block.hash.is_some() || self.chain.config().preconf_receipts)
    }

    /// A transaction: in a sealed block, else waiting (pre-confirmed or pooled).
    pub fn by_hash(&self, hash: B256) -> ChainResult<Option<TxLookup>> {
        let (pooled, view) = self.chain.with_pool(|pool| pool.get(&hash));
        let found = self.find_executed(&view, &hash)?;
        if let Some((block, index)) = self.visible(found.clone()) {
            return Ok(Some(TxLookup::Executed { block, index }));
        }
        if let Some((block, index)) = found {
            let etx = &block.txs[index];
            return Ok(Some(TxLookup::Waiting { tx: Box::new(etx.tx.clone()), sender: etx.sender }));
        }
        Ok(pooled.map(|p| TxLookup::Waiting { tx: Box::new(preconf_op::OpTx::Eth(p.tx.clone())), sender: p.sender }))
    }

    /// The block and index of a transaction for its receipt: sealed (or, with
    /// `preconf_receipts`, pre-confirmed).
    pub fn receipt(&self, hash: B256) -> ChainResult<Option<(Arc<BlockData>, usize)>> {
        Ok(self.visible(self.find_executed(&self.chain.view(), &hash)?))
    }

    /// Like `receipt`, pre-confirmed transactions included whatever the setting: what
    /// eth_sendRawTransactionSync answers with.
    pub fn preconfirmed_receipt(&self, hash: B256) -> ChainResult<Option<(Arc<BlockData>, usize)>> {
        self.find_executed(&self.chain.view(), &hash)
    }

    /// Pending or queued in the pool, pre-confirmed, included in a sealed block, dropped
    /// (with the reason), or unknown.
    pub fn progress(&self, hash: B256) -> ChainResult<TxProgress> {
        let (entry, view) = self.chain.with_pool(|pool| pool.lookup(&hash));
        if let Some(p) = &view.pending {
            if let Some(i) = p.position(&hash) {
                let preconf_index = p.block.preconf_index.unwrap_or_default();
                return Ok(TxProgress::Preconfirmed { number: p.block.header.number, index: i as u64, preconf_index });
            }
        }
        if let Some((number, index)) = view.snapshot.tx_location(&hash)? {
            if number <= view.head_number() {
                let hash = view.block_hash(Resolved::Sealed(number))?.unwrap_or_default();
                return Ok(TxProgress::Included { number, hash, index: index as u64 });
            }
        }
        Ok(match entry {
            Some(entry) => {
                let sender = match &entry {
                    crate::pool::PoolEntry::Pooled { tx, .. } => Some(tx.sender),
                    crate::pool::PoolEntry::Dropped(_) => None,
                };
                let state_nonce = match sender {
                    Some(s) => view.pending_state().nonce(&s)?,
                    None => 0,
                };
                TxProgress::InPool(entry.status(state_nonce))
            }
            None => TxProgress::Unknown,
        })
    }
}
