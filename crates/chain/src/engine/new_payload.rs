//! engine_newPayloadV2–V4: a block op-node received (gossip, or the one it just got from
//! getPayload) checked and executed on its parent's stored state through the OP import
//! path (import/op.rs: the same header, body and execution checks `preconf-node import`
//! applies), then kept in memory until a forkchoice update makes it the head
//! (forkchoice.rs). Statuses as the Engine API words them:
//!
//! - `VALID` with the block's hash: executed, or known already (stored, or kept);
//! - `INVALID` with `latestValidHash` null: the payload does not make the block it names
//!   (a transaction that does not decode, a hash that differs), as geth answers;
//! - `INVALID` with the parent's hash: the block breaks a rule or its execution disagrees
//!   with its header (or its parent was refused: the parent's own latest valid hash);
//! - `SYNCING`: the parent is not known;
//! - `ACCEPTED`: the parent is a kept block that is not canonical (not executed: a
//!   forkchoice to it answers `SYNCING` until the node is given its parent chain).

use std::sync::Arc;

use alloy_consensus::{proofs, Block, BlockBody, Header, EMPTY_OMMER_ROOT_HASH};
use alloy_eips::eip4895::{Withdrawal, Withdrawals};
use alloy_eips::eip7685::EMPTY_REQUESTS_HASH;
use alloy_primitives::{Address, Bloom, Bytes, B256, B64, U256};
use preconf_op::{OpConfig, OpSpecId, OpTx};

use super::rules;
use super::types::{PayloadStatus, Version};
use crate::chain_state::ChainState;
use crate::consensus::{check_executed, check_header, Parent};
use crate::error::{ChainResult, EngineError};
use crate::import::{op, ImportError};
use crate::store::{InFlightBlock, StoredBody, StoredReceipts};
use crate::types::BlockData;

/// ExecutionPayloadV1–V3 and OP's V4 (`withdrawalsRoot`), as the chain reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExecutionPayload {
    pub parent_hash: B256,
    pub fee_recipient: Address,
    pub state_root: B256,
    pub receipts_root: B256,
    pub logs_bloom: Bloom,
    pub prev_randao: B256,
    pub block_number: u64,
    pub gas_limit: u64,
    pub gas_used: u64,
    pub timestamp: u64,
    pub extra_data: Bytes,
    pub base_fee_per_gas: U256,
    pub block_hash: B256,
    pub transactions: Vec<Bytes>,
    pub withdrawals: Option<Vec<Withdrawal>>,
    pub blob_gas_used: Option<u64>,
    pub excess_blob_gas: Option<u64>,
    /// Isthmus: the L2ToL1MessagePasser's storage root (V4).
    pub withdrawals_root: Option<B256>,
}

/// newPayload's parameters: the payload, then what V3 and V4 add.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewPayload {
    pub payload: ExecutionPayload,
    pub versioned_hashes: Option<Vec<B256>>,
    pub parent_beacon_block_root: Option<B256>,
    pub execution_requests: Option<Vec<Bytes>>,
}

/// A block newPayload executed: as the store writes it, and as readers and events see it.
pub struct KeptBlock {
    pub write: Arc<InFlightBlock>,
    pub data: Arc<BlockData>,
}

impl KeptBlock {
    pub fn number(&self) -> u64 {
        self.write.number()
    }

    pub fn hash(&self) -> B256 {
        self.write.hash
    }

    pub fn parent_hash(&self) -> B256 {
        self.write.header.parent_hash
    }
}

/// The members each version takes (-32602 otherwise), then the fork its timestamp is in
/// (-38005), then withdrawals against Canyon (-32602), as op-geth checks them.
pub fn check_version(op: &OpConfig, version: Version, p: &NewPayload) -> ChainResult<()> {
    let bad = |what: &'static str| Err(EngineError::InvalidParams(what).into());
    let pl = &p.payload;
    match version {
        Version::V1 => return bad("newPayloadV1 is not served: use V2"),
        Version::V2 => {
            if pl.blob_gas_used.is_some() || pl.excess_blob_gas.is_some() {
                return bad("blobGasUsed and excessBlobGas not supported in V2");
            }
        }
        Version::V3 | Version::V4 => {
            if pl.blob_gas_used.is_none() || pl.excess_blob_gas.is_none() {
                return bad("nil blobGasUsed or excessBlobGas post-cancun");
            }
            if p.versioned_hashes.is_none() {
                return bad("nil versionedHashes post-cancun");
            }
            if p.parent_beacon_block_root.is_none() {
                return bad("nil parentBeaconBlockRoot post-cancun");
            }
        }
    }
    if version == Version::V4 {
        match &p.execution_requests {
            None => return bad("nil executionRequests post-prague"),
            Some(r) if !r.is_empty() => return bad("non-empty executionRequests: OP chains have none"),
            Some(_) => {}
        }
        if pl.withdrawals_root.is_none() {
            return bad("nil withdrawalsRoot post-isthmus");
        }
    } else if pl.withdrawals_root.is_some() {
        return bad("withdrawalsRoot not supported before V4");
    }
    rules::check_payload_version(op, version, pl.timestamp)?;
    match (op.is_active(OpSpecId::CANYON, pl.timestamp), pl.withdrawals.is_some()) {
        (true, false) => bad("nil withdrawals post-shanghai"),
        (false, true) => bad("non-nil withdrawals pre-shanghai"),
        _ => Ok(()),
    }
}

