//! What the chain announces, as typed values. The builder and the pool send them after the
//! change is visible to readers; listeners (the N-API layer renders them for WebSocket
//! subscribers, replication publishes them) receive them on their own threads, so nothing
//! is rendered or encoded on the builder's clock.

use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Arc;

use alloy_primitives::B256;
use parking_lot::Mutex;

use crate::state::changes::StateChanges;
use crate::types::BlockData;

#[derive(Clone, Debug)]
pub enum ChainEvent {
    /// A new pre-confirmation of the block being built. `block.txs[first_new..]` are the
    /// transactions it added, `changes` what they did to the state: its overlay layer.
    Preconfirmed { block: Arc<BlockData>, first_new: usize, unix_ms: u64, changes: Arc<StateChanges> },
    /// A block was opened (at start, and right after each seal): readers see it as
    /// pre-confirmation 0, with no transactions; `changes` is what its pre-block system
    /// calls did (its first overlay layer). Not sent without pre-confirmations.
    Opened { block: Arc<BlockData>, unix_ms: u64, changes: Arc<StateChanges> },
    /// A block was sealed and is the new head; `changes` is everything it did to the state.
    Sealed { block: Arc<BlockData>, changes: Arc<StateChanges> },
    /// Sealed block `number` (and every one before it) is durable in the store. Readers see
    /// a sealed block before this (from memory); replication streams it only after.
    Durable { number: u64 },
    /// A transaction was accepted into the pool.
    Pooled { hash: B256 },
}

/// Fan-out of chain events to any number of listeners, each with its own queue.
#[derive(Default)]
pub struct EventBus {
    listeners: Mutex<Vec<Sender<ChainEvent>>>,
}

impl EventBus {
    /// A new listener; it receives every event sent from now on, in order.
    pub fn subscribe(&self) -> Receiver<ChainEvent> {
        let (tx, rx) = channel();
        self.listeners.lock().push(tx);
        rx
    }

    /// Delivers to every listener; listeners that went away are forgotten.
    pub fn send(&self, event: ChainEvent) {
        let mut listeners = self.listeners.lock();
        if listeners.is_empty() {
            return;
        }
        listeners.retain(|l| l.send(event.clone()).is_ok());
    }
}
