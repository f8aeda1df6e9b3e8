//! One trace request's EVM (block context, guard, tracer) and the state as the replayed
//! transactions leave it; and the replay of a block up to the transactions traced. On an
//! OP chain a block replays on op-revm, as it was built: deposits mint and run, the other
//! transactions pay the L1 data fee (and operator fee) their block's L1-info deposit set.

use std::ops::Range;
use std::sync::Arc;
use std::time::Duration;

use alloy_consensus::Header;
use alloy_primitives::{Address, Bytes, B256, KECCAK256_EMPTY};
use alloy_rpc_types_trace::geth::GethTrace;
use op_revm::api::builder::DefaultOpEvm;
use op_revm::{OpBuilder, OpContext};
use revm::context::TxEnv;
use revm::context_interface::result::EVMError;
use revm::database::CacheDB;
use revm::handler::{ExecuteCommitEvm, ExecuteEvm, MainBuilder, MainnetEvm, SystemCallEvm};
use revm::inspector::{InspectEvm, NoOpInspector};
use revm::Database;
use revm_inspectors::tracing::{DebugInspector, DebugInspectorError, TransactionContext};

use super::guard::{StepCapture, TraceGuard};
use super::{bounds_error, geth_shape};
use crate::error::{Cause, ChainError, ChainResult, InternalError, Rejection};
use crate::exec::block_evm::op_tx_env;
use crate::exec::errors::evm_error;
use crate::exec::system::{self, SystemCalls};
use crate::exec::{cfg_env, evm_context, tx_env_from_executed, EvmContext, ExecBlock, Mode};
use crate::spec::ChainSpec;
use crate::state::StateView;
use crate::types::ExecutedTx;

type Inspectors = (TraceGuard, DebugInspector);

/// The EVM a trace runs on: Ethereum's, or op-revm's for an OP chain's block replay. Calls
/// (debug_traceCall) run on Ethereum's with eth_call's rules on either chain, as op-geth's
/// call messages carry no L1 cost data.
#[allow(clippy::large_enum_variant)]
pub enum TraceEvm {
    Eth(MainnetEvm<EvmContext<StateView>, Inspectors>),
    Op(DefaultOpEvm<OpContext<CacheDB<StateView>>, Inspectors>),
}

pub struct TraceSession<'a> {
    spec: &'a ChainSpec,
    evm: TraceEvm,
}

/// One traced run on either EVM: `$outer` runs the transaction, `$inner` holds the context
/// and the inspectors (the same EVM on Ethereum; op-revm's wraps revm's).
macro_rules! traced_on {
    ($outer:expr, $inner:expr, $env:expr, $ctx:expr, $refused:expr) => {{
        let env = $env;
        $inner.inspector.0.next_transaction();
        let out = $outer.inspect_tx(env.clone());
        let guard = &$inner.inspector.0;
        if let Some(e) = guard.exceeded {
            return Err(bounds_error(e, guard));
        }
        let out = out.map_err($refused)?;
        let tracer = &mut $inner.inspector.1;
        let trace = tracer
            .get_result($ctx, &env, &$inner.ctx.block, &out, &mut $inner.ctx.journaled_state.database)
            .map_err(|e| match e {
                DebugInspectorError::Database(e) => e,
                other => InternalError::Tracer(Cause::new(other)).into(),
            })?;
        tracer.fuse().map_err(|e| InternalError::Tracer(Cause::new(e)))?;
        let trace = geth_shape(trace, $inner.inspector.0.step_limit(), &$inner.ctx.journaled_state.database)?;
        let gas = out.result.tx_gas_used();
        $outer.commit(out.state);
        (trace, gas)
    }};
}

impl<'a> TraceSession<'a> {
    pub fn new(
        spec: &'a ChainSpec,
        db: CacheDB<StateView>,
        block: &ExecBlock,
        mode: Mode,
        inspectors: (TraceGuard, DebugInspector),
    ) -> Self {
        let evm = match spec.op() {
            Some(op) if mode == Mode::Transaction => {
                let env = block.env(spec, spec.spec_at(block.number, block.timestamp));
                let ctx = preconf_op::evm::block_context(db, env, op.spec_at(block.timestamp), spec.chain_id());
                TraceEvm::Op(ctx.build_op_with_inspector(inspectors))
            }
            _ => TraceEvm::Eth(evm_context(db, spec, block, mode).build_mainnet_with_inspector(inspectors)),
        };
        Self { spec, evm }
    }

