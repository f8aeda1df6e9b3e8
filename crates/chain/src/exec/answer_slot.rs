//! The storage slot a view call takes its answer from (anvil_dealERC20,
//! anvil_setERC20Allowance): the call runs once with an inspector that notes the slots it
//! reads in the contract called, then once per slot with that slot overridden to the wanted
//! value. The first slot, in key order as anvil tries them, that makes the call answer that
//! value is the one.

use std::collections::BTreeSet;

use alloy_primitives::{Address, B256, U256};
use alloy_rpc_types_eth::state::{AccountOverride, StateOverride};
use alloy_rpc_types_eth::TransactionRequest;
use alloy_sol_types::SolValue;
use revm::bytecode::opcode;
use revm::context_interface::result::ExecutionResult;
use revm::context_interface::ContextTr;
use revm::database::CacheDB;
use revm::handler::MainBuilder;
use revm::inspector::InspectEvm;
use revm::interpreter::interpreter_types::{InputsTr, Jumps};
use revm::interpreter::Interpreter;
use revm::Inspector;

use super::call::CallContext;
use super::errors::evm_error;
use super::prepare::{prepare_call, PreparedCall};
use super::{evm_context, Mode};
use crate::error::{ChainError, ChainResult};

/// Notes every slot `contract` reads (SLOAD in its storage, delegate calls included).
struct SlotReads {
    contract: Address,
    slots: BTreeSet<U256>,
}

impl<CTX: ContextTr> Inspector<CTX> for SlotReads {
    fn step(&mut self, interp: &mut Interpreter, _context: &mut CTX) {
        if interp.bytecode.opcode() == opcode::SLOAD && interp.input.target_address() == self.contract {
            if let Ok(slot) = interp.stack.peek(0) {
                self.slots.insert(slot);
            }
        }
    }
}

/// The slot of `contract` whose value the call `tx` (to `contract`) answers, found by
/// setting it to `wanted`; `None` when the call fails or no slot it reads does it. Only a
/// failure of the node itself (its store) is an error.
pub fn answer_slot(
    ctx: &CallContext,
    contract: Address,
    tx: &TransactionRequest,
    wanted: U256,
) -> ChainResult<Option<U256>> {
    let gas = ctx.gas_for(tx);
    let mut db = CacheDB::new(ctx.state.clone());
    let PreparedCall { from, env, .. } = match prepare_call(&mut db, ctx.spec, ctx.block.base_fee, tx, None, gas) {
        Ok(prepared) => prepared,
        Err(e) => return node_failure(e),
    };
    let reads = SlotReads { contract, slots: BTreeSet::new() };
    let mut evm = evm_context(db, ctx.spec, &ctx.block, Mode::Call).build_mainnet_with_inspector(reads);
    match evm.inspect_tx(env).map_err(|e| evm_error(e, from)) {
        Ok(out) if out.result.is_success() => {}
        Ok(_) => return Ok(None),
        Err(e) => return node_failure(e),
    }
    for slot in std::mem::take(&mut evm.inspector.slots) {
        let diff = [(B256::from(slot), B256::from(wanted))].into_iter().collect();
        let overrides: StateOverride =
            [(contract, AccountOverride { state_diff: Some(diff), ..Default::default() })].into_iter().collect();
        let answer = match ctx.run(tx, Some(&overrides), gas) {
            Ok(ExecutionResult::Success { output, .. }) => U256::abi_decode(output.data()).ok(),
            Ok(_) => None,
            Err(e) => node_failure(e)?,
        };
        if answer == Some(wanted) {
            return Ok(Some(slot));
        }
    }
    Ok(None)
}

/// A call that cannot run finds no slot; the node's own failures go on up.
fn node_failure<T>(e: ChainError) -> ChainResult<Option<T>> {
    match e {
        ChainError::Internal(_) => Err(e),
        _ => Ok(None),
    }
}
