//! The pool as geth's `txpool_*` namespace shows it: per sender, *pending* transactions
//! (executable: no nonce gap after the sender's nonce in the newest pre-confirmation) and
//! *queued* ones (after a gap). Read with the view the pool is consistent with, so a
//! transaction is never both pre-confirmed and listed here, nor missing from both.

use std::collections::BTreeMap;
use std::sync::Arc;

use alloy_primitives::Address;

use crate::chain_state::ChainState;
use crate::error::ChainResult;
use crate::pool::{next_nonce, PooledTx};
use crate::view::ChainView;

/// One sender's pooled transactions, split at its first nonce gap (each in nonce order).
#[derive(Default)]
pub struct SenderTxs {
    pub pending: Vec<Arc<PooledTx>>,
    pub queued: Vec<Arc<PooledTx>>,
}

/// The whole pool (or one sender's part of it), by sender.
pub type PoolContent = BTreeMap<Address, SenderTxs>;

/// How many transactions are pending and queued.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PoolCounts {
    pub pending: usize,
    pub queued: usize,
}

pub struct TxPool {
    chain: Arc<ChainState>,
}

impl TxPool {
    pub fn new(chain: Arc<ChainState>) -> Self {
        Self { chain }
    }

    /// Every sender's pooled transactions (only `sender`'s when given), split into pending
    /// and queued by the same rule as `preconf_transactionStatus`.
    pub fn content(&self, sender: Option<Address>) -> ChainResult<PoolContent> {
        // Copy under the pool lock, read nonces from the matching view after releasing it.
        let (queues, view) = self.chain.with_pool(|pool| match sender {
            Some(s) => vec![(s, pool.queue_of(&s))],
            None => pool.snapshot(),
        });
        let mut content = PoolContent::new();
        for (sender, queue) in queues {
            if queue.is_empty() {
                continue;
            }
            content.insert(sender, split(&view, &sender, queue)?);
        }
        Ok(content)
    }

    /// Pending and queued counts (txpool_status, and the pool-size metrics): the same split
    /// as `content`, from the nonces alone.
    pub fn counts(&self) -> ChainResult<PoolCounts> {
        let (senders, view) = self.chain.with_pool(|pool| pool.nonce_lists());
        let state = view.pending_state();
        let mut counts = PoolCounts::default();
        for (sender, nonces) in senders {
            let executable_below = next_nonce(state.nonce(&sender)?, &nonces);
            let pending = nonces.iter().filter(|n| **n < executable_below).count();
            counts.pending += pending;
            counts.queued += nonces.len() - pending;
        }
        Ok(counts)
    }
}

fn split(view: &ChainView, sender: &Address, queue: Vec<Arc<PooledTx>>) -> ChainResult<SenderTxs> {
    let nonces: Vec<u64> = queue.iter().map(|t| t.nonce).collect();
    let executable_below = next_nonce(view.pending_state().nonce(sender)?, &nonces);
    let (pending, queued) = queue.into_iter().partition(|t| t.nonce < executable_below);
    Ok(SenderTxs { pending, queued })
}