/// The block the payload describes and its hash, or why it describes none (an INVALID
/// status with no latest valid hash).
pub fn assemble(op: &OpConfig, p: &NewPayload) -> Result<(Block<OpTx>, B256), String> {
    let pl = &p.payload;
    if let Some(hashes) = p.versioned_hashes.as_ref().filter(|h| !h.is_empty()) {
        return Err(format!("invalid number of versionedHashes: have {}, want 0", hashes.len()));
    }
    let txs = pl
        .transactions
        .iter()
        .enumerate()
        .map(|(i, raw)| OpTx::decode_2718(raw).map_err(|e| format!("invalid transaction {i}: {e}")))
        .collect::<Result<Vec<_>, _>>()?;
    let t = pl.timestamp;
    let isthmus = op.is_active(OpSpecId::ISTHMUS, t);
    let withdrawals_root = match (isthmus, &pl.withdrawals) {
        (true, _) => pl.withdrawals_root,
        (false, Some(w)) => Some(proofs::calculate_withdrawals_root(w)),
        (false, None) => None,
    };
    let base_fee = u64::try_from(pl.base_fee_per_gas).map_err(|_| "baseFeePerGas above 64 bits".to_string())?;
    let header = Header {
        parent_hash: pl.parent_hash,
        ommers_hash: EMPTY_OMMER_ROOT_HASH,
        beneficiary: pl.fee_recipient,
        state_root: pl.state_root,
        transactions_root: proofs::calculate_transaction_root(&txs),
        receipts_root: pl.receipts_root,
        logs_bloom: pl.logs_bloom,
        difficulty: U256::ZERO,
        number: pl.block_number,
        gas_limit: pl.gas_limit,
        gas_used: pl.gas_used,
        timestamp: t,
        extra_data: pl.extra_data.clone(),
        mix_hash: pl.prev_randao,
        nonce: B64::ZERO,
        base_fee_per_gas: Some(base_fee),
        withdrawals_root,
        blob_gas_used: pl.blob_gas_used,
        excess_blob_gas: pl.excess_blob_gas,
        parent_beacon_block_root: p.parent_beacon_block_root,
        requests_hash: isthmus.then_some(EMPTY_REQUESTS_HASH),
        ..Default::default()
    };
    let hash = header.hash_slow();
    let body =
        BlockBody { transactions: txs, ommers: Vec::new(), withdrawals: pl.withdrawals.clone().map(Withdrawals::new) };
    Ok((Block { header, body }, hash))
}

/// Why execution refused the block, or the store's own failure (not the block's fault).
pub enum Verdict {
    Valid(KeptBlock),
    Invalid(String),
}

/// Checks and executes `block` on `parent` (block `parent.number`, canonical in the current
/// view), as `preconf-node import` does; nothing is written.
pub fn execute(
    chain: &ChainState,
    op: &OpConfig,
    parent: &Header,
    block: Block<OpTx>,
    hash: B256,
) -> ChainResult<Verdict> {
    let spec = chain.spec();
    let view = chain.view();
    let total_difficulty = spec.genesis.config.terminal_total_difficulty.unwrap_or_default();
    let parent_ref = Parent { header: parent, hash: block.header.parent_hash, total_difficulty };
    let checked = check_header(spec, &parent_ref, &block.header)
        .map_err(ImportError::from)
        .and_then(|_| op::check_body(spec, &block));
    match checked {
        Ok(()) => {}
        Err(ImportError::Chain(e)) => return Err(e),
        Err(e) => return Ok(Verdict::Invalid(e.to_string())),
    }
    // A flashblocks follower that executed this very block hands it over (its hash proves
    // the same header, roots included, and so the same transactions, whose senders it
    // recovered): the block is neither executed nor its signatures recovered again.
    let (txs, changes, trie) = match chain.followed_block(block.header.parent_hash, hash) {
        Some(f) => (f.txs, f.changes, f.trie),
        None => {
            let run = || -> Result<_, ImportError> {
                let senders = op::senders(&block)?;
                let executed = op::execute_block(spec, op, &view.snapshot, &view.codes, parent, &block, &senders)?;
                check_executed(&block.header, &executed.executed)?;
                Ok(executed)
            };
            match run() {
                Ok(e) => (e.txs.into_iter().map(Arc::new).collect(), e.changes, e.trie),
                Err(ImportError::Chain(e)) => return Err(e),
                Err(e) => return Ok(Verdict::Invalid(e.to_string())),
            }
        }
    };
    let withdrawals: Vec<Withdrawal> = block.body.withdrawals.map(|w| w.into_inner()).unwrap_or_default();
    let body = StoredBody { txs: txs.iter().map(|t| t.stored_tx()).collect(), ommers: Vec::new(), withdrawals };
    let receipts = StoredReceipts { receipts: txs.iter().map(|t| Bytes::from(t.receipt_2718())).collect() };
    let tx_hashes = txs.iter().map(|t| t.hash()).collect();
    let write =
        InFlightBlock::new(block.header.clone(), hash, body.clone(), receipts, tx_hashes, Arc::new(changes), trie);
    let data = BlockData {
        header: block.header,
        hash: Some(hash),
        txs: txs.into(),
        preconf_index: None,
        ommers: Vec::new(),
        withdrawals: body.withdrawals,
        payload_id: None,
    };
    Ok(Verdict::Valid(KeptBlock { write: Arc::new(write), data: Arc::new(data) }))
}

/// `VALID` for `hash`.
pub fn valid(hash: B256) -> PayloadStatus {
    PayloadStatus::Valid { latest_valid_hash: hash }
}
