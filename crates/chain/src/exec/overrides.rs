//! State and block overrides of eth_call, eth_estimateGas and eth_simulateV1 (alloy's
//! `StateOverride` and `BlockOverrides`), applied to a call's overlay database and block.

use alloy_rpc_types_eth::{state::StateOverride, BlockOverrides};
use revm::bytecode::Bytecode;
use revm::database::CacheDB;
use revm::database_interface::DatabaseRef;
use revm::state::AccountInfo;

use super::ExecBlock;
use crate::error::{ChainError, ChainResult, InvalidParam};
use alloy_primitives::U256;

/// Writes account overrides into a call's overlay database (balance, nonce, code, storage).
/// `movePrecompileToAddress` is handled by the caller, which owns the precompile set.
pub fn apply_state_overrides<DB: DatabaseRef<Error = ChainError>>(
    db: &mut CacheDB<DB>,
    overrides: &StateOverride,
) -> ChainResult<()> {
    for (address, o) in overrides {
        if o.state.is_some() && o.state_diff.is_some() {
            return Err(InvalidParam::StateAndStateDiff(*address).into());
        }
        let mut info: AccountInfo = db.load_account(*address)?.info().unwrap_or_default();
        if let Some(b) = o.balance {
            info.balance = b;
        }
        if let Some(n) = o.nonce {
            info.nonce = n;
        }
        if let Some(code) = &o.code {
            let bytecode = Bytecode::new_raw(code.clone());
            info.code_hash = bytecode.hash_slow();
            info.code = Some(bytecode);
        }
        db.insert_account_info(*address, info);
        if let Some(state) = &o.state {
            let slots = state.iter().map(|(k, v)| (U256::from_be_bytes(k.0), U256::from_be_bytes(v.0)));
            db.replace_account_storage(*address, slots.collect())?;
        }
        if let Some(diff) = &o.state_diff {
            for (k, v) in diff {
                db.insert_account_storage(*address, U256::from_be_bytes(k.0), U256::from_be_bytes(v.0))?;
            }
        }
    }
    Ok(())
}

/// Applies eth_call's block overrides to the block a call runs in.
pub fn apply_block_overrides(block: &mut ExecBlock, o: &BlockOverrides) -> ChainResult<()> {
    if let Some(n) = o.number {
        block.number = u64::try_from(n).map_err(|_| InvalidParam::BlockNumberWidth)?;
    }
    if let Some(t) = o.time {
        block.timestamp = t;
    }
    if let Some(g) = o.gas_limit {
        block.gas_limit = g;
    }
    if let Some(r) = o.coinbase {
        block.beneficiary = r;
    }
    if let Some(r) = o.random {
        block.prevrandao = r;
    }
    if let Some(d) = o.difficulty {
        block.difficulty = d;
    }
    if let Some(b) = o.base_fee {
        block.base_fee = u64::try_from(b).map_err(|_| InvalidParam::BaseFeeTooLarge)?;
    }
    Ok(())
}
