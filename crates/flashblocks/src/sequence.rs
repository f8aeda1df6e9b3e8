//! The flashblocks of one payload put back together: what a follower has of the block
//! after each index (every transaction so far, the header fields of the latest diff), and
//! the header they make. The follower re-executes the transactions; the header is what its
//! execution must come to, and what the builder's `block_hash` names.

use alloy_consensus::constants::EMPTY_OMMER_ROOT_HASH;
use alloy_consensus::Header;
use alloy_eips::eip7685::EMPTY_REQUESTS_HASH;
use alloy_primitives::{Bytes, B256, B64};

use crate::{ExecutionPayloadBaseV1, ExecutionPayloadFlashblockDeltaV1, FlashblocksPayloadV1};

#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum SequenceError {
    #[error("flashblock {index} of payload {payload_id} arrived before its index 0")]
    NoBase { payload_id: B64, index: u64 },
    #[error("index 0 of payload {payload_id} has no base")]
    MissingBase { payload_id: B64 },
    #[error("flashblock {got} of payload {payload_id} follows index {last}")]
    OutOfOrder { payload_id: B64, last: u64, got: u64 },
    #[error("flashblock of payload {got} while payload {current} is open (and it is not its index 0)")]
    OtherPayload { current: B64, got: B64 },
}

/// Which header fields the chain's forks add (the follower knows them from its chain spec).
#[derive(Clone, Copy, Debug, Default)]
pub struct HeaderShape {
    /// Canyon (Shanghai): `withdrawalsRoot`.
    pub canyon: bool,
    /// Ecotone (Cancun): blob gas fields and the parent beacon root.
    pub ecotone: bool,
    /// Isthmus (Prague): the (empty) requests hash.
    pub isthmus: bool,
}

/// The payload being followed, as of its latest flashblock.
#[derive(Clone, Debug)]
pub struct Sequence {
    pub payload_id: B64,
    pub base: ExecutionPayloadBaseV1,
    /// Index of the latest flashblock applied.
    pub index: u64,
    /// Every transaction so far, in block order.
    pub transactions: Vec<Bytes>,
    /// The latest diff (its own transactions included).
    pub latest: ExecutionPayloadFlashblockDeltaV1,
}

impl Sequence {
    /// Starts a payload at its index 0.
    pub fn start(first: FlashblocksPayloadV1) -> Result<Self, SequenceError> {
        let payload_id = first.payload_id;
        if first.index != 0 {
            return Err(SequenceError::NoBase { payload_id, index: first.index });
        }
        let base = first.base.ok_or(SequenceError::MissingBase { payload_id })?;
        Ok(Self { payload_id, base, index: 0, transactions: first.diff.transactions.clone(), latest: first.diff })
    }

    /// Applies the next flashblock of the same payload; a new payload's index 0 starts over
    /// (`Ok(false)` then: the caller's block was replaced).
    pub fn push(&mut self, next: FlashblocksPayloadV1) -> Result<bool, SequenceError> {
        if next.payload_id != self.payload_id {
            if next.index == 0 {
                *self = Self::start(next)?;
                return Ok(false);
            }
            return Err(SequenceError::OtherPayload { current: self.payload_id, got: next.payload_id });
        }
        if next.index != self.index + 1 {
            return Err(SequenceError::OutOfOrder { payload_id: self.payload_id, last: self.index, got: next.index });
        }
        self.index = next.index;
        self.transactions.extend(next.diff.transactions.iter().cloned());
        self.latest = next.diff;
        Ok(true)
    }

    /// The block's header as of the latest flashblock: `base` and the latest diff's fields,
    /// the transactions root over every transaction so far. Its hash is the diff's
    /// `block_hash` when the builder computed one.
    pub fn header(&self, shape: HeaderShape) -> Header {
        let (b, d) = (&self.base, &self.latest);
        let transactions_root =
            alloy_trie::root::ordered_trie_root_with_encoder(&self.transactions, |tx, buf| buf.extend_from_slice(tx));
        Header {
            parent_hash: b.parent_hash,
            ommers_hash: EMPTY_OMMER_ROOT_HASH,
            beneficiary: b.fee_recipient,
            state_root: d.state_root,
            transactions_root,
            receipts_root: d.receipts_root,
            logs_bloom: d.logs_bloom,
            number: b.block_number,
            gas_limit: b.gas_limit,
            gas_used: d.gas_used,
            timestamp: b.timestamp,
            extra_data: b.extra_data.clone(),
            mix_hash: b.prev_randao,
            base_fee_per_gas: Some(b.base_fee_per_gas.saturating_to()),
            withdrawals_root: shape.canyon.then_some(d.withdrawals_root),
            blob_gas_used: shape.ecotone.then_some(d.blob_gas_used.unwrap_or(0)),
            excess_blob_gas: shape.ecotone.then_some(0),
            parent_beacon_block_root: shape.ecotone.then_some(b.parent_beacon_block_root),
            requests_hash: shape.isthmus.then_some(EMPTY_REQUESTS_HASH),
            ..Default::default()
        }
    }

    /// The diff's block hash, when the builder computed the roots (zero otherwise).
    pub fn block_hash(&self) -> Option<B256> {
        (!self.latest.block_hash.is_zero()).then_some(self.latest.block_hash)
    }
}
