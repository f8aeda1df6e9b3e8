//! What readers see: an immutable view of the chain, swapped atomically by the builder.
//! A request loads the current view once and answers entirely from it, so a read never
//! waits for the builder and never sees half of a pre-confirmation.

use std::sync::Arc;

use alloy_consensus::Header;
use alloy_primitives::{map::B256Map, B256};
use parking_lot::RwLock;

use crate::changes::StateChanges;
use crate::error::{ChainError, ChainResult};
use crate::state::{CodeCache, Overlay, StateView};
use crate::store::StoreSnapshot;
use crate::types::{BlockData, BlockId, ExecutedTx};

/// The block being built, as of its newest pre-confirmation. Publishing the next one costs
/// what it added: the transaction list and the hash index are shared with the versions
/// before it (append.rs), and the overlay gains one layer (merging a few small ones).
#[derive(Clone, Debug)]
pub struct PendingBlock {
    /// Header fields of the block being built (number, timestamp, base fee, gas limit,
    /// beneficiary, prevrandao, parent hash); roots are those of the transactions so far.
    pub block: Arc<BlockData>,
    /// State changes of the pre-confirmed transactions (and the block's system calls).
    pub overlay: Overlay,
    /// What the newest pre-confirmation changed (the layer it added to `overlay`).
    pub tick: Arc<StateChanges>,
    /// Transaction hash -> index in `block.txs`, shared by every version of the block.
    tx_index: Arc<TxIndex>,
}

/// Hash -> index of the transactions of the newest version of a pending block. Older
/// versions share it and ignore what lies past their own length.
#[derive(Debug, Default)]
struct TxIndex {
    /// (indexed transactions, hash -> index).
    map: RwLock<(usize, B256Map<usize>)>,
}

impl TxIndex {
    fn of(txs: &[Arc<ExecutedTx>]) -> Self {
        let map = txs.iter().enumerate().map(|(i, t)| (t.hash(), i)).collect();
        Self { map: RwLock::new((txs.len(), map)) }
    }
}

impl PendingBlock {
    /// The block being built from scratch: `txs` so far, one overlay layer holding all they
    /// (and the block's system calls) changed. Index 0 is the block just opened.
    pub fn start(header: Header, txs: Vec<Arc<ExecutedTx>>, preconf_index: u64, layer: Arc<StateChanges>) -> Self {
        let tx_index = Arc::new(TxIndex::of(&txs));
        let block =
            BlockData { header, hash: None, txs: txs.into(), preconf_index: Some(preconf_index), ..Default::default() };
        Self { block: Arc::new(block), overlay: Overlay::default().with(layer.clone()), tick: layer, tx_index }
    }

    /// The same block named by the Engine API's payload id (sequencer mode).
    pub fn with_payload_id(mut self, payload_id: Option<alloy_primitives::B64>) -> Self {
        if payload_id.is_some() {
            Arc::make_mut(&mut self.block).payload_id = payload_id;
        }
        self
    }

    /// This block after one more pre-confirmation: `new_txs` appended, `layer` (what they
    /// changed) on top, `header` with the roots of every transaction so far.
    pub fn next(
        &self,
        header: Header,
        new_txs: &[Arc<ExecutedTx>],
        preconf_index: u64,
        layer: Arc<StateChanges>,
    ) -> Self {
        let len = self.block.txs.len();
        let txs = self.block.txs.appended(new_txs);
        let tx_index = {
            let mut index = self.tx_index.map.write();
            if index.0 == len {
                index.1.extend(new_txs.iter().enumerate().map(|(i, t)| (t.hash(), len + i)));
                index.0 = txs.len();
                self.tx_index.clone()
            } else {
                // A newer version went another way (not the builder's case): index our own.
                drop(index);
                Arc::new(TxIndex::of(&txs))
            }
        };
        let payload_id = self.block.payload_id;
        let block =
            BlockData { header, hash: None, txs, preconf_index: Some(preconf_index), payload_id, ..Default::default() };
        Self { block: Arc::new(block), overlay: self.overlay.with(layer.clone()), tick: layer, tx_index }
    }

    /// Where a transaction is in this version of the block.
    pub fn position(&self, hash: &B256) -> Option<usize> {
        let i = *self.tx_index.map.read().1.get(hash)?;
        self.block.txs.get(i).filter(|t| t.hash() == *hash).map(|_| i)
    }

    pub fn number(&self) -> u64 {
        self.block.header.number
    }

