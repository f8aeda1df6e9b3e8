//! Call requests (alloy's `TransactionRequest`, geth's TransactionArgs) turned into revm
//! transactions with geth's defaults.

use alloy_primitives::{Address, Bytes, TxKind};
use alloy_rpc_types_eth::TransactionRequest;
use revm::context::TxEnv;

use crate::error::{ChainResult, InvalidParam};

pub fn sender(req: &TransactionRequest) -> Address {
    req.from.unwrap_or_default()
}

/// The call data, from `input` or its older name `data` (they must agree).
pub fn input(req: &TransactionRequest) -> ChainResult<Bytes> {
    match (&req.input.input, &req.input.data) {
        (Some(a), Some(b)) if a != b => Err(InvalidParam::DataAndInput.into()),
        (Some(a), _) | (None, Some(a)) => Ok(a.clone()),
        (None, None) => Ok(Bytes::new()),
    }
}

/// The transaction type geth would infer from the fields given.
pub fn inferred_type(req: &TransactionRequest) -> u8 {
    if let Some(t) = req.transaction_type {
        return t;
    }
    if req.authorization_list.is_some() {
        4
    } else if req.blob_versioned_hashes.is_some() {
        3
    } else if req.max_fee_per_gas.is_some() || req.max_priority_fee_per_gas.is_some() {
        2
    } else if req.access_list.is_some() {
        1
    } else if req.gas_price.is_some() {
        0
    } else {
        2
    }
}

/// The revm transaction for a call with `gas` and `nonce` already decided.
/// Fee fields default to zero: a call without a price pays nothing, as in geth.
pub fn call_tx_env(
    req: &TransactionRequest,
    chain_id: u64,
    gas: u64,
    nonce: u64,
    base_fee: Option<u64>,
) -> ChainResult<TxEnv> {
    let tx_type = inferred_type(req);
    let (gas_price, priority) = match (req.gas_price, req.max_fee_per_gas, req.max_priority_fee_per_gas) {
        (Some(p), _, _) => (p, None),
        (None, Some(max), tip) => (max, Some(tip.unwrap_or(0))),
        // Only a tip: geth fills the fee cap from the base fee.
        (None, None, Some(tip)) => (tip + base_fee.unwrap_or(0) as u128, Some(tip)),
        (None, None, None) => (0, if tx_type >= 2 { Some(0) } else { None }),
    };
    let mut env = TxEnv {
        tx_type,
        caller: sender(req),
        gas_limit: gas,
        gas_price,
        gas_priority_fee: if tx_type >= 2 { Some(priority.unwrap_or(0)) } else { None },
        kind: req.to.unwrap_or(TxKind::Create),
        value: req.value.unwrap_or_default(),
        data: input(req)?,
        nonce,
        chain_id: Some(req.chain_id.unwrap_or(chain_id)),
        access_list: req.access_list.clone().unwrap_or_default(),
        blob_hashes: req.blob_versioned_hashes.clone().unwrap_or_default(),
        max_fee_per_blob_gas: req.max_fee_per_blob_gas.unwrap_or_default(),
        ..Default::default()
    };
    if let Some(auths) = &req.authorization_list {
        env.set_signed_authorization(auths.clone());
    }
    Ok(env)
}
