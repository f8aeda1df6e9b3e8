//! What op-node hands the execution client for a new block (the Engine API's payload
//! attributes as OP derives them): what a block is built from, exactly (`block::execute`)
//! or as the sequencer's block that the pool then fills (`header::attributes_header`).

use alloy_primitives::{Address, Bytes, B256, B64};

/// What op-node hands the execution client for a new block.
#[derive(Clone, Debug)]
pub struct Attributes {
    pub timestamp: u64,
    pub prev_randao: B256,
    pub fee_recipient: Address,
    pub parent_beacon_block_root: Option<B256>,
    pub gas_limit: u64,
    pub transactions: Vec<Bytes>,
    /// Holocene: denominator (u32 BE) ‖ elasticity (u32 BE); the block's extraData is 0x00 ‖ these.
    pub eip1559_params: Option<B64>,
    /// Jovian: the base fee's floor in wei (op-node's `minBaseFee`, from the SystemConfig); the
    /// block's extraData carries it after the EIP-1559 parameters, the next block's base fee
    /// does not go below it.
    pub min_base_fee: Option<u64>,
}