    pub fn preconf_index(&self) -> u64 {
        self.block.preconf_index.unwrap_or_default()
    }
}

#[derive(Clone)]
pub struct ChainView {
    pub snapshot: Arc<StoreSnapshot>,
    /// The newest sealed block.
    pub head: Arc<BlockData>,
    /// The block being built; `None` with pre-confirmations off (pending reads the head).
    pub pending: Option<Arc<PendingBlock>>,
    pub finalized: u64,
    pub codes: Arc<CodeCache>,
}

/// Where a block selector points.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resolved {
    /// The block being built.
    Pending,
    /// A sealed block.
    Sealed(u64),
}

impl ChainView {
    pub fn head_number(&self) -> u64 {
        self.head.header.number
    }

    /// The newest sealed block that is durable: in the store, or (a replica's) where it came
    /// from.
    pub fn durable_head(&self) -> u64 {
        match self.snapshot.tips().iter().find(|t| !t.durable_upstream) {
            Some(t) => t.number().saturating_sub(1),
            None => self.head_number(),
        }
    }

    pub fn head_hash(&self) -> B256 {
        self.head.hash.unwrap_or_default()
    }

    /// State as of the end of a stored block.
    pub fn state_at(&self, number: u64) -> StateView {
        StateView { snapshot: self.snapshot.clone(), block: number, overlay: None, codes: self.codes.clone() }
    }

    /// State including every pre-confirmed transaction.
    pub fn pending_state(&self) -> StateView {
        let mut state = self.state_at(self.head_number());
        if let Some(p) = &self.pending {
            state.overlay = Some(p.overlay.clone());
        }
        state
    }

    pub fn state(&self, at: Resolved) -> StateView {
        match at {
            Resolved::Pending => self.pending_state(),
            Resolved::Sealed(n) => self.state_at(n),
        }
    }

    /// Resolves a selector. Unknown numbers and hashes are `HeaderNotFound`.
    pub fn resolve(&self, id: BlockId) -> ChainResult<Resolved> {
        let head = self.head_number();
        Ok(match id {
            BlockId::Pending if self.pending.is_some() => Resolved::Pending,
            BlockId::Pending | BlockId::Latest => Resolved::Sealed(head),
            // An imported chain's fork choice names it; otherwise every durable sealed block
            // is safe (the newest may still be on its way to disk: docs/storage.md).
            BlockId::Safe => {
                Resolved::Sealed(self.snapshot.safe().filter(|s| *s <= head).unwrap_or(self.durable_head()))
            }
            BlockId::Finalized => Resolved::Sealed(self.finalized.min(self.durable_head())),
            BlockId::Earliest => Resolved::Sealed(0),
            BlockId::Number(n) if n <= head => Resolved::Sealed(n),
            BlockId::Number(_) => return Err(ChainError::HeaderNotFound),
            BlockId::Hash(hash) => match self.snapshot.block_number(&hash)? {
                Some(n) if n <= head => Resolved::Sealed(n),
                _ => return Err(ChainError::HeaderNotFound),
            },
        })
    }

    /// Like `resolve`, but a block that does not exist is `None` (block lookups answer null).
    pub fn resolve_opt(&self, id: BlockId) -> ChainResult<Option<Resolved>> {
        match self.resolve(id) {
            Ok(r) => Ok(Some(r)),
            Err(ChainError::HeaderNotFound) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Header of the block being built (or, without pre-confirmations, the head's).
    pub fn pending_header(&self) -> &Header {
        match &self.pending {
            Some(p) => &p.block.header,
            None => &self.head.header,
        }
    }

    /// The header whose context (number, timestamp, base fee...) a call at `at` runs in.
    pub fn context_header(&self, at: Resolved) -> ChainResult<Header> {
        match at {
            Resolved::Pending => Ok(self.pending_header().clone()),
            Resolved::Sealed(n) if n == self.head_number() => Ok(self.head.header.clone()),
            Resolved::Sealed(n) => self.snapshot.header(n)?.ok_or(ChainError::HeaderNotFound),
        }
    }

    /// Hash of the block a selector resolved to; the block being built has none yet.
    pub fn block_hash(&self, at: Resolved) -> ChainResult<Option<B256>> {
        match at {
            Resolved::Pending => Ok(None),
            Resolved::Sealed(n) if n == self.head_number() => Ok(self.head.hash),
            Resolved::Sealed(n) => self.snapshot.block_hash(n),
        }
    }
}
