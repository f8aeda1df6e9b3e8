//! `engine_getPayloadBodiesByHashV1`/`ByRangeV1`: the transactions (raw) and withdrawals of
//! stored blocks, for a consensus client that already has their headers.

use alloy_eips::eip4895::Withdrawal;
use alloy_primitives::{Bytes, B256};

use crate::api::blocks::load_block;
use crate::chain_state::ChainState;
use crate::error::{ChainResult, EngineError};

/// The most bodies one request may ask for (the spec's clients ask for up to 32; geth and
/// reth refuse more than 1024 with -38004).
pub const MAX_BODIES: u64 = 1024;

pub struct PayloadBody {
    pub transactions: Vec<Bytes>,
    /// `None` before Shanghai (Canyon), as the spec has it.
    pub withdrawals: Option<Vec<Withdrawal>>,
}

fn body(chain: &ChainState, number: u64) -> ChainResult<Option<PayloadBody>> {
    let view = chain.view();
    let Some(block) = load_block(&view.snapshot, number)? else { return Ok(None) };
    Ok(Some(PayloadBody {
        transactions: block.txs.iter().map(|t| t.tx.encoded_2718().into()).collect(),
        withdrawals: block.header.withdrawals_root.is_some().then_some(block.withdrawals),
    }))
}

/// One entry per hash, `None` where the node has no such block.
pub fn by_hash(chain: &ChainState, hashes: &[B256]) -> ChainResult<Vec<Option<PayloadBody>>> {
    if hashes.len() as u64 > MAX_BODIES {
        return Err(EngineError::TooLargeRequest(hashes.len() as u64).into());
    }
    let view = chain.view();
    hashes
        .iter()
        .map(|h| match view.snapshot.block_number(h)? {
            Some(n) => body(chain, n),
            None => Ok(None),
        })
        .collect()
}

/// `count` bodies from block `start`; the list stops at the head (the spec: no trailing nulls).
pub fn by_range(chain: &ChainState, start: u64, count: u64) -> ChainResult<Vec<Option<PayloadBody>>> {
    if start == 0 || count == 0 {
        return Err(EngineError::InvalidParams("start and count must be at least 1").into());
    }
    if count > MAX_BODIES {
        return Err(EngineError::TooLargeRequest(count).into());
    }
    let head = chain.view().head_number();
    let end = start.saturating_add(count - 1).min(head);
    (start..=end).map(|n| body(chain, n)).collect()
}
