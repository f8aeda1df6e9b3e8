//! Fee data for wallets: suggested tip, gas price, fee history.

use std::sync::Arc;

use alloy_consensus::{Header, Transaction};
use alloy_primitives::B256;
use alloy_rpc_types_eth::FeeHistory;
use parking_lot::Mutex;

use super::blocks::Blocks;
use crate::chain_state::ChainState;
use crate::error::{ChainResult, InvalidParam};
use crate::types::{BlockData, BlockId};
use crate::view::{ChainView, Resolved};

/// Tip suggested when recent blocks carry no transactions to learn from.
pub const DEFAULT_TIP: u128 = 1_000_000_000;
/// Blocks the tip oracle looks back over, and the percentile it takes (geth's defaults).
const ORACLE_BLOCKS: u64 = 20;
const ORACLE_PERCENTILE: usize = 60;
/// The most blocks one eth_feeHistory request covers (geth's limit).
pub const MAX_FEE_HISTORY_BLOCKS: u64 = 1024;

pub struct Fees {
    chain: Arc<ChainState>,
    blocks: Arc<Blocks>,
    /// The oracle's answer for a head: it only changes when a block is sealed.
    oracle: Mutex<Option<(B256, u128)>>,
}

impl Fees {
    pub fn new(chain: Arc<ChainState>, blocks: Arc<Blocks>) -> Self {
        Self { chain, blocks, oracle: Mutex::new(None) }
    }

    /// eth_maxPriorityFeePerGas: the 60th percentile of the cheapest tips paid in recent
    /// blocks (geth's oracle), or 1 gwei when there is nothing to learn from.
    pub fn suggested_tip(&self) -> ChainResult<u128> {
        let view = self.chain.view();
        let head_hash = view.head_hash();
        if let Some((hash, tip)) = *self.oracle.lock() {
            if hash == head_hash {
                return Ok(tip);
            }
        }
        let tip = self.compute_tip(&view)?;
        *self.oracle.lock() = Some((head_hash, tip));
        Ok(tip)
    }

    fn compute_tip(&self, view: &ChainView) -> ChainResult<u128> {
        let head = view.head_number();
        let mut tips = Vec::new();
        // Blocks older than the kept history (`--history-blocks`) have no bodies.
        let first = head.saturating_sub(ORACLE_BLOCKS - 1).max(view.snapshot.history_from());
        for n in first..=head {
            let Some(block) = self.blocks.block_data(view, Resolved::Sealed(n))? else { continue };
            let base = block.header.base_fee_per_gas.unwrap_or_default();
            let mut block_tips: Vec<u128> = block.txs.iter().filter_map(|t| t.tx.effective_tip_per_gas(base)).collect();
            block_tips.sort_unstable();
            tips.extend(block_tips.into_iter().take(3));
        }
        if tips.is_empty() {
            return Ok(DEFAULT_TIP);
        }
        tips.sort_unstable();
        Ok(tips[(tips.len() - 1) * ORACLE_PERCENTILE / 100].max(1))
    }

    /// eth_gasPrice: the suggested tip on top of the base fee of the block being built.
    pub fn gas_price(&self) -> ChainResult<u128> {
        let base = self.chain.view().pending_header().base_fee_per_gas.unwrap_or_default() as u128;
        Ok(base + self.suggested_tip()?)
    }

    /// eth_feeHistory over sealed blocks (and the block being built when asked for
    /// `pending`). Without percentiles only headers are read.
    pub fn fee_history(&self, block_count: u64, newest: BlockId, percentiles: &[f64]) -> ChainResult<FeeHistory> {
        if percentiles.iter().any(|x| !(0.0..=100.0).contains(x)) {
            return Err(InvalidParam::RewardPercentiles.into());
        }
        let block_count = block_count.min(MAX_FEE_HISTORY_BLOCKS);
        let view = self.chain.view();
        let newest = match view.resolve(newest)? {
            Resolved::Pending => view.head_number() + 1,
            Resolved::Sealed(n) => n,
        };
        let mut history = FeeHistory::default();
        if block_count == 0 {
            return Ok(history);
        }
        let mut oldest = newest.saturating_sub(block_count - 1);
        if !percentiles.is_empty() {
            // Rewards need bodies: the range starts at the oldest kept one (headers are all kept).
            oldest = oldest.max(view.snapshot.history_from().min(newest));
        }
        history.oldest_block = oldest;
        let mut rewards = Vec::new();
        let mut last: Option<Header> = None;
        for n in oldest..=newest {
            let at = if n > view.head_number() { Resolved::Pending } else { Resolved::Sealed(n) };
            let (header, block) = if percentiles.is_empty() {
                let Ok(header) = view.context_header(at) else { break };
                (header, None)
            } else {
                // Read past the block cache: a long range must not evict what lookups use.
                let Some(block) = self.blocks.block_data_uncached(&view, at)? else { break };
                (block.header.clone(), Some(block))
            };
            history.base_fee_per_gas.push(header.base_fee_per_gas.unwrap_or_default() as u128);
            history.gas_used_ratio.push(if header.gas_limit == 0 {
                0.0
            } else {
                header.gas_used as f64 / header.gas_limit as f64
            });
            if let Some(block) = &block {
                rewards.push(block_rewards(block, percentiles));
            }
            last = Some(header);
        }
        // One more base fee: the block after the newest.
        if let Some(h) = &last {
            history
                .base_fee_per_gas
                .push(h.next_block_base_fee(self.chain.spec().base_fee_params()).unwrap_or_default() as u128);
        }
        let n = history.gas_used_ratio.len();
        history.base_fee_per_blob_gas = vec![1; n + 1];
        history.blob_gas_used_ratio = vec![0.0; n];
        if !percentiles.is_empty() {
            history.reward = Some(rewards);
        }
        Ok(history)
    }
}

/// Tips at the given percentiles of gas used, as geth computes them.
fn block_rewards(block: &BlockData, percentiles: &[f64]) -> Vec<u128> {
    let base = block.header.base_fee_per_gas.unwrap_or_default();
    if block.txs.is_empty() {
        return vec![0; percentiles.len()];
    }
    let mut tips: Vec<(u128, u64)> =
        block.txs.iter().map(|t| (t.tx.effective_tip_per_gas(base).unwrap_or_default(), t.gas_used)).collect();
    tips.sort_unstable_by_key(|(tip, _)| *tip);
    let total: u64 = block.header.gas_used.max(1);
    let mut out = Vec::with_capacity(percentiles.len());
    let mut i = 0;
    let mut sum = tips[0].1;
    for p in percentiles {
        let threshold = (total as f64 * p / 100.0) as u64;
        while sum < threshold && i < tips.len() - 1 {
            i += 1;
            sum += tips[i].1;
        }
        out.push(tips[i].0);
    }
    out
}
