//! On a forked chain the history at or before the fork block is the upstream's: the node
//! never executed those blocks (of the fork block it stores only the header), so a block,
//! transaction, receipt or log there is asked of the upstream through the fork client
//! (cached, under its rate limit and retries) and answered as the upstream renders it.
//! eth_getLogs over a range that spans the fork block is split: the upstream's part up to
//! the fork block, then the node's own. Tracing needs the state before a transaction,
//! which the node does not hold for the upstream's blocks: that is said, not "not found".

use std::sync::Arc;

use alloy_primitives::B256;
use alloy_rpc_types_eth::{BlockNumberOrTag, FilterBlockOption};
use preconf_chain::error::{ChainResult, Missing, Unavailable};
use preconf_chain::store::Upstream;
use preconf_chain::types::BlockData;
use preconf_chain::view::Resolved;
use preconf_chain::{BlockId, ChainError, Node};
use preconf_rpc::params;
use preconf_rpc::render::log;
use serde_json::{json, Value};

/// Where the answer for a block selector comes from.
enum Source {
    Local(Option<Arc<BlockData>>),
    /// At or before the fork block: the upstream's block of this number.
    Upstream(Upstream, u64),
}

fn quantity(n: u64) -> String {
    format!("{n:#x}")
}

fn parse_quantity(s: &str) -> Option<u64> {
    u64::from_str_radix(s.strip_prefix("0x")?, 16).ok()
}

fn block_source(n: &Node, id: BlockId) -> ChainResult<Source> {
    let local = n.api().blocks.by_id(id)?;
    let Some(u) = n.chain().store().upstream() else { return Ok(Source::Local(local)) };
    let number = match (&local, id) {
        (Some(b), _) if b.header.number > u.fork_block => return Ok(Source::Local(local)),
        (Some(b), _) => b.header.number,
        (None, BlockId::Number(k)) if k <= u.fork_block => k,
        (None, BlockId::Hash(hash)) => match upstream_block_number(&u, hash)? {
            Some(k) => k,
            None => return Ok(Source::Local(None)),
        },
        (None, _) => return Ok(Source::Local(None)),
    };
    Ok(Source::Upstream(u, number))
}

/// The number of the upstream's block `hash`, when it is at or before the fork block.
fn upstream_block_number(u: &Upstream, hash: B256) -> ChainResult<Option<u64>> {
    let text = u.source.history("eth_getBlockByHash", json!([hash, false]))?;
    let block: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
    Ok(block["number"].as_str().and_then(parse_quantity))
}

/// A read of one block: `upstream_method` with (number, `extra`...) at or before the fork
/// block, `local` after it.
pub fn by_block(
    n: &Node,
    id: BlockId,
    upstream_method: &'static str,
    extra: Option<Value>,
    local: impl FnOnce(Option<Arc<BlockData>>) -> ChainResult<String>,
) -> ChainResult<String> {
    match block_source(n, id)? {
        Source::Local(block) => local(block),
        Source::Upstream(u, number) => {
            let mut params = vec![json!(quantity(number))];
            params.extend(extra);
            u.source.history(upstream_method, Value::Array(params))
        }
    }
}

/// eth_getTransactionByHash and eth_getTransactionReceipt: the upstream's, when the node
/// has nothing for the hash (neither executed nor pooled here).
#[cfg_attr(test, allow(dead_code))]
pub fn by_transaction(n: &Node, hash: B256, method: &'static str, local: String) -> ChainResult<String> {
    if local != "null" {
        return Ok(local);
    }
    let Some(u) = n.chain().store().upstream() else { return Ok(local) };
    if n.api().transactions.by_hash(hash)?.is_some() {
        return Ok(local);
    }
    u.source.history(method, json!([hash]))
}

