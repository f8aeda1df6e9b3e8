//! eth_createAccessList as geth computes it: run the call with revm-inspectors'
//! access-list inspector, run it again with the list found as the transaction's access
//! list, and so on until the list stops changing; report that list, the gas the call used
//! with it, and how the call failed, if it did.

use std::collections::{BTreeMap, BTreeSet};

use alloy_eips::eip2930::{AccessList, AccessListItem};
use alloy_primitives::{keccak256, Address, Bytes, TxKind, B256, U256};
use alloy_rlp::{Encodable, RlpEncodable};
use alloy_rpc_types_eth::{state::StateOverride, TransactionRequest};
use revm::context_interface::result::{EVMError, ExecutionResult};
use revm::database::CacheDB;
use revm::handler::MainBuilder;
use revm::inspector::InspectEvm;
use revm_inspectors::access_list::AccessListInspector;

use super::call::CallContext;
use super::errors::{evm_error, revert_message};
use super::prepare::{prepare_call, PreparedCall};
use super::request::{input, sender};
use super::{evm_context, Mode};
use crate::error::{ChainError, ChainResult, Halt, Limit, Rejection};

/// The list only grows from run to run, so it settles; this bounds a pathological case.
const MAX_RUNS: usize = 32;
/// What an EIP-7702 authorization costs at least (geth refuses more than the gas covers).
const GAS_PER_AUTHORIZATION: u64 = 25_000;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccessListOutcome {
    pub access_list: AccessList,
    pub gas_used: u64,
    /// How the call failed with this list: "execution reverted: …", "out of gas", ...
    pub error: Option<String>,
}

type ListSet = BTreeMap<Address, BTreeSet<B256>>;

fn as_set(list: &AccessList) -> ListSet {
    let mut set = ListSet::new();
    for item in &list.0 {
        set.entry(item.address).or_default().extend(item.storage_keys.iter().copied());
    }
    set
}

fn as_list(set: &ListSet) -> AccessList {
    AccessList(
        set.iter()
            .map(|(address, keys)| AccessListItem { address: *address, storage_keys: keys.iter().copied().collect() })
            .collect(),
    )
}

pub fn create_access_list(
    ctx: &CallContext,
    tx: &TransactionRequest,
    overrides: Option<&StateOverride>,
) -> ChainResult<AccessListOutcome> {
    let mut db = CacheDB::new(ctx.state.clone());
    let PreparedCall { nonce, gas, env: prepared, .. } =
        prepare_call(&mut db, ctx.spec, ctx.block.base_fee, tx, overrides, ctx.gas_for(tx))?;
    let authorizations = tx.authorization_list.as_ref().map_or(0, |a| a.len() as u64);
    if authorizations > gas / GAS_PER_AUTHORIZATION {
        return Err(Rejection::AuthorizationsGas.into());
    }

    let mut list = as_set(&tx.access_list.clone().unwrap_or_default());
    let mut first = true;
    for _ in 0..MAX_RUNS {
        let mut env = prepared.clone();
        env.access_list = as_list(&list);
        let inspector = AccessListInspector::new(as_list(&list));
        let mut evm = evm_context(db.clone(), ctx.spec, &ctx.block, Mode::Call).build_mainnet_with_inspector(inspector);
        let out = evm.inspect_tx(env).map_err(|e| refused(e, tx, nonce, gas))?;
        if first {
            // Sender, recipient, precompiles and authorities never belong in the list (geth
            // drops them from the caller's list before the first run): start over without them.
            first = false;
            let excluded = evm.inspector.excluded();
            let before = list.len();
            list.retain(|a, _| !excluded.contains(a));
            if list.len() != before {
                continue;
            }
        }
        let found = as_set(&evm.inspector.access_list());
        if found == list {
            let result = out.result;
            let error = match &result {
                ExecutionResult::Success { .. } => None,
                ExecutionResult::Revert { output, .. } => Some(revert_message(output)),
                ExecutionResult::Halt { reason, .. } => Some(Halt::from(reason).to_string()),
            };
            return Ok(AccessListOutcome { access_list: as_list(&list), gas_used: result.tx_gas_used(), error });
        }
        list = found;
    }
    Err(ChainError::LimitExceeded(Limit::AccessListUnsettled(MAX_RUNS)))
}

/// A call refused before it ran, in geth's words: it names the hash of the request as an
/// unsigned legacy transaction.
fn refused(e: EVMError<ChainError>, tx: &TransactionRequest, nonce: u64, gas: u64) -> ChainError {
    match evm_error(e, sender(tx)) {
        ChainError::InvalidTx(m) => {
            let hash = unsigned_legacy_hash(tx, nonce, gas);
            Rejection::FailedToApply { hash, reason: Box::new(m) }.into()
        }
        other => other,
    }
}

/// geth hashes an unsigned legacy transaction with zero v, r and s.
#[derive(RlpEncodable)]
struct UnsignedLegacy {
    nonce: u64,
    gas_price: u128,
    gas: u64,
    to: TxKind,
    value: U256,
    input: Bytes,
    v: u8,
    r: u8,
    s: u8,
}

fn unsigned_legacy_hash(tx: &TransactionRequest, nonce: u64, gas: u64) -> B256 {
    let legacy = UnsignedLegacy {
        nonce,
        gas_price: tx.gas_price.unwrap_or_default(),
        gas,
        to: tx.to.unwrap_or(TxKind::Create),
        value: tx.value.unwrap_or_default(),
        input: input(tx).unwrap_or_default(),
        v: 0,
        r: 0,
        s: 0,
    };
    let mut out = Vec::with_capacity(legacy.length());
    legacy.encode(&mut out);
    keccak256(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_compare_as_sets() {
        let a = Address::repeat_byte(1);
        let k = |b| B256::repeat_byte(b);
        let unsorted = AccessList(vec![
            AccessListItem { address: a, storage_keys: vec![k(2), k(1), k(2)] },
            AccessListItem { address: Address::ZERO, storage_keys: vec![] },
        ]);
        let set = as_set(&unsorted);
        let list = as_list(&set);
        assert_eq!(list.0[0].address, Address::ZERO);
        assert_eq!(list.0[1].storage_keys, vec![k(1), k(2)]);
        assert_eq!(as_set(&list), set);
    }
}
