//! One simulated call: geth's defaults for the fields it leaves out, the unsigned
//! transaction that stands for it in the simulated block, and its refusals as -380xx errors.

use alloy_consensus::{SignableTransaction, TxEip1559, TxEip2930, TxEip4844, TxEip7702, TxEnvelope, TxLegacy};
use alloy_eips::eip2718::Encodable2718;
use alloy_primitives::{keccak256, Address, Bytes, Signature, TxKind, B256, U256};
use alloy_rlp::Encodable;
use revm::context_interface::result::{EVMError, InvalidTransaction};

use alloy_rpc_types_eth::TransactionRequest;

use crate::error::{ChainError, ChainResult, InvalidParam, InvalidTx, SimulateCode, SimulateError};
use crate::exec::errors::{evm_fault, invalid_tx};
use crate::exec::request::{inferred_type, input, sender};

/// The call with geth's fee defaults: a dynamic-fee call without fees pays zero
/// (`maxFeePerGas` and `maxPriorityFeePerGas` both 0), never the base fee.
pub fn with_fee_defaults(call: &TransactionRequest) -> TransactionRequest {
    let mut call = call.clone();
    if call.gas_price.is_none() && inferred_type(&call) >= 2 {
        call.max_fee_per_gas.get_or_insert(0);
        call.max_priority_fee_per_gas.get_or_insert(0);
    }
    call
}

/// geth's fee checks for a call whose fee fields are not all zero. With `validation` revm
/// makes them itself; without, a base fee was disabled, but a call that names a fee cap
/// below an (overridden) base fee is still refused, as geth does.
pub fn check_fees(call: &TransactionRequest, base_fee: u64, validation: bool) -> ChainResult<()> {
    let fee_cap = call.gas_price.or(call.max_fee_per_gas).unwrap_or_default();
    let tip = call.gas_price.or(call.max_priority_fee_per_gas).unwrap_or_default();
    if validation || (fee_cap == 0 && tip == 0) {
        return Ok(());
    }
    if fee_cap < base_fee as u128 {
        let refused = InvalidTx::FeeCapBelowBaseFee { sender: sender(call), max_fee: fee_cap, base_fee };
        return Err(SimulateError::FeeCapBelowBaseFee(Box::new(refused)).into());
    }
    Ok(())
}

/// A validated call's nonce against its sender's, in geth's order: too high, too low, then
/// a sender whose nonce cannot grow.
pub fn check_nonce(tx: u64, state: u64) -> Result<(), EVMError<ChainError>> {
    let invalid = match tx.cmp(&state) {
        std::cmp::Ordering::Greater => InvalidTransaction::NonceTooHigh { tx, state },
        std::cmp::Ordering::Less => InvalidTransaction::NonceTooLow { tx, state },
        std::cmp::Ordering::Equal if state == u64::MAX => InvalidTransaction::NonceOverflowInTransaction,
        std::cmp::Ordering::Equal => return Ok(()),
    };
    Err(EVMError::Transaction(invalid))
}

/// A simulated transaction: the envelope for JSON and receipts, and the bytes that go
/// into `transactionsRoot`.
pub struct UnsignedTx {
    pub envelope: TxEnvelope,
    pub encoded: Bytes,
}

/// The zero signature geth gives unsigned transactions (v = r = s = 0).
fn zero_signature() -> Signature {
    Signature::new(U256::ZERO, U256::ZERO, false)
}

