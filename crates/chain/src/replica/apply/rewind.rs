//! A rewind in the stream: op-node's forkchoice took unsafe blocks back off the leader
//! (engine/forkchoice.rs), and the leader wrote where its head went (`wire` kind 5) before
//! it showed that. The replica takes the same blocks off its own store, in one durable
//! transaction with its stream position, and tells subscribers as the leader did.

use std::sync::Arc;

use alloy_primitives::Bytes;

use super::{Applied, Follower, Refused};
use crate::api::blocks::load_block;
use crate::error::{ChainError, ChainResult, InternalError};
use crate::events::ChainEvent;
use crate::types::BlockData;
use crate::view::ChainView;
use crate::wire::{Position, RewoundTo, POSITION_KEY};

impl Follower {
    pub(super) fn apply_rewound(&mut self, seq: u64, to: RewoundTo) -> Result<Applied, Refused> {
        // The blocks being committed are taken off too: they land first.
        self.settle()?;
        let view = self.chain.view();
        let head = view.head_number();
        if to.number > head {
            return Err(Refused::Missing { head, number: to.number });
        }
        let ours = view.snapshot.block_hash(to.number)?.unwrap_or_default();
        if ours != to.hash {
            return Err(Refused::Diverged { number: to.number, ours, theirs: to.hash });
        }
        let store = self.chain.store();
        let kept_from = store.change_sets_from(head)?;
        if to.number < head && kept_from > to.number + 1 {
            return Err(Refused::CannotRewind { to: to.number, kept_from });
        }
        let removed: Vec<Arc<BlockData>> = (to.number + 1..=head)
            .map(|n| load_block(&view.snapshot, n)?.map(Arc::new).ok_or(InternalError::MissingBlock(n).into()))
            .collect::<ChainResult<_>>()?;
        let position = Position { stream: self.stream.clone(), seq }.encode();
        let meta: [(&str, &[u8]); 1] = [(POSITION_KEY, &position)];
        if removed.is_empty() {
            // Applied before (read again after a restart): only the block being built goes.
            if view.pending.is_some() {
                self.chain.publish(ChainView { pending: None, ..(*view).clone() });
            }
            self.warm = None;
            return Ok(Applied::Rewound { number: to.number, removed: 0 });
        }
        store.unwind_to_with_meta(to.number, &meta)?;
        self.warm = None;
        let snapshot = store.snapshot()?;
        let missing = ChainError::from(InternalError::MissingBlock(to.number));
        let head_block = Arc::new(load_block(&snapshot, to.number)?.ok_or(missing)?);
        let shown = ChainView {
            snapshot,
            finalized: view.finalized.min(to.number),
            head: head_block.clone(),
            pending: None,
            codes: view.codes.clone(),
        };
        self.chain.publish(shown);
        // Their user transactions go back to the pool, as the leader's builder pools them
        // again: a new leader then still has them.
        for block in &removed {
            for etx in block.txs.iter().filter(|t| !t.tx.is_deposit()) {
                let _ = self.submit.admit_replicated(Bytes::from(etx.tx.encoded_2718()));
            }
        }
        let count = removed.len();
        let events = self.chain.events();
        events.send(ChainEvent::Rewound { removed });
        events.send(ChainEvent::Sealed { block: head_block, changes: Default::default() });
        events.send(ChainEvent::Durable { number: to.number });
        Ok(Applied::Rewound { number: to.number, removed: count })
    }
}
