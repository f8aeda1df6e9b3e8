//! The system calls around a block (EIP-4788 and EIP-2935 before its transactions,
//! EIP-7002 and EIP-7251 after them), in one place for the builder and for eth_simulateV1.

use alloy_consensus::Header;
use alloy_eips::{eip2935, eip4788, eip7002, eip7251, eip7685::Requests};
use alloy_primitives::{Address, Bytes};
use revm::primitives::hardfork::SpecId;

use crate::error::ChainResult;

/// Whatever can run a system call and fold its state changes into the block.
pub trait SystemCalls {
    /// The call's output; `None` when the system contract does not exist (geth skips it).
    fn system_call(&mut self, address: Address, input: Bytes) -> ChainResult<Option<Bytes>>;
}

/// Before the block's transactions: the parent beacon root (Cancun) and the parent hash
/// (Prague) go into their system contracts.
pub fn pre_block(calls: &mut impl SystemCalls, header: &Header, spec_id: SpecId) -> ChainResult<()> {
    if spec_id.is_enabled_in(SpecId::CANCUN) {
        let root = header.parent_beacon_block_root.unwrap_or_default();
        calls.system_call(eip4788::BEACON_ROOTS_ADDRESS, Bytes::copy_from_slice(root.as_slice()))?;
    }
    if spec_id.is_enabled_in(SpecId::PRAGUE) {
        calls.system_call(eip2935::HISTORY_STORAGE_ADDRESS, Bytes::copy_from_slice(header.parent_hash.as_slice()))?;
    }
    Ok(())
}

/// After the block's transactions (Prague): dequeue withdrawal and consolidation requests,
/// which make the block's `requestsHash`.
pub fn post_block(calls: &mut impl SystemCalls, spec_id: SpecId) -> ChainResult<Option<Requests>> {
    if !spec_id.is_enabled_in(SpecId::PRAGUE) {
        return Ok(None);
    }
    let mut requests = Requests::default();
    for (address, request_type) in [
        (eip7002::WITHDRAWAL_REQUEST_PREDEPLOY_ADDRESS, eip7002::WITHDRAWAL_REQUEST_TYPE),
        (eip7251::CONSOLIDATION_REQUEST_PREDEPLOY_ADDRESS, eip7251::CONSOLIDATION_REQUEST_TYPE),
    ] {
        if let Some(output) = calls.system_call(address, Bytes::new())? {
            requests.push_request_with_type(request_type, output);
        }
    }
    Ok(Some(requests))
}