    /// The state the next transaction runs on (for overrides and nonces).
    pub fn db(&mut self) -> &mut CacheDB<StateView> {
        match &mut self.evm {
            TraceEvm::Eth(evm) => &mut evm.ctx.journaled_state.database,
            TraceEvm::Op(evm) => &mut evm.0.ctx.journaled_state.database,
        }
    }

    /// From here on, transactions run with eth_call's rules in `block` (on an OP chain, on
    /// Ethereum's EVM over the state the replay left, as eth_call runs there).
    pub fn use_call_rules(&mut self, block: &ExecBlock) {
        if let TraceEvm::Op(op) = &mut self.evm {
            let state = op.0.ctx.journaled_state.database.db.clone();
            let db = std::mem::replace(&mut op.0.ctx.journaled_state.database, CacheDB::new(state));
            let idle =
                (TraceGuard::new(Duration::ZERO, 0, StepCapture::default()), DebugInspector::Noop(NoOpInspector));
            let inspectors = std::mem::replace(&mut op.0.inspector, idle);
            let evm = evm_context(db, self.spec, block, Mode::Call).build_mainnet_with_inspector(inspectors);
            self.evm = TraceEvm::Eth(evm);
            return;
        }
        let TraceEvm::Eth(evm) = &mut self.evm else { unreachable!("moved to Ethereum's EVM above") };
        let spec_id = self.spec.spec_at(block.number, block.timestamp);
        let cfg = cfg_env(self.spec, spec_id, Mode::Call);
        evm.ctx.modify_cfg(|c| *c = cfg);
        evm.ctx.block = block.env(self.spec, spec_id);
    }

    pub fn pre_block(&mut self, header: &Header) -> ChainResult<()> {
        let spec_id = self.spec.spec_at(header.number, header.timestamp);
        system::pre_block(self, header, spec_id)
    }

    /// Runs one of the block's transactions untraced and checks it used the gas it did
    /// when the block was built (the replay must reproduce the block exactly).
    pub fn replay(&mut self, etx: &ExecutedTx) -> ChainResult<()> {
        self.check_clock()?;
        let gas = match &mut self.evm {
            TraceEvm::Eth(evm) => {
                let out = evm.transact(tx_env_from_executed(etx)?).map_err(|e| replay_failed(etx, e))?;
                evm.commit(out.state);
                out.result.tx_gas_used()
            }
            TraceEvm::Op(evm) => {
                let env = op_tx_env(&etx.tx, etx.sender, &Bytes::from(etx.tx.encoded_2718()));
                let out = evm.transact(env).map_err(|e| replay_failed(etx, e))?;
                evm.commit(out.state);
                out.result.tx_gas_used()
            }
        };
        check_replay(etx, gas)
    }

    /// Traces one of the block's transactions.
    pub fn trace_tx(&mut self, etx: &ExecutedTx, ctx: TransactionContext) -> ChainResult<GethTrace> {
        self.check_clock()?;
        let (trace, gas) = match &mut self.evm {
            TraceEvm::Eth(evm) => {
                traced_on!(evm, evm, tx_env_from_executed(etx)?, Some(ctx), |e| replay_failed(etx, e))
            }
            TraceEvm::Op(evm) => {
                let env = op_tx_env(&etx.tx, etx.sender, &Bytes::from(etx.tx.encoded_2718()));
                traced_on!(evm, evm.0, env, Some(ctx), |e| replay_failed(etx, e))
            }
        };
        check_replay(etx, gas)?;
        Ok(trace)
    }

