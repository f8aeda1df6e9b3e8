//! Blocks by number, hash or tag: the block being built, the head, or a stored block
//! decoded once and kept in a small cache (a receipt lookup must not decode a whole block
//! every time; sealed blocks never change, so entries never go stale).

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use parking_lot::Mutex;

use crate::chain_state::ChainState;
use crate::error::{ChainResult, InternalError};
use crate::store::StoreSnapshot;
use crate::types::{BlockData, BlockId, ExecutedTx};
use crate::view::{ChainView, Resolved};

const BLOCK_CACHE_ENTRIES: usize = 128;

pub struct Blocks {
    chain: Arc<ChainState>,
    cache: Mutex<BlockCache>,
}

impl Blocks {
    pub fn new(chain: Arc<ChainState>) -> Self {
        Self { chain, cache: Mutex::new(BlockCache::default()) }
    }

    /// The block a selector names, or `None` when it does not exist.
    pub fn by_id(&self, id: BlockId) -> ChainResult<Option<Arc<BlockData>>> {
        let view = self.chain.view();
        let Some(at) = view.resolve_opt(id)? else { return Ok(None) };
        self.block_data(&view, at)
    }

    /// A block of `view`: the block being built, the head, or a stored block.
    pub fn block_data(&self, view: &ChainView, at: Resolved) -> ChainResult<Option<Arc<BlockData>>> {
        match at {
            Resolved::Pending => Ok(view.pending.as_ref().map(|p| p.block.clone())),
            Resolved::Sealed(n) if n == view.head_number() => Ok(Some(view.head.clone())),
            Resolved::Sealed(n) => {
                if let Some(b) = self.cache.lock().get(n) {
                    return Ok(Some(b));
                }
                let Some(block) = load_block(&view.snapshot, n)?.map(Arc::new) else { return Ok(None) };
                self.cache.lock().insert(n, block.clone());
                Ok(Some(block))
            }
        }
    }
}

impl Blocks {
    /// Like `block_data`, without filling the cache (for scans over many blocks).
    pub fn block_data_uncached(&self, view: &ChainView, at: Resolved) -> ChainResult<Option<Arc<BlockData>>> {
        match at {
            Resolved::Sealed(n) if n != view.head_number() => {
                if let Some(b) = self.cache.lock().get(n) {
                    return Ok(Some(b));
                }
                Ok(load_block(&view.snapshot, n)?.map(Arc::new))
            }
            _ => self.block_data(view, at),
        }
    }
}

/// Reads a sealed block with its transactions and receipts.
pub fn load_block(snapshot: &StoreSnapshot, number: u64) -> ChainResult<Option<BlockData>> {
    let Some(header) = snapshot.header(number)? else { return Ok(None) };
    let hash = snapshot.block_hash(number)?;
    let body = snapshot.body(number)?.unwrap_or_default();
    let receipts = snapshot.receipts(number)?.unwrap_or_default();
    if body.txs.len() != receipts.receipts.len() {
        return Err(
            InternalError::ReceiptCount { number, txs: body.txs.len(), receipts: receipts.receipts.len() }.into()
        );
    }
    let txs = ExecutedTx::from_stored(&body.txs, &receipts.receipts)?;
    Ok(Some(BlockData {
        header,
        hash,
        txs: txs.into(),
        preconf_index: None,
        ommers: body.ommers,
        withdrawals: body.withdrawals,
        payload_id: None,
    }))
}

/// A small FIFO cache of decoded sealed blocks.
#[derive(Default)]
struct BlockCache {
    map: HashMap<u64, Arc<BlockData>>,
    order: VecDeque<u64>,
}

impl BlockCache {
    fn get(&self, n: u64) -> Option<Arc<BlockData>> {
        self.map.get(&n).cloned()
    }

    fn insert(&mut self, n: u64, block: Arc<BlockData>) {
        if self.map.insert(n, block).is_none() {
            self.order.push_back(n);
            if self.order.len() > BLOCK_CACHE_ENTRIES {
                if let Some(old) = self.order.pop_front() {
                    self.map.remove(&old);
                }
            }
        }
    }
}
