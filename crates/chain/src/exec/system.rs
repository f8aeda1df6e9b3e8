//! The system calls around a block (EIP-4788 and EIP-2935 before its transactions,
//! EIP-7002 and EIP-7251 after them), in one place for the builder and for eth_simulateV1,
//! and the gas each one gets.

use alloy_consensus::Header;
use alloy_eips::{eip2935, eip4788, eip7002, eip7251, eip7685::Requests};
use alloy_primitives::{Address, Bytes};
use revm::context::result::{EVMError, ExecResultAndState, ExecutionResult};
use revm::context::{Cfg, ContextSetters, ContextTr, Evm, JournalTr, TxEnv};
use revm::database_interface::Database;
use revm::handler::{
    instructions::InstructionProvider, EthFrame, ExecuteEvm, Handler, MainnetHandler, PrecompileProvider, SystemCallTx,
};
use revm::interpreter::{interpreter::EthInterpreter, InterpreterResult};
use revm::primitives::hardfork::SpecId;
use revm::state::EvmState;

use crate::error::ChainResult;

/// The gas of a system call (EIP-4788, EIP-2935, EIP-7002, EIP-7251): 30 million, what
/// the protocol gives them up to Osaka. Amsterdam's state-gas reservoir (EIP-8037) for
/// system calls is not in revm 38 (the release op-revm is built on), so every fork gets the
/// same 30 million (docs/op-stack.md).
pub const SYSTEM_CALL_GAS: u64 = 30_000_000;

pub fn system_call_gas(_spec_id: SpecId) -> u64 {
    SYSTEM_CALL_GAS
}

/// A system call from the system address with the protocol's gas for the EVM's fork,
/// finalized (the state changes returned, not committed). What revm's
/// `SystemCallEvm::system_call` does, but with [`system_call_gas`].
#[allow(clippy::type_complexity)]
pub fn run<CTX, INSP, INST, PRECOMPILES>(
    evm: &mut Evm<CTX, INSP, INST, PRECOMPILES, EthFrame<EthInterpreter>>,
    address: Address,
    input: Bytes,
) -> Result<ExecResultAndState<ExecutionResult>, EVMError<<CTX::Db as Database>::Error>>
where
    CTX: ContextTr<Journal: JournalTr<State = EvmState>, Tx = TxEnv> + ContextSetters,
    INST: InstructionProvider<Context = CTX, InterpreterTypes = EthInterpreter>,
    PRECOMPILES: PrecompileProvider<CTX, Output = InterpreterResult>,
{
    let spec_id: SpecId = evm.ctx.cfg().spec().into();
    let mut tx = TxEnv::new_system_tx(address, input);
    tx.gas_limit = system_call_gas(spec_id);
    evm.ctx.set_tx(tx);
    let mut handler = MainnetHandler::<_, EVMError<<CTX::Db as Database>::Error>, _>::default();
    let result = handler.run_system_call(evm)?;
    let state = evm.finalize();
    Ok(ExecResultAndState::new(result, state))
}

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
