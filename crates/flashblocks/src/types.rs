//! The message a flashblocks builder publishes per pre-confirmation, with the keys and
//! number formats rollup-boost, op-rbuilder and Base's consumers use: snake_case keys;
//! header quantities as hex strings; `index` and `metadata.block_number` as JSON numbers.

use std::collections::BTreeMap;

use alloy_eips::eip4895::Withdrawal;
use alloy_primitives::{Address, Bloom, Bytes, B256, B64, U256};
use serde::{Deserialize, Serialize};

/// One flashblock: pre-confirmation `index` of the payload `payload_id`. Index 0 carries
/// `base` (what stays the same for the whole block); every index carries a `diff` with the
/// transactions added since the previous index and the block's roots as of this one.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FlashblocksPayloadV1 {
    pub payload_id: B64,
    pub index: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<ExecutionPayloadBaseV1>,
    pub diff: ExecutionPayloadFlashblockDeltaV1,
    /// Builders have sent different things here over time; a consumer that re-executes
    /// needs only `block_number`, so a metadata it cannot read does not refuse the message.
    #[serde(default)]
    pub metadata: Metadata,
}

/// The block's context, fixed when it opens (sent with index 0 only).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecutionPayloadBaseV1 {
    pub parent_beacon_block_root: B256,
    pub parent_hash: B256,
    pub fee_recipient: Address,
    pub prev_randao: B256,
    #[serde(with = "alloy_serde::quantity")]
    pub block_number: u64,
    #[serde(with = "alloy_serde::quantity")]
    pub gas_limit: u64,
    #[serde(with = "alloy_serde::quantity")]
    pub timestamp: u64,
    pub extra_data: Bytes,
    pub base_fee_per_gas: U256,
}

/// What one pre-confirmation changed: its new transactions, and the header fields of the
/// block as pre-confirmed so far.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecutionPayloadFlashblockDeltaV1 {
    /// Zero when the builder does not compute it per flashblock (op-rbuilder's
    /// `--flashblocks.disable-state-root`); `block_hash` is then zero too.
    pub state_root: B256,
    pub receipts_root: B256,
    pub logs_bloom: Bloom,
    #[serde(with = "alloy_serde::quantity")]
    pub gas_used: u64,
    pub block_hash: B256,
    /// EIP-2718 encodings of the transactions added by this flashblock, in block order.
    pub transactions: Vec<Bytes>,
    pub withdrawals: Vec<Withdrawal>,
    pub withdrawals_root: B256,
    /// Jovian's DA footprint; absent before Jovian (read as 0).
    #[serde(default, skip_serializing_if = "Option::is_none", with = "alloy_serde::quantity::opt")]
    pub blob_gas_used: Option<u64>,
}

/// op-rbuilder's metadata: the receipts of this flashblock's transactions by hash (each
/// tagged with its type's name: `Legacy`, `Eip1559`, `Deposit`, ...), the balances of the
/// accounts it changed, and the block number.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Metadata {
    #[serde(default)]
    pub receipts: BTreeMap<B256, serde_json::Value>,
    #[serde(default)]
    pub new_account_balances: BTreeMap<Address, U256>,
    #[serde(default)]
    pub block_number: u64,
}
