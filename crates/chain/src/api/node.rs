//! What the node is building on: the fee recipient of the next block (`eth_coinbase`).

use std::sync::Arc;

use alloy_primitives::Address;

use crate::chain_state::ChainState;

pub struct NodeReads {
    chain: Arc<ChainState>,
}

impl NodeReads {
    pub fn new(chain: Arc<ChainState>) -> Self {
        Self { chain }
    }

    /// The address the next block credits its fees to: the shown block's `miner`, or, where
    /// nothing is shown (`--no-preconf`), the one the builder opened its block with.
    pub fn coinbase(&self) -> Address {
        match &self.chain.view().pending {
            Some(p) => p.block.header.beneficiary,
            None => self.chain.next_coinbase(),
        }
    }
}