    /// Traces a call; a call refused before it runs fails as geth's does.
    pub fn trace_call(&mut self, env: TxEnv) -> ChainResult<GethTrace> {
        self.check_clock()?;
        let from = env.caller;
        let refused = |e| match evm_error(e, from) {
            ChainError::InvalidTx(t) => Rejection::TracingFailed(t).into(),
            other => other,
        };
        match &mut self.evm {
            TraceEvm::Eth(evm) => Ok(traced_on!(evm, evm, env, None, refused).0),
            // Sessions for calls are made with call rules, which are Ethereum's EVM.
            TraceEvm::Op(_) => Err(InternalError::NoTrace.into()),
        }
    }

    fn check_clock(&mut self) -> ChainResult<()> {
        let guard = match &mut self.evm {
            TraceEvm::Eth(evm) => &mut evm.inspector.0,
            TraceEvm::Op(evm) => &mut evm.0.inspector.0,
        };
        match guard.check_clock() {
            Some(e) => Err(bounds_error(e, guard)),
            None => Ok(()),
        }
    }
}

impl SystemCalls for TraceSession<'_> {
    /// A system call before the block's transactions, as the builder made it (untraced).
    fn system_call(&mut self, address: Address, input: Bytes) -> ChainResult<Option<Bytes>> {
        if self.db().basic(address)?.is_none_or(|a| a.code_hash == KECCAK256_EMPTY) {
            return Ok(None);
        }
        let failed = |e: Cause| InternalError::SystemCall { address, source: e };
        match &mut self.evm {
            TraceEvm::Eth(evm) => {
                let out = crate::exec::system::run(evm, address, input).map_err(|e| failed(Cause::new(e)))?;
                let output = out.result.output().cloned();
                evm.commit(out.state);
                Ok(output)
            }
            TraceEvm::Op(evm) => {
                let out = evm.system_call(address, input).map_err(|e| failed(Cause::new(e)))?;
                let output = out.result.output().cloned();
                evm.commit(out.state);
                Ok(output)
            }
        }
    }
}

fn replay_failed<T>(etx: &ExecutedTx, e: EVMError<ChainError, T>) -> ChainError
where
    EVMError<ChainError, T>: std::error::Error + Send + Sync + 'static,
{
    match e {
        EVMError::Database(e) => e,
        other => InternalError::Replay { hash: etx.hash(), source: Cause::new(other) }.into(),
    }
}

fn check_replay(etx: &ExecutedTx, gas_used: u64) -> ChainResult<()> {
    if gas_used != etx.gas_used {
        return Err(InternalError::ReplayGas { hash: etx.hash(), gas_used, recorded: etx.gas_used }.into());
    }
    Ok(())
}

/// A block to replay: its header and transactions, on its parent's state.
pub struct BlockToTrace {
    pub header: Header,
    /// `None` for the block being built.
    pub hash: Option<B256>,
    pub txs: Vec<Arc<ExecutedTx>>,
    pub parent_state: StateView,
}

impl BlockToTrace {
    /// A session in this block with its system calls and its first `before` transactions done.
    pub fn session_at<'a>(
        &self,
        spec: &'a ChainSpec,
        before: usize,
        inspectors: (TraceGuard, DebugInspector),
    ) -> ChainResult<TraceSession<'a>> {
        let block = ExecBlock::from_header(&self.header);
        let db = CacheDB::new(self.parent_state.clone());
        let mut session = TraceSession::new(spec, db, &block, Mode::Transaction, inspectors);
        session.pre_block(&self.header)?;
        for etx in self.txs.iter().take(before) {
            session.replay(etx)?;
        }
        Ok(session)
    }

    /// Traces the transactions at `which`, each with its hash.
    pub fn trace(
        &self,
        spec: &ChainSpec,
        which: Range<usize>,
        inspectors: (TraceGuard, DebugInspector),
    ) -> ChainResult<Vec<(B256, GethTrace)>> {
        let mut session = self.session_at(spec, which.start, inspectors)?;
        let mut out = Vec::with_capacity(which.len());
        for i in which {
            let etx = &self.txs[i];
            let ctx = TransactionContext { block_hash: self.hash, tx_index: Some(i), tx_hash: Some(etx.hash()) };
            out.push((etx.hash(), session.trace_tx(etx, ctx)?));
        }
        Ok(out)
    }
}
