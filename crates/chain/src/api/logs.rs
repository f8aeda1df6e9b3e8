//! eth_getLogs: logs of sealed blocks (and the block being built, for `pending`),
//! filtered by address and topics with geth's semantics.

use std::sync::Arc;

use alloy_primitives::Log;
use alloy_rpc_types_eth::{BlockNumberOrTag, Filter, FilterBlockOption};

use super::blocks::Blocks;
use crate::chain_state::ChainState;
use crate::error::{ChainResult, InvalidParam, Limit, Rejection};
use crate::types::{BlockData, BlockId};
use crate::view::{ChainView, Resolved};

/// A log query: alloy's `Filter`, plus how many topic positions the request named.
/// geth skips a log with fewer topics than the filter has positions, even when the extra
/// positions are wildcards; `Filter` cannot tell `[A]` from `[A, null]`.
pub struct LogQuery {
    pub filter: Filter,
    pub topic_positions: usize,
}

impl LogQuery {
    pub fn matches(&self, log: &Log) -> bool {
        log.topics().len() >= self.topic_positions && self.filter.matches(log)
    }
}

/// One matching log: the block it is in, its transaction's index, its index in the
/// transaction's receipt and in the block.
pub struct FoundLog {
    pub block: Arc<BlockData>,
    pub tx_index: usize,
    pub log_in_tx: usize,
    pub log_index: u64,
}

pub struct Logs {
    chain: Arc<ChainState>,
    blocks: Arc<Blocks>,
}

impl Logs {
    pub fn new(chain: Arc<ChainState>, blocks: Arc<Blocks>) -> Self {
        Self { chain, blocks }
    }

    pub fn query(&self, q: &LogQuery) -> ChainResult<Vec<FoundLog>> {
        let view = self.chain.view();
        let mut out = Vec::new();
        let (from, to) = match q.filter.block_option {
            FilterBlockOption::AtBlockHash(hash) => {
                let at = view.resolve_opt(BlockId::Hash(hash))?.ok_or(Rejection::UnknownBlock)?;
                if let Some(block) = self.blocks.block_data(&view, at)? {
                    self.collect(q, &block, &mut out)?;
                }
                return Ok(out);
            }
            FilterBlockOption::Range { from_block, to_block } => (from_block, to_block),
        };
        let head = view.head_number();
        let pending_number = head + 1;
        let last = if view.pending.is_some() { pending_number } else { head };
        let from = self.number_of(&view, from)?;
        let to = self.number_of(&view, to)?;
        if from > to {
            return Err(InvalidParam::BlockRangeOrder.into());
        }
        if to > last {
            return Err(InvalidParam::BlockRangePastHead.into());
        }
        // Blocks older than the kept history have no receipts (`--history-blocks`).
        view.snapshot.check_history(from.min(head))?;
        let span = to - from + 1;
        let max = self.chain.config().logs_max_range;
        if span > max {
            return Err(Limit::BlockRange { span, max }.into());
        }
        for n in from..=to {
            let at = if n == pending_number { Resolved::Pending } else { Resolved::Sealed(n) };
            if let Resolved::Sealed(n) = at {
                // Skip blocks whose bloom rules the filter out without reading their receipts.
                match view.snapshot.header(n)? {
                    Some(h) if !q.filter.matches_bloom(h.logs_bloom) => continue,
                    None => continue,
                    _ => {}
                }
            }
            if let Some(block) = self.blocks.block_data_uncached(&view, at)? {
                self.collect(q, &block, &mut out)?;
            }
        }
        Ok(out)
    }

    /// The block number a range end names (`latest` when it names none).
    fn number_of(&self, view: &ChainView, tag: Option<BlockNumberOrTag>) -> ChainResult<u64> {
        let id = match tag.unwrap_or_default() {
            BlockNumberOrTag::Number(n) => return Ok(n),
            BlockNumberOrTag::Latest => BlockId::Latest,
            BlockNumberOrTag::Pending => BlockId::Pending,
            BlockNumberOrTag::Safe => BlockId::Safe,
            BlockNumberOrTag::Finalized => BlockId::Finalized,
            BlockNumberOrTag::Earliest => BlockId::Earliest,
        };
        Ok(match view.resolve(id)? {
            Resolved::Pending => view.head_number() + 1,
            Resolved::Sealed(n) => n,
        })
    }

    fn collect(&self, q: &LogQuery, block: &Arc<BlockData>, out: &mut Vec<FoundLog>) -> ChainResult<()> {
        let mut log_index = 0u64;
        for (tx_index, etx) in block.txs.iter().enumerate() {
            for (log_in_tx, log) in etx.receipt.logs.iter().enumerate() {
                if q.matches(log) {
                    if out.len() >= self.chain.config().logs_max_results {
                        return Err(Limit::LogResults(self.chain.config().logs_max_results).into());
                    }
                    out.push(FoundLog { block: block.clone(), tx_index, log_in_tx, log_index });
                }
                log_index += 1;
            }
        }
        Ok(())
    }
}