/// The unsigned transaction for a call, typed by its fields (legacy with `gasPrice`,
/// EIP-1559 by default) and hashed as geth hashes it: signed with v = r = s = 0.
pub fn unsigned_tx(call: &TransactionRequest, chain_id: u64, nonce: u64, gas_limit: u64) -> ChainResult<UnsignedTx> {
    let to = call.to.unwrap_or(TxKind::Create);
    let value = call.value.unwrap_or_default();
    let input = input(call)?;
    let access_list = call.access_list.clone().unwrap_or_default();
    let fee_cap = call.gas_price.or(call.max_fee_per_gas).unwrap_or_default();
    let tip = call.max_priority_fee_per_gas.unwrap_or_default();
    let needs_to =
        |kind: &'static str| to.to().copied().ok_or_else(|| ChainError::from(InvalidParam::MissingTo { kind }));
    let envelope: TxEnvelope = match inferred_type(call) {
        0 => return Ok(legacy(TxLegacy { chain_id: None, nonce, gas_price: fee_cap, gas_limit, to, value, input })),
        1 => TxEip2930 { chain_id, nonce, gas_price: fee_cap, gas_limit, to, value, access_list, input }
            .into_signed(zero_signature())
            .into(),
        2 => TxEip1559 {
            chain_id,
            nonce,
            gas_limit,
            max_fee_per_gas: fee_cap,
            max_priority_fee_per_gas: tip,
            to,
            value,
            access_list,
            input,
        }
        .into_signed(zero_signature())
        .into(),
        3 => TxEip4844 {
            chain_id,
            nonce,
            gas_limit,
            max_fee_per_gas: fee_cap,
            max_priority_fee_per_gas: tip,
            to: needs_to("blob")?,
            value,
            access_list,
            blob_versioned_hashes: call.blob_versioned_hashes.clone().unwrap_or_default(),
            max_fee_per_blob_gas: call.max_fee_per_blob_gas.unwrap_or_default(),
            input,
        }
        .into_signed(zero_signature())
        .into(),
        4 => TxEip7702 {
            chain_id,
            nonce,
            gas_limit,
            max_fee_per_gas: fee_cap,
            max_priority_fee_per_gas: tip,
            to: needs_to("set-code")?,
            value,
            access_list,
            authorization_list: call.authorization_list.clone().unwrap_or_default(),
            input,
        }
        .into_signed(zero_signature())
        .into(),
        other => return Err(InvalidParam::SimTxType(other).into()),
    };
    let encoded = envelope.encoded_2718().into();
    Ok(UnsignedTx { envelope, encoded })
}

/// An unsigned legacy transaction as geth encodes it: the six fields, then v = r = s = 0
/// (alloy would write v as 27, so the bytes and the hash are made here).
fn legacy(tx: TxLegacy) -> UnsignedTx {
    use alloy_consensus::transaction::RlpEcdsaEncodableTx;
    let zero = 0u8;
    let payload_length = tx.rlp_encoded_fields_length() + 3 * zero.length();
    let mut out = Vec::with_capacity(payload_length + 4);
    alloy_rlp::Header { list: true, payload_length }.encode(&mut out);
    tx.rlp_encode_fields(&mut out);
    for _ in 0..3 {
        zero.encode(&mut out);
    }
    let hash: B256 = keccak256(&out);
    let envelope = TxEnvelope::Legacy(alloy_consensus::Signed::new_unchecked(tx, zero_signature(), hash));
    UnsignedTx { envelope, encoded: out.into() }
}

