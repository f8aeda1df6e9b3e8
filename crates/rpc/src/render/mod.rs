//! Chain results as geth-shaped JSON text, built with alloy's RPC types. Deviations from
//! what alloy's types can express (a pending block's null hash, `preconfIndex`) are
//! patched on the rendered value, in one place each.

pub mod block;
pub mod events;
pub mod log;
pub mod node;
pub mod op;
pub mod proof;
pub mod receipt;
pub mod simulate;
pub mod trace;
pub mod transaction;
pub mod txpool;

use alloy_primitives::B256;
use preconf_chain::types::BlockData;
use serde::Serialize;

/// Renders a value alloy's types already serialize in geth's shape.
pub fn to_json<T: Serialize>(value: &T) -> String {
    // Serializing these types cannot fail: they hold no maps with non-string keys.
    serde_json::to_string(value).unwrap_or_else(|_| "null".to_string())
}

/// A quantity: `"0x2a"`.
pub fn quantity<T: std::fmt::LowerHex>(v: T) -> String {
    format!("\"{v:#x}\"")
}

/// A 32-byte word, zero-padded (eth_getStorageAt).
pub fn word(v: alloy_primitives::U256) -> String {
    format!("\"{:#x}\"", B256::from(v))
}

/// Where a transaction sits, for the block-related members of its JSON.
#[derive(Clone, Copy, Debug)]
pub struct TxPosition {
    /// `None` while its block is being built.
    pub block_hash: Option<B256>,
    pub block_number: u64,
    pub block_timestamp: u64,
    pub base_fee: Option<u64>,
    pub index: u64,
}

impl TxPosition {
    pub fn in_block(block: &BlockData, index: usize) -> Self {
        Self {
            block_hash: block.hash,
            block_number: block.header.number,
            block_timestamp: block.header.timestamp,
            base_fee: block.header.base_fee_per_gas,
            index: index as u64,
        }
    }

    /// Receipts and logs of pre-confirmed transactions carry the zero hash: the block has
    /// no hash until it is sealed, and clients such as ethers reject null there.
    pub fn receipt_block_hash(&self) -> B256 {
        self.block_hash.unwrap_or(B256::ZERO)
    }
}
