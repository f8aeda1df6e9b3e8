//! Fee data for wallets: suggested tip, gas price, fee history.

use alloy_consensus::Transaction;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::error::{ChainError, ChainResult};
use crate::node::{Node, Resolved};
use crate::rpc;
use crate::types::{BlockData, BlockId};

/// Tip suggested when recent blocks carry no transactions to learn from.
pub const DEFAULT_TIP: u128 = 1_000_000_000;
/// Blocks the tip oracle looks back over, and the percentile it takes (geth's defaults).
const ORACLE_BLOCKS: u64 = 20;
const ORACLE_PERCENTILE: usize = 60;

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FeeHistoryParams {
    pub block_count: u64,
    pub newest_block: String,
    #[serde(default)]
    pub reward_percentiles: Vec<f64>,
}

impl Node {
    /// eth_maxPriorityFeePerGas: the 60th percentile of the cheapest tips paid in recent
    /// blocks (geth's oracle), or 1 gwei when there is nothing to learn from.
    pub fn suggested_tip(&self) -> ChainResult<u128> {
        let view = self.view();
        let head = view.head_number();
        let mut tips = Vec::new();
        for n in head.saturating_sub(ORACLE_BLOCKS - 1)..=head {
            let Some(block) = self.block_data(&view, Resolved::Sealed(n))? else { continue };
            let base = block.header.base_fee_per_gas.unwrap_or_default();
            let mut block_tips: Vec<u128> =
                block.txs.iter().filter_map(|t| t.tx.effective_tip_per_gas(base)).collect();
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
        let view = self.view();
        let base = self.pending_context(&view).base_fee_per_gas.unwrap_or_default() as u128;
        Ok(base + self.suggested_tip()?)
    }

    /// eth_feeHistory over sealed blocks (and the block being built when asked for `pending`).
    pub fn fee_history(&self, p: &FeeHistoryParams) -> ChainResult<Value> {
        if p.reward_percentiles.iter().any(|x| !(0.0..=100.0).contains(x)) {
            return Err(ChainError::InvalidParams("reward percentiles must be between 0 and 100".into()));
        }
        let view = self.view();
        let newest = match self.resolve(&view, BlockId::parse(&p.newest_block)?)? {
            Resolved::Pending => view.head_number() + 1,
            Resolved::Sealed(n) => n,
        };
        if p.block_count == 0 {
            return Ok(json!({ "oldestBlock": rpc::qty(0u64), "baseFeePerGas": [], "gasUsedRatio": [], "baseFeePerBlobGas": [], "blobGasUsedRatio": [] }));
        }
        let oldest = newest.saturating_sub(p.block_count - 1);
        let mut base_fees = Vec::new();
        let mut ratios = Vec::new();
        let mut rewards = Vec::new();
        let mut last: Option<BlockData> = None;
        for n in oldest..=newest {
            let at = if n > view.head_number() { Resolved::Pending } else { Resolved::Sealed(n) };
            let Some(block) = self.block_data(&view, at)? else { break };
            let h = &block.header;
            base_fees.push(rpc::qty(h.base_fee_per_gas.unwrap_or_default()));
            ratios.push(json!(if h.gas_limit == 0 { 0.0 } else { h.gas_used as f64 / h.gas_limit as f64 }));
            if !p.reward_percentiles.is_empty() {
                rewards.push(Value::Array(block_rewards(&block, &p.reward_percentiles)));
            }
            last = Some((*block).clone());
        }
        // One more base fee: the block after the newest.
        if let Some(b) = &last {
            let next = b.header.next_block_base_fee(self.spec.base_fee_params()).unwrap_or_default();
            base_fees.push(rpc::qty(next));
        }
        let n = ratios.len();
        let mut out = json!({
            "oldestBlock": rpc::qty(oldest),
            "baseFeePerGas": base_fees,
            "gasUsedRatio": ratios,
            "baseFeePerBlobGas": vec![rpc::qty(1u64); n + 1],
            "blobGasUsedRatio": vec![json!(0); n],
        });
        if !p.reward_percentiles.is_empty() {
            out["reward"] = Value::Array(rewards);
        }
        Ok(out)
    }
}

/// Tips at the given percentiles of gas used, as geth computes them.
fn block_rewards(block: &BlockData, percentiles: &[f64]) -> Vec<Value> {
    let base = block.header.base_fee_per_gas.unwrap_or_default();
    if block.txs.is_empty() {
        return percentiles.iter().map(|_| rpc::qty(0u64)).collect();
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
        out.push(rpc::qty(tips[i].0));
    }
    out
}
