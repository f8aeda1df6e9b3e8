//! Transactions the test methods take out of the pool.

use alloy_primitives::B256;

use super::Builder;
use crate::dev::requests::PoolDrop;
use crate::error::DropReason;

impl Builder {
    /// Takes transactions out of the pool: `hash`, or all. One already executed into the
    /// open block stays (it is shown at the next tick): it is not in the answer.
    pub(super) fn drop_pooled(&mut self, which: PoolDrop) -> Vec<B256> {
        let reason = match which {
            PoolDrop::One(_) => DropReason::DropTransaction,
            PoolDrop::Sender(_) => DropReason::RemovePoolTransactions,
            PoolDrop::All => DropReason::DropAllTransactions,
        };
        let hashes: Vec<B256> = match which {
            PoolDrop::One(h) => vec![h],
            PoolDrop::Sender(sender) => {
                self.chain.read_pool(|pool| pool.queue_of(&sender)).into_iter().map(|t| t.hash).collect()
            }
            PoolDrop::All => self
                .chain
                .read_pool(|pool| pool.snapshot())
                .into_iter()
                .flat_map(|(_, q)| q.into_iter().map(|t| t.hash))
                .collect(),
        };
        let executed = &self.executed.included;
        let dropped: Vec<(B256, DropReason)> =
            hashes.into_iter().filter(|h| !executed.contains(h)).map(|h| (h, reason.clone())).collect();
        self.chain.drop_from_pool(&dropped)
    }
}