/// A refused call as the request-level error geth reports (codes -38010..-38015).
/// `capped`: the call got less gas than it asked for because the request's gas budget
/// ran low, so running short of gas is the client limit, not the call's fault.
pub fn refusal(err: EVMError<ChainError>, sender: Address, gas: u64, capped: bool) -> ChainError {
    let e = match err {
        EVMError::Transaction(e) => e,
        other => return evm_fault(other),
    };
    let code = match &e {
        InvalidTransaction::NonceTooLow { .. } => SimulateCode::NonceTooLow,
        InvalidTransaction::NonceTooHigh { .. } => SimulateCode::NonceTooHigh,
        InvalidTransaction::GasPriceLessThanBasefee => SimulateCode::BaseFeeTooLow,
        InvalidTransaction::CallGasCostMoreThanGasLimit { .. }
        | InvalidTransaction::GasFloorMoreThanGasLimit { .. }
            if capped =>
        {
            return SimulateError::BudgetRanShort(Box::new(invalid_tx(&e, sender))).into()
        }
        InvalidTransaction::CallGasCostMoreThanGasLimit { .. }
        | InvalidTransaction::GasFloorMoreThanGasLimit { .. } => SimulateCode::IntrinsicGasTooLow,
        InvalidTransaction::LackOfFundForMaxFee { .. } | InvalidTransaction::OverflowPaymentInTransaction => {
            SimulateCode::InsufficientFunds
        }
        InvalidTransaction::CallerGasLimitMoreThanBlock | InvalidTransaction::TxGasLimitGreaterThanCap { .. } => {
            SimulateCode::BlockGasLimitExceeded
        }
        InvalidTransaction::PriorityFeeGreaterThanMaxFee | InvalidTransaction::InvalidChainId => {
            return InvalidParam::Tx(invalid_tx(&e, sender)).into()
        }
        InvalidTransaction::RejectCallerWithCode => SimulateCode::SenderNotEoa,
        InvalidTransaction::CreateInitCodeSizeLimit => SimulateCode::MaxInitCodeSizeExceeded,
        // The request's fault: -32602, and geth's -32603 under --profile geth (src/errors).
        InvalidTransaction::NonceOverflowInTransaction => SimulateCode::InternalError,
        // Malformed calls geth has no simulate code for (blob and authorization-list
        // checks, …): refused as eth_call refuses them, in the same words.
        _ => return invalid_tx(&e, sender).into(),
    };
    SimulateError::Refused { code, reason: Box::new(invalid_tx(&e, sender)), gas }.into()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(json: serde_json::Value) -> TransactionRequest {
        serde_json::from_value(json).unwrap()
    }

    // Hashes recorded from geth in the execution-apis fixtures (chain id 0xc72dd9d5e883e).
    const FIXTURE_CHAIN: u64 = 0xc72dd9d5e883e;

    #[test]
    fn dynamic_fee_hash_matches_geth() {
        // ethSimulate-simple-validation-fulltx.io, first call.
        let c = call(serde_json::json!({
            "from": "0xc000000000000000000000000000000000000000",
            "to": "0xc100000000000000000000000000000000000000",
            "maxFeePerGas": "0x10",
            "value": "0x2540be400"
        }));
        let tx = unsigned_tx(&with_fee_defaults(&c), FIXTURE_CHAIN, 0, 50_000_000).unwrap();
        assert_eq!(
            *tx.envelope.tx_hash(),
            "0xc2df7444d2b0604cdfaa20cad5855422b575d8d2ec02868ed9eb45eb20490f66".parse::<B256>().unwrap()
        );
    }

    #[test]
    fn a_call_without_fees_is_a_zero_fee_dynamic_transaction() {
        // ethSimulate-simple.io, first call: 1559 with zero fees, gas = the 50M budget.
        let c = call(serde_json::json!({
            "from": "0xc000000000000000000000000000000000000000",
            "to": "0xc100000000000000000000000000000000000000",
            "value": "0x3e8"
        }));
        let tx = unsigned_tx(&with_fee_defaults(&c), FIXTURE_CHAIN, 0, 50_000_000).unwrap();
        assert_eq!(
            *tx.envelope.tx_hash(),
            "0xf1c5abb08809ef760f87aeabe7a87284c60797192dab6d2f0d26c27c9c038e9d".parse::<B256>().unwrap()
        );
        assert_eq!(keccak256(&tx.encoded), *tx.envelope.tx_hash());
    }

    #[test]
    fn blob_hash_matches_geth() {
        // ethSimulate-blobs.io, first call.
        let c = call(serde_json::json!({
            "from": "0xc000000000000000000000000000000000000000",
            "to": "0xc200000000000000000000000000000000000000",
            "maxFeePerGas": "0x10",
            "maxFeePerBlobGas": "0xa",
            "blobVersionedHashes": ["0x010657f37554c781402a22917dee2f75def7ab966d7b770905398eba3c444014"]
        }));
        let tx = unsigned_tx(&with_fee_defaults(&c), FIXTURE_CHAIN, 0, 50_000_000).unwrap();
        assert_eq!(
            *tx.envelope.tx_hash(),
            "0x6dd302137bafa6817cdd92b1157be1eb7b884b32e9bcab7f4084ee4c05a5dba3".parse::<B256>().unwrap()
        );
    }

    #[test]
    fn legacy_is_encoded_with_zero_v() {
        let c = call(serde_json::json!({ "to": "0xc100000000000000000000000000000000000000", "gasPrice": "0x1" }));
        let tx = unsigned_tx(&c, 31337, 3, 21_000).unwrap();
        assert!(matches!(tx.envelope, TxEnvelope::Legacy(_)));
        // [nonce, gasPrice, gas, to, value, input, v, r, s] with v = r = s = 0x80.
        assert!(tx.encoded.ends_with(&[0x80, 0x80, 0x80, 0x80]));
        assert_eq!(keccak256(&tx.encoded), *tx.envelope.tx_hash());
    }

    #[test]
    fn fee_cap_below_an_overridden_base_fee_is_refused_without_validation() {
        let c =
            call(serde_json::json!({ "from": "0xc000000000000000000000000000000000000000", "maxFeePerGas": "0x5" }));
        assert!(matches!(check_fees(&c, 10, false), Err(ChainError::Simulate(SimulateError::FeeCapBelowBaseFee(_)))));
        assert!(check_fees(&c, 5, false).is_ok());
        let zero = call(serde_json::json!({ "maxFeePerGas": "0x0", "maxPriorityFeePerGas": "0x0" }));
        assert!(check_fees(&zero, 10, false).is_ok());
    }
}
