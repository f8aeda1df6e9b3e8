//! What the Engine API talks about, as the chain sees it (no JSON: crates/rpc reads and
//! writes these).

use alloy_consensus::Header;
use alloy_eips::eip4895::Withdrawal;
use alloy_primitives::{Address, Bytes, B256, B64, U256};

/// The method version a request came in (engine_forkchoiceUpdatedV2 → `V2`): each serves
/// its forks and takes its members.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Version {
    V1 = 1,
    V2 = 2,
    V3 = 3,
    V4 = 4,
}

impl Version {
    pub fn from_number(n: u32) -> Option<Self> {
        Some(match n {
            1 => Version::V1,
            2 => Version::V2,
            3 => Version::V3,
            4 => Version::V4,
            _ => return None,
        })
    }
}

/// `engine_forkchoiceUpdated`'s first parameter: a zero hash for safe or finalized means
/// "not known yet" (before the first L1 block is derived).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ForkchoiceState {
    pub head: B256,
    pub safe: B256,
    pub finalized: B256,
}

/// op-node's payload attributes: the Ethereum ones, then the OP members.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PayloadAttributes {
    pub timestamp: u64,
    pub prev_randao: B256,
    pub fee_recipient: Address,
    /// From Shanghai (Canyon): present and empty on OP chains; absent before.
    pub withdrawals: Option<Vec<Withdrawal>>,
    /// From Cancun (Ecotone): the L1 origin's beacon root.
    pub parent_beacon_block_root: Option<B256>,
    /// Raw EIP-2718 transactions the block starts with (deposits first).
    pub transactions: Vec<Bytes>,
    /// true: the block holds exactly `transactions`; false: the pool's follow them.
    pub no_tx_pool: bool,
    pub gas_limit: Option<u64>,
    /// Holocene: denominator ‖ elasticity (u32 BE each).
    pub eip1559_params: Option<B64>,
    /// Jovian: the base fee's floor.
    pub min_base_fee: Option<u64>,
}

/// The 8 bytes op-node quotes back in getPayload.
pub type PayloadId = B64;

/// A payload's verdict, as the Engine API words it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PayloadStatus {
    Valid {
        latest_valid_hash: B256,
    },
    Invalid {
        latest_valid_hash: Option<B256>,
        validation_error: String,
    },
    /// The parent (or the head) is not known: the node cannot judge yet.
    Syncing,
    /// Known-valid parent but not on the canonical chain: taken, not executed yet.
    Accepted,
}

/// `engine_forkchoiceUpdated`'s answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ForkchoiceOutcome {
    pub status: PayloadStatus,
    pub payload_id: Option<PayloadId>,
}

/// A block built for op-node: its header and transactions as the payload carries them.
#[derive(Clone, Debug)]
pub struct BuiltPayload {
    pub id: PayloadId,
    pub header: Header,
    pub hash: B256,
    pub transactions: Vec<Bytes>,
    pub withdrawals: Option<Vec<Withdrawal>>,
    /// What the fee recipient earns from priority fees (wei).
    pub block_value: U256,
}
