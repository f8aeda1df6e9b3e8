//! eth_call: one call against a state and a block context.

use alloy_primitives::Bytes;
use alloy_rpc_types_eth::{state::StateOverride, TransactionRequest};
use revm::context_interface::result::{ExecutionResult, HaltReason};
use revm::database::CacheDB;
use revm::handler::ExecuteEvm;

use super::errors::{evm_error, reverted};
use super::prepare::{capped_gas, prepare_call, PreparedCall};
use super::{build_evm, ExecBlock, Mode};
use crate::error::{ChainError, ChainResult, Halt};
use crate::spec::ChainSpec;
use crate::state::StateView;

/// Everything a call runs against, resolved from one view.
pub struct CallContext<'a> {
    pub spec: &'a ChainSpec,
    pub state: StateView,
    pub block: ExecBlock,
    /// Gas a call gets when it names none, and the most it may name.
    pub gas_cap: u64,
    /// geth's rule (`--profile geth`): a call that names no fee sees a base fee of zero
    /// (`BASEFEE`), and one that names a zero blob fee a blob base fee of zero. The
    /// product's interface keeps the block's fees (docs/methods.md).
    pub unpriced_sees_zero_fees: bool,
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
        let PreparedCall { from, env, .. } = prepare_call(&mut db, self.spec, self.block.base_fee, tx, overrides, gas)?;
        let mut evm = build_evm(db, self.spec, &self.block, Mode::Call);
        if self.unpriced_sees_zero_fees {
            let zero = |v: Option<u128>| v.is_none_or(|v| v == 0);
            if zero(tx.gas_price) && zero(tx.max_fee_per_gas) && zero(tx.max_priority_fee_per_gas) {
                evm.ctx.block.basefee = 0;
            }
            if tx.max_fee_per_blob_gas == Some(0) {
                if let Some(blob) = evm.ctx.block.blob_excess_gas_and_price.as_mut() {
                    blob.blob_gasprice = 0;
                }
            }
        }
        let out = evm.transact(env).map_err(|e| evm_error(e, from))?;
        Ok(out.result)
    }

    /// The gas a call runs with: what it names, capped.
    pub fn gas_for(&self, tx: &TransactionRequest) -> u64 {
        capped_gas(tx, self.gas_cap)
    }
}

/// eth_call: the return data, or the revert/halt as an error.
pub fn call(ctx: &CallContext, tx: &TransactionRequest, overrides: Option<&StateOverride>) -> ChainResult<Bytes> {
    match ctx.run(tx, overrides, ctx.gas_for(tx))? {
        ExecutionResult::Success { output, .. } => Ok(output.into_data()),
        ExecutionResult::Revert { output, .. } => Err(reverted(output)),
        ExecutionResult::Halt { reason, .. } => Err(ChainError::Halted(Halt::from(&reason))),
    }
}
