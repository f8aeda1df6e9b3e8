//! What the node is building on: the fee recipient of the next block (`eth_coinbase`) and
//! the facts anvil's `anvil_nodeInfo` reports (head, fork rules, fees of the next block).

use std::sync::Arc;

use alloy_primitives::{Address, B256};
use revm::primitives::hardfork::SpecId;

use super::fees::Fees;
use crate::chain_state::ChainState;
use crate::error::ChainResult;

/// The node as anvil's `anvil_nodeInfo` describes one, from a single view.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeInfo {
    /// The newest sealed block.
    pub head_number: u64,
    pub head_hash: B256,
    pub head_timestamp: u64,
    /// The rules of the next block.
    pub spec: SpecId,
    pub chain_id: u64,
    /// The next block's gas limit and base fee (`None` before London).
    pub gas_limit: u64,
    pub base_fee: Option<u64>,
    /// What `eth_gasPrice` answers.
    pub gas_price: u128,
}

pub struct NodeReads {
    chain: Arc<ChainState>,
    fees: Arc<Fees>,
}

impl NodeReads {
    pub fn new(chain: Arc<ChainState>, fees: Arc<Fees>) -> Self {
        Self { chain, fees }
    }

    /// The address the next block credits its fees to: the shown block's `miner`, or, where
    /// nothing is shown (`--no-preconf`), the one the builder opened its block with.
    pub fn coinbase(&self) -> Address {
        match &self.chain.view().pending {
            Some(p) => p.block.header.beneficiary,
            None => self.chain.next_coinbase(),
        }
    }

    pub fn info(&self) -> ChainResult<NodeInfo> {
        let view = self.chain.view();
        let head = &view.head.header;
        let next = view.pending_header();
        Ok(NodeInfo {
            head_number: head.number,
            head_hash: view.head_hash(),
            head_timestamp: head.timestamp,
            spec: self.chain.spec().spec_for_header(next),
            chain_id: self.chain.chain_id(),
            gas_limit: next.gas_limit,
            base_fee: next.base_fee_per_gas,
            gas_price: self.fees.gas_price()?,
        })
    }
}