/// debug_traceTransaction failed with `err`: a transaction of the upstream's history says
/// why it cannot be traced here.
pub fn trace_failure(n: &Node, hash: B256, err: ChainError) -> ChainError {
    let (ChainError::NotFound(Missing::Transaction), Some(u)) = (&err, n.chain().store().upstream()) else {
        return err;
    };
    match u.source.history("eth_getTransactionByHash", json!([hash])) {
        Ok(text) => {
            let tx: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
            match tx["blockNumber"].as_str().and_then(parse_quantity) {
                Some(block) => Unavailable::TraceBeforeFork { block, fork: u.fork_block }.into(),
                None => err,
            }
        }
        Err(upstream) => upstream,
    }
}

/// debug_traceBlockBy*: refused for a block of the upstream's history.
pub fn check_traceable(n: &Node, id: BlockId) -> ChainResult<()> {
    match block_source(n, id)? {
        Source::Upstream(u, block) => Err(Unavailable::TraceBeforeFork { block, fork: u.fork_block }.into()),
        Source::Local(_) => Ok(()),
    }
}

/// eth_getLogs (`filter` is the JSON the TypeScript side built): on a fork, the part at or
/// before the fork block from the upstream, the rest from the node, in block order.
pub fn logs(n: &Node, filter: &str) -> ChainResult<String> {
    let query = params::log_query(filter)?;
    let local = |q| Ok(log::found_logs(&n.api().logs.query(&q)?));
    let Some(u) = n.chain().store().upstream() else { return local(query) };
    let mut raw: Value = serde_json::from_str(filter).unwrap_or(Value::Null);
    let (from, to) = match query.filter.block_option {
        FilterBlockOption::AtBlockHash(hash) => {
            return match block_source(n, BlockId::Hash(hash))? {
                Source::Upstream(u, _) => u.source.history("eth_getLogs", json!([raw])),
                Source::Local(_) => local(query),
            };
        }
        FilterBlockOption::Range { from_block, to_block } => (from_block, to_block),
    };
    let (from, to) = (range_end(n, from)?, range_end(n, to)?);
    if from > u.fork_block || from > to {
        return local(query);
    }
    raw["fromBlock"] = json!(quantity(from));
    raw["toBlock"] = json!(quantity(to.min(u.fork_block)));
    let before = u.source.history("eth_getLogs", json!([raw]))?;
    if to <= u.fork_block {
        return Ok(before);
    }
    raw["fromBlock"] = json!(quantity(u.fork_block + 1));
    raw["toBlock"] = json!(quantity(to));
    let after = local(params::log_query(&raw.to_string())?)?;
    Ok(splice(&before, &after))
}

/// The block a range end names; `earliest` is the upstream's genesis.
fn range_end(n: &Node, end: Option<BlockNumberOrTag>) -> ChainResult<u64> {
    let id = match end.unwrap_or_default() {
        BlockNumberOrTag::Number(k) => return Ok(k),
        BlockNumberOrTag::Earliest => return Ok(0),
        BlockNumberOrTag::Latest => BlockId::Latest,
        BlockNumberOrTag::Pending => BlockId::Pending,
        BlockNumberOrTag::Safe => BlockId::Safe,
        BlockNumberOrTag::Finalized => BlockId::Finalized,
    };
    let view = n.chain().view();
    Ok(match view.resolve(id)? {
        Resolved::Pending => view.head_number() + 1,
        Resolved::Sealed(k) => k,
    })
}

/// Two JSON arrays as one, without parsing either.
fn splice(before: &str, after: &str) -> String {
    let (b, a) = (before.trim(), after.trim());
    match (b.strip_suffix(']'), a.strip_prefix('[')) {
        _ if b == "[]" => a.to_string(),
        _ if a == "[]" => b.to_string(),
        (Some(head), Some(tail)) => format!("{head},{tail}"),
        _ => b.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::splice;

    #[test]
    fn arrays_are_spliced_in_order() {
        assert_eq!(splice("[1,2]", "[3]"), "[1,2,3]");
        assert_eq!(splice("[]", "[3]"), "[3]");
        assert_eq!(splice("[1]", "[]"), "[1]");
    }
}
