//! What the chain announces, as typed values. The builder and the pool send them after the
//! change is visible to readers; listeners (the N-API layer renders them for WebSocket
//! subscribers, replication publishes them) receive them on their own threads, so nothing
//! is rendered or encoded on the builder's clock.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Arc;

use alloy_primitives::B256;
use parking_lot::Mutex;

use crate::changes::StateChanges;
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
    /// Sealed blocks taken off the chain, oldest first, as they were (transactions and
    /// receipts): a consensus client's forkchoice moved the head back to an earlier block or
    /// onto a sibling of one. Sent once the store no longer holds them and before the new
    /// head's `Sealed`, the order geth announces a reorg in (the old chain's logs as removed,
    /// then the new chain's).
    Rewound { removed: Vec<Arc<BlockData>> },
    /// Sealed block `number` (and every one before it) is durable in the store. Readers see
    /// a sealed block before this (from memory); replication streams it only after.
    Durable { number: u64 },
    /// A transaction was accepted into the pool. Sent only while some listener declared
    /// it wants these (`EventBus::pool_interest`).
    Pooled { hash: B256 },
}

/// Fan-out of chain events to any number of listeners, each with its own queue.
#[derive(Default)]
pub struct EventBus {
    listeners: Mutex<Vec<Sender<ChainEvent>>>,
    /// How many listeners want `Pooled` events now. One comes per accepted transaction:
    /// with nobody asking, a submission neither takes the listeners' lock nor wakes their
    /// threads (which share the submission's core when the node is pinned to one).
    pool_watchers: Arc<AtomicUsize>,
}

impl EventBus {
    /// A new listener; it receives every event sent from now on, in order.
    pub fn subscribe(&self) -> Receiver<ChainEvent> {
        let (tx, rx) = channel();
        self.listeners.lock().push(tx);
        rx
    }

    /// A listener's switch for `Pooled` events, off until `set(true)`.
    pub fn pool_interest(&self) -> PoolInterest {
        PoolInterest { on: AtomicBool::new(false), watchers: self.pool_watchers.clone() }
    }

    /// Announces a transaction accepted into the pool, if any listener wants to know.
    pub fn send_pooled(&self, hash: B256) {
        if self.pool_watchers.load(Ordering::Acquire) > 0 {
            self.send(ChainEvent::Pooled { hash });
        }
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

/// One listener's wish to receive `Pooled` events; dropping it withdraws the wish.
pub struct PoolInterest {
    on: AtomicBool,
    watchers: Arc<AtomicUsize>,
}

impl PoolInterest {
    pub fn set(&self, on: bool) {
        if self.on.swap(on, Ordering::AcqRel) != on {
            if on {
                self.watchers.fetch_add(1, Ordering::AcqRel);
            } else {
                self.watchers.fetch_sub(1, Ordering::AcqRel);
            }
        }
    }
}

impl Drop for PoolInterest {
    fn drop(&mut self) {
        self.set(false);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pooled(rx: &Receiver<ChainEvent>) -> Vec<B256> {
        rx.try_iter().filter_map(|e| if let ChainEvent::Pooled { hash } = e { Some(hash) } else { None }).collect()
    }

    #[test]
    fn pool_announcements_go_out_only_while_some_listener_wants_them() {
        let bus = EventBus::default();
        let rx = bus.subscribe();
        let (a, b) = (bus.pool_interest(), bus.pool_interest());
        bus.send_pooled(B256::with_last_byte(1));
        a.set(true);
        a.set(true); // repeated: still one wish
        b.set(true);
        bus.send_pooled(B256::with_last_byte(2));
        a.set(false);
        bus.send_pooled(B256::with_last_byte(3));
        drop(b); // dropping withdraws the wish
        bus.send_pooled(B256::with_last_byte(4));
        assert_eq!(pooled(&rx), vec![B256::with_last_byte(2), B256::with_last_byte(3)]);
    }
}
