//! The EVM the block being built runs on, as the chain spec chooses it: Ethereum's
//! (`build_evm`) or, on an OP chain, op-revm's (deposits, the L1 data fee, the fee
//! vaults). One type with what the builder does to it (run a transaction, run a system
//! call, reach its state), so the builder has no branch per use.

use alloy_primitives::{Address, Bytes, Log};
use op_revm::transaction::deposit::DepositTransactionParts;
use op_revm::{OpTransaction, OpTransactionError};
use preconf_op::evm::{block_evm, OpBlockEvm};
use preconf_op::{OpSpecId, OpTx};
use revm::context::result::{EVMError, ExecutionResult, InvalidTransaction};
use revm::database::CacheDB;
use revm::handler::{ExecuteCommitEvm, ExecuteEvm, SystemCallEvm};
use revm::state::EvmState;

use super::create_guard::StorageSlots;
use super::{build_evm, system, tx_env_from_signed, Evm, ExecBlock, Mode};
use crate::error::{Cause, ChainError, Rejection};
use crate::spec::ChainSpec;

/// op-revm's transaction for `tx` from `sender` (EIP-2718 encoding `raw`, on which op-revm
/// charges the L1 data fee): the same fields as Ethereum's for a non-deposit.
pub fn op_tx_env(tx: &OpTx, sender: Address, raw: &Bytes) -> OpTransaction<revm::context::TxEnv> {
    match tx {
        OpTx::Eth(signed) => OpTransaction {
            base: tx_env_from_signed(signed, sender),
            enveloped_tx: Some(raw.clone()),
            deposit: DepositTransactionParts::default(),
        },
        OpTx::Deposit(_) => tx.to_op_env(sender),
    }
}

/// One per open block, so the size difference costs nothing; boxing either would put an
/// indirection on every transaction the builder runs.
#[allow(clippy::large_enum_variant)]
pub enum BlockEvm<DB: StorageSlots> {
    Eth(Evm<DB>),
    Op(OpBlockEvm<CacheDB<DB>>),
}

/// What a transaction or system call did, whichever EVM ran it.
pub struct TxRun {
    pub state: EvmState,
    pub gas_used: u64,
    pub success: bool,
    pub logs: Vec<Log>,
    /// What it returned (a system call's answer); `None` when it halted.
    pub output: Option<Bytes>,
}

/// Why a transaction did not run.
pub enum TxRefusal {
    /// The transaction cannot run as it is (nonce, funds, gas ...).
    Invalid(InvalidTransaction),
    /// Anything else: the state failed, or an OP rule refused it.
    Failed(Cause),
}

fn run_of<H>(result: ExecutionResult<H>, state: EvmState) -> TxRun {
    TxRun {
        gas_used: result.tx_gas_used(),
        success: result.is_success(),
        output: result.output().cloned(),
        logs: match result {
            ExecutionResult::Success { logs, .. } => logs,
            _ => Vec::new(),
        },
        state,
    }
}

impl<DB: StorageSlots + 'static> BlockEvm<DB>
where
    DB: revm::DatabaseRef<Error = ChainError>,
{
    /// The EVM for `block` over `db`: op-revm's when the spec is an OP chain's.
    pub fn new(db: CacheDB<DB>, spec: &ChainSpec, block: &ExecBlock) -> Self {
        match spec.op() {
            None => Self::Eth(build_evm(db, spec, block, Mode::Transaction)),
            Some(op) => {
                let op_spec: OpSpecId = op.spec_at(block.timestamp);
                let env = block.env(spec, spec.spec_at(block.number, block.timestamp));
                Self::Op(block_evm(db, env, op_spec, spec.chain_id()))
            }
        }
    }

    /// The block's state so far (reads and the test methods' edits).
    pub fn db(&mut self) -> &mut CacheDB<DB> {
        match self {
            Self::Eth(evm) => &mut evm.ctx.journaled_state.database,
            Self::Op(evm) => &mut evm.0.ctx.journaled_state.database,
        }
    }

    /// Runs `tx` from `sender`, not committed; `raw` is its EIP-2718 encoding (op-revm
    /// charges the L1 data fee on it). The Ethereum EVM refuses a deposit.
    pub fn transact(&mut self, tx: &OpTx, sender: Address, raw: &Bytes) -> Result<TxRun, TxRefusal> {
        match (self, tx) {
            (Self::Eth(evm), OpTx::Eth(signed)) => match evm.transact(tx_env_from_signed(signed, sender)) {
                Ok(out) => Ok(run_of(out.result, out.state)),
                Err(EVMError::Transaction(e)) => Err(TxRefusal::Invalid(e)),
                Err(e) => Err(TxRefusal::Failed(Cause::new(e))),
            },
            (Self::Eth(_), OpTx::Deposit(_)) => {
                let refused = Rejection::TypeNotSupported(preconf_op::deposit::DEPOSIT_TX_TYPE);
                Err(TxRefusal::Failed(Cause::new(ChainError::from(refused))))
            }
            (Self::Op(evm), tx) => match evm.transact(op_tx_env(tx, sender, raw)) {
                Ok(out) => Ok(run_of(out.result, out.state)),
                Err(EVMError::Transaction(OpTransactionError::Base(e))) => Err(TxRefusal::Invalid(e)),
                Err(e) => Err(TxRefusal::Failed(Cause::new(e))),
            },
        }
    }

    /// A system call (EIP-4788, EIP-2935 ...): the protocol's gas for the fork.
    pub fn system_call(&mut self, address: Address, input: Bytes) -> Result<TxRun, Cause> {
        match self {
            Self::Eth(evm) => {
                system::run(evm, address, input).map(|out| run_of(out.result, out.state)).map_err(Cause::new)
            }
            Self::Op(evm) => {
                evm.system_call(address, input).map(|out| run_of(out.result, out.state)).map_err(Cause::new)
            }
        }
    }

    pub fn commit(&mut self, state: EvmState) {
        match self {
            Self::Eth(evm) => evm.commit(state),
            Self::Op(evm) => evm.commit(state),
        }
    }
}
