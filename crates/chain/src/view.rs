//! What readers see: an immutable view of the chain, swapped atomically by the builder.
//! A request loads the current view once and answers entirely from it, so a read never
//! waits for the builder and never sees half of a pre-confirmation.

use std::sync::Arc;

use alloy_primitives::{map::B256Map, B256};

use crate::state::{changes::StateChanges, CodeCache, StateView};
use crate::store::StoreSnapshot;
use crate::types::BlockData;

/// The block being built, as of its newest pre-confirmation.
#[derive(Clone, Debug)]
pub struct PendingBlock {
    /// Header fields of the block being built (number, timestamp, base fee, gas limit,
    /// beneficiary, prevrandao, parent hash); roots are those of the transactions so far.
    pub block: Arc<BlockData>,
    /// State changes of the pre-confirmed transactions (and the block's system calls).
    pub changes: Arc<StateChanges>,
    /// Transaction hash -> index in `block.txs`.
    pub tx_index: B256Map<usize>,
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

impl ChainView {
    pub fn head_number(&self) -> u64 {
        self.head.header.number
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
            state.overlay = Some(p.changes.clone());
        }
        state
    }
}
