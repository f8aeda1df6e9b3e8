//! On a forked chain, what a call or transaction is about to run is handed to the
//! upstream source first, so that its cold reads arrive in one batch instead of one
//! request per read as the EVM meets them.

use alloy_consensus::{Transaction, TxEnvelope};
use alloy_primitives::Address;
use alloy_rpc_types_eth::TransactionRequest;

use crate::chain_state::ChainState;
use crate::fork::PrefetchCall;

/// A call's request (eth_call, eth_estimateGas, eth_createAccessList).
pub fn request(chain: &ChainState, tx: &TransactionRequest) {
    let Some(upstream) = chain.store().upstream() else { return };
    upstream.source.prefetch(&PrefetchCall {
        from: tx.from,
        to: tx.to.and_then(|kind| kind.to().copied()),
        value: tx.value.unwrap_or_default(),
        input: tx.input.input().cloned().unwrap_or_default(),
    });
}

/// A signed transaction being admitted.
pub fn signed(chain: &ChainState, sender: Address, tx: &TxEnvelope) {
    let Some(upstream) = chain.store().upstream() else { return };
    upstream.source.prefetch(&PrefetchCall {
        from: Some(sender),
        to: tx.to(),
        value: tx.value(),
        input: tx.input().clone(),
    });
}
