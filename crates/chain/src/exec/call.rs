//! eth_call: one call against a state and a block context.

use alloy_primitives::Bytes;
use alloy_rpc_types_eth::{state::StateOverride, TransactionRequest};
use revm::context_interface::result::{ExecutionResult, HaltReason};
use revm::database::CacheDB;
use revm::handler::ExecuteEvm;

use super::errors::{evm_error, halt_message, reverted};
use super::overrides::apply_state_overrides;
use super::request::{call_tx_env, sender};
use super::{build_evm, ExecBlock, Mode};
use crate::error::{ChainError, ChainResult};
use crate::spec::ChainSpec;
use crate::state::StateView;

/// Everything a call runs against, resolved from one view.
pub struct CallContext<'a> {
    pub spec: &'a ChainSpec,
    pub state: StateView,
    pub block: ExecBlock,
    /// Gas a call gets when it names none, and the most it may name.
    pub gas_cap: u64,
}

impl CallContext<'_> {
    /// Runs one call with `gas`; the raw revm outcome.
    pub fn run(
        &self,
        tx: &TransactionRequest,
        overrides: Option<&StateOverride>,
        gas: u64,
    ) -> ChainResult<ExecutionResult<HaltReason>> {
        let mut db = CacheDB::new(self.state.clone());
        if let Some(o) = overrides {
            apply_state_overrides(&mut db, o)?;
        }
        let from = sender(tx);
        let nonce = match tx.nonce {
            Some(n) => n,
            None => db.load_account(from)?.info().map(|a| a.nonce).unwrap_or_default(),
        };
        let env = call_tx_env(tx, self.spec.chain_id(), gas, nonce, Some(self.block.base_fee))?;
        let mut evm = build_evm(db, self.spec, &self.block, Mode::Call);
        let out = evm.transact(env).map_err(|e| evm_error(e, from, gas))?;
        Ok(out.result)
    }

    /// The gas a call runs with: what it names, capped.
    pub fn gas_for(&self, tx: &TransactionRequest) -> u64 {
        tx.gas.unwrap_or(self.gas_cap).min(self.gas_cap)
    }
}

/// eth_call: the return data, or the revert/halt as an error.
pub fn call(ctx: &CallContext, tx: &TransactionRequest, overrides: Option<&StateOverride>) -> ChainResult<Bytes> {
    match ctx.run(tx, overrides, ctx.gas_for(tx))? {
        ExecutionResult::Success { output, .. } => Ok(output.into_data()),
        ExecutionResult::Revert { output, .. } => Err(reverted(output)),
        ExecutionResult::Halt { reason, .. } => Err(ChainError::Halted(halt_message(&reason))),
    }
}
