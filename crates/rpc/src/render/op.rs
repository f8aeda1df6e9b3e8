//! The members op-geth adds to an OP chain's receipts, merged into the rendered Ethereum
//! receipt: a transaction's L1 fee (from the block's L1-info deposit, its first
//! transaction), a deposit's type and receipt nonce. An Ethereum chain never comes here.

use alloy_consensus::Transaction as _;
use alloy_rpc_types_eth::TransactionReceipt;
use preconf_chain::types::{BlockData, ExecutedTx};
use preconf_op::l1info::{receipt_fields, L1Info};
use preconf_op::rpc::{deposit_receipt_members, l1_fee_members};
use preconf_op::{OpConfig, OpSpecId, OpTx};
use serde_json::Value;

/// What an OP block's receipts need from the block: its fork and L1 values.
pub struct OpBlockContext {
    spec: OpSpecId,
    /// `None` when the block does not open with an L1-info deposit (genesis).
    l1: Option<L1Info>,
}

impl OpBlockContext {
    pub fn of(block: &BlockData, config: &OpConfig) -> Self {
        let spec = config.spec_at(block.header.timestamp);
        let l1 = block.txs.first().filter(|t| t.tx.is_deposit()).and_then(|t| L1Info::from_calldata(t.tx.input()).ok());
        Self { spec, l1 }
    }

    /// `receipt` (the Ethereum receipt of `etx`) with op-geth's members.
    pub fn receipt(&self, receipt: &TransactionReceipt, etx: &ExecutedTx) -> Value {
        let mut v = serde_json::to_value(receipt).unwrap_or(Value::Null);
        let Some(m) = v.as_object_mut() else { return v };
        match &etx.tx {
            OpTx::Deposit(_) => {
                m.insert("type".into(), Value::String(format!("{:#x}", preconf_op::deposit::DEPOSIT_TX_TYPE)));
                // From Canyon (when the receipt records the nonce) with the version.
                m.extend(deposit_receipt_members(etx.deposit_nonce, etx.deposit_nonce.is_some()));
            }
            OpTx::Eth(_) => {
                if let Some(l1) = &self.l1 {
                    let fields = receipt_fields(&l1.fees_for(self.spec), &etx.tx.encoded_2718(), self.spec);
                    m.extend(l1_fee_members(&fields));
                }
            }
        }
        v
    }
}
