//! eth_getLogs: logs of sealed blocks (and the block being built, for `pending`),
//! filtered by address and topics with geth's semantics.

use alloy_primitives::{Address, Bloom, BloomInput, Log, B256};
use serde::Deserialize;
use serde_json::Value;

use crate::error::{ChainError, ChainResult};
use crate::node::{Node, Resolved};
use crate::rpc;
use crate::types::{BlockData, BlockId};

/// A validated filter from the TypeScript side: selectors are canonical strings.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LogFilter {
    pub from_block: Option<String>,
    pub to_block: Option<String>,
    pub block_hash: Option<B256>,
    #[serde(default)]
    pub addresses: Vec<Address>,
    /// Position-wise: `None` matches anything; a list matches any of its entries.
    #[serde(default)]
    pub topics: Vec<Option<Vec<B256>>>,
}

impl LogFilter {
    pub fn matches(&self, log: &Log) -> bool {
        if !self.addresses.is_empty() && !self.addresses.contains(&log.address) {
            return false;
        }
        let topics = log.topics();
        if self.topics.len() > topics.len() {
            return false;
        }
        self.topics.iter().zip(topics).all(|(want, have)| match want {
            None => true,
            Some(any) => any.is_empty() || any.contains(have),
        })
    }

    /// Whether a block's bloom can hold a matching log (false positives allowed).
    fn may_match(&self, bloom: &Bloom) -> bool {
        let address_ok = self.addresses.is_empty()
            || self.addresses.iter().any(|a| bloom.contains_input(BloomInput::Raw(a.as_slice())));
        address_ok
            && self.topics.iter().all(|t| match t {
                None => true,
                Some(any) => any.is_empty() || any.iter().any(|h| bloom.contains_input(BloomInput::Raw(h.as_slice()))),
            })
    }
}

impl Node {
    pub fn logs(&self, filter: &LogFilter) -> ChainResult<Value> {
        let view = self.view();
        let mut out = Vec::new();
        if let Some(hash) = filter.block_hash {
            if filter.from_block.is_some() || filter.to_block.is_some() {
                return Err(ChainError::InvalidParams(
                    "cannot specify both BlockHash and FromBlock/ToBlock, choose one or the other".into(),
                ));
            }
            let at = self.resolve_opt(&view, BlockId::Hash(hash))?.ok_or_else(|| ChainError::Rejected("unknown block".into()))?;
            if let Some(block) = self.block_data(&view, at)? {
                self.collect(filter, &block, &mut out)?;
            }
            return Ok(Value::Array(out));
        }
        let head = view.head_number();
        let pending_number = head + 1;
        let number_of = |s: &Option<String>| -> ChainResult<u64> {
            let id = match s {
                Some(s) => BlockId::parse(s)?,
                None => BlockId::Latest,
            };
            Ok(match id {
                BlockId::Pending if view.pending.is_some() => pending_number,
                BlockId::Number(n) => n,
                other => match self.resolve(&view, other)? {
                    Resolved::Pending => pending_number,
                    Resolved::Sealed(n) => n,
                },
            })
        };
        let from = number_of(&filter.from_block)?;
        let to = number_of(&filter.to_block)?;
        let last = if view.pending.is_some() { pending_number } else { head };
        if from > to {
            return Err(ChainError::InvalidParams("invalid block range params".into()));
        }
        if to > last {
            return Err(ChainError::InvalidParams("block range extends beyond current head block".into()));
        }
        let span = to - from + 1;
        if span > self.config.logs_max_range {
            return Err(ChainError::LimitExceeded(format!(
                "block range too large: {span} blocks, the limit is {}",
                self.config.logs_max_range
            )));
        }
        for n in from..=to {
            let at = if n == pending_number && view.pending.is_some() { Resolved::Pending } else { Resolved::Sealed(n) };
            if let Resolved::Sealed(n) = at {
                // Skip blocks whose bloom rules the filter out without reading their receipts.
                match view.snapshot.header(n)? {
                    Some(h) if !filter.may_match(&h.logs_bloom) => continue,
                    None => continue,
                    _ => {}
                }
            }
            if let Some(block) = self.block_data(&view, at)? {
                self.collect(filter, &block, &mut out)?;
            }
        }
        Ok(Value::Array(out))
    }

    fn collect(&self, filter: &LogFilter, block: &BlockData, out: &mut Vec<Value>) -> ChainResult<()> {
        let mut log_index = 0u64;
        for (i, etx) in block.txs.iter().enumerate() {
            let position = rpc::position_in(block, i);
            let hash = etx.hash();
            for log in &etx.receipt.logs {
                if filter.matches(log) {
                    if out.len() >= self.config.logs_max_results {
                        return Err(ChainError::LimitExceeded(format!(
                            "query returned more than {} results; narrow the block range or the filter",
                            self.config.logs_max_results
                        )));
                    }
                    out.push(rpc::log_json(log, &position, &hash, log_index));
                }
                log_index += 1;
            }
        }
        Ok(())
    }
}
