//! A call made ready to run: the one recipe every method that runs an unsigned call uses
//! (eth_call, eth_estimateGas, eth_createAccessList, debug_traceCall), as reth's
//! `prepare_call_env`: state overrides applied, the sender's nonce looked up when the
//! call names none, the gas capped, the transaction environment built.

use alloy_primitives::Address;
use alloy_rpc_types_eth::{state::StateOverride, TransactionRequest};
use revm::context::TxEnv;
use revm::database::CacheDB;

use super::overrides::apply_state_overrides;
use super::request::{call_tx_env, sender};
use crate::error::ChainResult;
use crate::spec::ChainSpec;
use crate::state::StateView;

/// What the call runs with.
pub struct PreparedCall {
    pub from: Address,
    pub nonce: u64,
    pub gas: u64,
    pub env: TxEnv,
}

/// The gas a call runs with: what it names, at most `gas_cap`.
pub fn capped_gas(tx: &TransactionRequest, gas_cap: u64) -> u64 {
    tx.gas.unwrap_or(gas_cap).min(gas_cap)
}

/// Applies `overrides` to `db` and builds the call's environment with `gas`, paying
/// `base_fee` (fees default as eth_call's do).
pub fn prepare_call(
    db: &mut CacheDB<StateView>,
    spec: &ChainSpec,
    base_fee: u64,
    tx: &TransactionRequest,
    overrides: Option<&StateOverride>,
    gas: u64,
) -> ChainResult<PreparedCall> {
    if let Some(o) = overrides {
        apply_state_overrides(db, o)?;
    }
    let from = sender(tx);
    let nonce = match tx.nonce {
        Some(n) => n,
        None => db.load_account(from)?.info().map(|a| a.nonce).unwrap_or_default(),
    };
    let env = call_tx_env(tx, spec.chain_id(), gas, nonce, Some(base_fee))?;
    Ok(PreparedCall { from, nonce, gas, env })
}
