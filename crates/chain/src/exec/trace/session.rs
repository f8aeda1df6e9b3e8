//! One trace request's EVM (block context, guard, tracer) and the state as the replayed
//! transactions leave it; and the replay of a block up to the transactions traced.

use std::ops::Range;
use std::sync::Arc;

use alloy_consensus::Header;
use alloy_primitives::{Address, Bytes, B256, KECCAK256_EMPTY};
use alloy_rpc_types_trace::geth::GethTrace;
use revm::context::TxEnv;
use revm::context_interface::result::EVMError;
use revm::database::CacheDB;
use revm::handler::{ExecuteCommitEvm, ExecuteEvm, MainBuilder, MainnetEvm};
use revm::inspector::InspectEvm;
use revm::Database;
use revm_inspectors::tracing::{DebugInspector, DebugInspectorError, TransactionContext};

use super::guard::TraceGuard;
use super::{bounds_error, geth_shape};
use crate::error::{Cause, ChainError, ChainResult, InternalError, Rejection};
use crate::exec::errors::evm_error;
use crate::exec::system::{self, SystemCalls};
use crate::exec::{cfg_env, evm_context, tx_env_from_executed, EvmContext, ExecBlock, Mode};
use crate::spec::ChainSpec;
use crate::state::StateView;
use crate::types::ExecutedTx;

pub type TraceEvm = MainnetEvm<EvmContext<StateView>, (TraceGuard, DebugInspector)>;

pub struct TraceSession<'a> {
    spec: &'a ChainSpec,
    evm: TraceEvm,
}

impl<'a> TraceSession<'a> {
    pub fn new(
        spec: &'a ChainSpec,
        db: CacheDB<StateView>,
        block: &ExecBlock,
        mode: Mode,
        inspectors: (TraceGuard, DebugInspector),
    ) -> Self {
        Self { spec, evm: evm_context(db, spec, block, mode).build_mainnet_with_inspector(inspectors) }
    }

    /// The state the next transaction runs on (for overrides and nonces).
    pub fn db(&mut self) -> &mut CacheDB<StateView> {
        &mut self.evm.ctx.journaled_state.database
    }

    /// From here on, transactions run with eth_call's rules in `block`.
    pub fn use_call_rules(&mut self, block: &ExecBlock) {
        let spec_id = self.spec.spec_at(block.number, block.timestamp);
        let cfg = cfg_env(self.spec, spec_id, Mode::Call);
        self.evm.ctx.modify_cfg(|c| *c = cfg);
        self.evm.ctx.block = block.env(self.spec, spec_id);
    }

    pub fn pre_block(&mut self, header: &Header) -> ChainResult<()> {
        let spec_id = self.spec.spec_at(header.number, header.timestamp);
        system::pre_block(self, header, spec_id)
    }

    /// Runs one of the block's transactions untraced and checks it used the gas it did
    /// when the block was built (the replay must reproduce the block exactly).
    pub fn replay(&mut self, etx: &ExecutedTx) -> ChainResult<()> {
        self.check_clock()?;
        let out = self.evm.transact(tx_env_from_executed(etx)?).map_err(|e| replay_failed(etx, e))?;
        check_replay(etx, out.result.tx_gas_used())?;
        self.evm.commit(out.state);
        Ok(())
    }

    /// Traces one of the block's transactions.
    pub fn trace_tx(&mut self, etx: &ExecutedTx, ctx: TransactionContext) -> ChainResult<GethTrace> {
        let env = tx_env_from_executed(etx)?;
        let (trace, gas) = self.traced(env, Some(ctx), |e| replay_failed(etx, e))?;
        check_replay(etx, gas)?;
        Ok(trace)
    }

    /// Traces a call; a call refused before it runs fails as geth's does.
    pub fn trace_call(&mut self, env: TxEnv) -> ChainResult<GethTrace> {
        let from = env.caller;
        let refused = |e| match evm_error(e, from) {
            ChainError::InvalidTx(t) => Rejection::TracingFailed(t).into(),
            other => other,
        };
        Ok(self.traced(env, None, refused)?.0)
    }

    fn check_clock(&mut self) -> ChainResult<()> {
        let guard = &mut self.evm.inspector.0;
        match guard.check_clock() {
            Some(e) => Err(bounds_error(e, guard)),
            None => Ok(()),
        }
    }

    fn traced(
        &mut self,
        env: TxEnv,
        ctx: Option<TransactionContext>,
        refused: impl FnOnce(EVMError<ChainError>) -> ChainError,
    ) -> ChainResult<(GethTrace, u64)> {
        self.check_clock()?;
        self.evm.inspector.0.next_transaction();
        let out = self.evm.inspect_tx(env.clone());
        let guard = &self.evm.inspector.0;
        if let Some(e) = guard.exceeded {
            return Err(bounds_error(e, guard));
        }
        let out = out.map_err(refused)?;
        let evm = &mut self.evm;
        let tracer = &mut evm.inspector.1;
        let trace =
            tracer.get_result(ctx, &env, &evm.ctx.block, &out, &mut evm.ctx.journaled_state.database).map_err(|e| {
                match e {
                    DebugInspectorError::Database(e) => e,
                    other => InternalError::Tracer(Cause::new(other)).into(),
                }
            })?;
        tracer.fuse().map_err(|e| InternalError::Tracer(Cause::new(e)))?;
        let trace = geth_shape(trace, evm.inspector.0.step_limit(), &evm.ctx.journaled_state.database)?;
        let gas = out.result.tx_gas_used();
        evm.commit(out.state);
        Ok((trace, gas))
    }
}

impl SystemCalls for TraceSession<'_> {
    /// A system call before the block's transactions, as the builder made it (untraced).
    fn system_call(&mut self, address: Address, input: Bytes) -> ChainResult<Option<Bytes>> {
        let db = &mut self.evm.ctx.journaled_state.database;
        if db.basic(address)?.is_none_or(|a| a.code_hash == KECCAK256_EMPTY) {
            return Ok(None);
        }
        let out = crate::exec::system::run(&mut self.evm, address, input)
            .map_err(|e| InternalError::SystemCall { address, source: Cause::new(e) })?;
        let output = out.result.output().cloned();
        self.evm.commit(out.state);
        Ok(output)
    }
}

fn replay_failed(etx: &ExecutedTx, e: EVMError<ChainError>) -> ChainError {
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
