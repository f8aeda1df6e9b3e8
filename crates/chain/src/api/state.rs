//! Account state at a block: balance, nonce, code, storage.

use std::sync::Arc;

use alloy_primitives::{Address, Bytes, U256};

use crate::chain_state::ChainState;
use crate::error::ChainResult;
use crate::state::StateView;
use crate::types::BlockId;

pub struct StateReads {
    chain: Arc<ChainState>,
}

impl StateReads {
    pub fn new(chain: Arc<ChainState>) -> Self {
        Self { chain }
    }

    fn at(&self, id: BlockId) -> ChainResult<StateView> {
        let view = self.chain.view();
        Ok(view.state(view.resolve(id)?))
    }

    pub fn balance(&self, address: Address, id: BlockId) -> ChainResult<U256> {
        self.at(id)?.balance(&address)
    }

    pub fn nonce(&self, address: Address, id: BlockId) -> ChainResult<u64> {
        self.at(id)?.nonce(&address)
    }

    pub fn code(&self, address: Address, id: BlockId) -> ChainResult<Bytes> {
        self.at(id)?.code_bytes(&address)
    }

    pub fn storage(&self, address: Address, slot: U256, id: BlockId) -> ChainResult<U256> {
        self.at(id)?.storage(&address, &slot)
    }

    /// eth_getTransactionCount: with `pending`, the sender's pooled run counts too (read
    /// together with the view it belongs to, so the count never goes backwards).
    pub fn transaction_count(&self, address: Address, id: BlockId) -> ChainResult<u64> {
        if id != BlockId::Pending {
            return self.nonce(address, id);
        }
        let (pooled, view) = self.chain.with_pool(|pool| pool.nonces_of(&address));
        let state_nonce = view.pending_state().nonce(&address)?;
        Ok(crate::pool::next_nonce(state_nonce, &pooled))
    }
}
