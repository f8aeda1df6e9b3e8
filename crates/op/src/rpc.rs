//! The fields op-geth and op-reth add to Ethereum's JSON-RPC objects, as JSON members to
//! merge into a receipt or transaction object: a transaction's L1 fee on its receipt, a
//! deposit's source, mint and nonce. Quantities are hex like the rest of the object;
//! `l1FeeScalar` (before Ecotone) is op-geth's decimal string.

use alloy_primitives::U256;
use serde_json::{Map, Value};

use crate::deposit::TxDeposit;
use crate::l1info::L1FeeFields;

/// The version a deposit receipt carries from Canyon on (with `depositNonce`).
pub const DEPOSIT_RECEIPT_VERSION: u64 = 1;

fn quantity(n: U256) -> Value {
    Value::String(format!("{n:#x}"))
}

fn put(out: &mut Map<String, Value>, key: &str, n: Option<U256>) {
    if let Some(n) = n {
        out.insert(key.into(), quantity(n));
    }
}

/// A non-deposit receipt's L1-fee members: the fee, L1 gas and its price always; the
/// scalars of the fork's formula; the operator fee's when `receipt_fields` reports them;
/// from Jovian the DA footprint gas scalar and the transaction's DA footprint as
/// `blobGasUsed` (the OP specs' receipt fields, op-geth's names).
pub fn l1_fee_members(fields: &L1FeeFields) -> Map<String, Value> {
    let mut out = Map::new();
    put(&mut out, "l1Fee", Some(fields.l1_fee));
    put(&mut out, "l1GasUsed", Some(fields.l1_gas_used));
    put(&mut out, "l1GasPrice", Some(fields.l1_gas_price));
    if let Some(scalar) = &fields.l1_fee_scalar {
        out.insert("l1FeeScalar".into(), Value::String(scalar.clone()));
    }
    put(&mut out, "l1BaseFeeScalar", fields.l1_base_fee_scalar);
    put(&mut out, "l1BlobBaseFee", fields.l1_blob_base_fee);
    put(&mut out, "l1BlobBaseFeeScalar", fields.l1_blob_base_fee_scalar);
    put(&mut out, "operatorFeeScalar", fields.operator_fee_scalar);
    put(&mut out, "operatorFeeConstant", fields.operator_fee_constant);
    put(&mut out, "daFootprintGasScalar", fields.da_footprint_gas_scalar.map(U256::from));
    put(&mut out, "blobGasUsed", fields.da_footprint.map(U256::from));
    out
}

/// A deposit receipt's members: `depositNonce` (the sender's nonce before the deposit, from
/// Regolith) and, from Canyon, `depositReceiptVersion`.
pub fn deposit_receipt_members(deposit_nonce: Option<u64>, canyon: bool) -> Map<String, Value> {
    let mut out = Map::new();
    if let Some(nonce) = deposit_nonce {
        put(&mut out, "depositNonce", Some(U256::from(nonce)));
        if canyon {
            put(&mut out, "depositReceiptVersion", Some(U256::from(DEPOSIT_RECEIPT_VERSION)));
        }
    }
    out
}

/// A deposit transaction's members: `sourceHash`, `mint`, `isSystemTx`, and the nonce the
/// receipt names in place of the transaction's (deposits carry none), as op-reth answers.
pub fn deposit_tx_members(deposit: &TxDeposit, deposit_nonce: Option<u64>, canyon: bool) -> Map<String, Value> {
    let mut out = Map::new();
    out.insert("sourceHash".into(), Value::String(deposit.source_hash.to_string()));
    put(&mut out, "mint", Some(U256::from(deposit.mint)));
    out.insert("isSystemTx".into(), Value::Bool(deposit.is_system_transaction));
    if let Some(nonce) = deposit_nonce {
        put(&mut out, "nonce", Some(U256::from(nonce)));
    }
    out.extend(deposit_receipt_members(deposit_nonce, canyon).into_iter().filter(|(k, _)| k != "depositNonce"));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// l1-fee-vectors.md vector 21: a real Base transaction's receipt fields under Fjord.
    #[test]
    fn base_receipt_members() {
        let fields = L1FeeFields {
            l1_fee: U256::from(191_150_293_412u64),
            l1_gas_used: U256::from(1600),
            l1_gas_price: U256::from(14_121_491_676u64),
            l1_base_fee_scalar: Some(U256::from(2269)),
            l1_blob_base_fee: Some(U256::from(1_324_954_204u64)),
            l1_blob_base_fee_scalar: Some(U256::from(1_055_762)),
            ..Default::default()
        };
        assert_eq!(
            Value::Object(l1_fee_members(&fields)),
            json!({
                "l1Fee": "0x2c817201a4",
                "l1GasUsed": "0x640",
                "l1GasPrice": "0x349b4dcdc",
                "l1BaseFeeScalar": "0x8dd",
                "l1BlobBaseFee": "0x4ef9325c",
                "l1BlobBaseFeeScalar": "0x101c12",
            })
        );
    }

    #[test]
    fn bedrock_scalar_is_decimal_and_operator_fee_is_reported_when_set() {
        let fields = L1FeeFields {
            l1_fee_scalar: Some("0.684".into()),
            operator_fee_scalar: Some(U256::ZERO),
            operator_fee_constant: Some(U256::from(2)),
            ..Default::default()
        };
        let members = l1_fee_members(&fields);
        assert_eq!(members["l1FeeScalar"], json!("0.684"));
        assert_eq!((&members["operatorFeeScalar"], &members["operatorFeeConstant"]), (&json!("0x0"), &json!("0x2")));
        assert!(!members.contains_key("l1BaseFeeScalar"));
        assert!(!members.contains_key("daFootprintGasScalar") && !members.contains_key("blobGasUsed"));
    }

    #[test]
    fn jovian_members() {
        let fields =
            L1FeeFields { da_footprint_gas_scalar: Some(400), da_footprint: Some(40_000), ..Default::default() };
        let members = l1_fee_members(&fields);
        assert_eq!((&members["daFootprintGasScalar"], &members["blobGasUsed"]), (&json!("0x190"), &json!("0x9c40")));
    }

    #[test]
    fn deposit_members() {
        let deposit = crate::dev::DevL1Values::default().l1_info_deposit(0);
        let tx = deposit_tx_members(&deposit, Some(5), true);
        assert_eq!(tx["sourceHash"], json!(deposit.source_hash.to_string()));
        assert_eq!((&tx["mint"], &tx["isSystemTx"], &tx["nonce"]), (&json!("0x0"), &json!(false), &json!("0x5")));
        assert_eq!(tx["depositReceiptVersion"], json!("0x1"));
        let before_canyon = deposit_receipt_members(Some(5), false);
        assert_eq!(Value::Object(before_canyon), json!({ "depositNonce": "0x5" }));
    }
}
