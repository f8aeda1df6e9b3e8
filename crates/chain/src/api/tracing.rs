//! debug_traceCall, debug_traceTransaction, debug_traceBlockByNumber/ByHash and
//! eth_createAccessList against the block the caller names, the block being built
//! included: the view is resolved here, the execution lives in `exec::trace` and
//! `exec::access_list`.

use std::sync::Arc;
use std::time::Duration;

use alloy_primitives::B256;
use alloy_rpc_types_eth::{state::StateOverride, BlockOverrides, TransactionRequest};
use alloy_rpc_types_trace::geth::GethTrace;
use revm::database::CacheDB;

use super::blocks::Blocks;
use crate::chain_state::ChainState;
use crate::error::{ChainError, ChainResult, InternalError, Missing, Rejection};
use crate::exec::access_list::{self, AccessListOutcome};
use crate::exec::call::CallContext;
use crate::exec::outputs::{self, TxOutput};
use crate::exec::overrides::apply_block_overrides;
use crate::exec::prepare::{capped_gas, prepare_call};
use crate::exec::trace::session::{BlockToTrace, TraceSession};
use crate::exec::trace::{inspectors, TraceLimits, TraceOptions};
use crate::exec::{ExecBlock, Mode};
use crate::types::BlockId;
use crate::view::{ChainView, Resolved};

/// geth's default trace timeout.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);

/// debug_traceCall's options beyond the tracer's.
#[derive(Clone, Debug, Default)]
pub struct TraceCallOptions {
    pub trace: TraceOptions,
    pub state_overrides: Option<StateOverride>,
    pub block_overrides: Option<BlockOverrides>,
    /// Run the call on the state before this transaction of the block (after the ones before it).
    pub tx_index: Option<u64>,
}

pub struct Tracing {
    chain: Arc<ChainState>,
    blocks: Arc<Blocks>,
}

impl Tracing {
    pub fn new(chain: Arc<ChainState>, blocks: Arc<Blocks>) -> Self {
        Self { chain, blocks }
    }

    fn limits(&self) -> TraceLimits {
        let c = self.chain.config();
        TraceLimits {
            default_timeout: DEFAULT_TIMEOUT,
            max_timeout: Duration::from_millis(c.trace_max_timeout_ms),
            max_bytes: c.trace_max_bytes,
        }
    }

    /// The largest trace output a request may produce (the edge checks what it rendered).
    pub fn max_bytes(&self) -> usize {
        self.chain.config().trace_max_bytes
    }

    /// The block at `at` with its parent's state, ready to replay.
    fn block_to_trace(&self, view: &ChainView, at: Resolved) -> ChainResult<BlockToTrace> {
        let block = self.blocks.block_data(view, at)?.ok_or_else(|| not_found_block(at))?;
        let number = block.header.number;
        if number == 0 {
            return Err(Rejection::GenesisNotTraceable.into());
        }
        // Replaying needs the parent's state, which `--history-blocks` may have pruned.
        view.snapshot.check_history(number - 1)?;
        Ok(BlockToTrace {
            header: block.header.clone(),
            hash: block.hash,
            txs: block.txs.to_vec(),
            parent_state: view.state_at(number - 1),
        })
    }

    /// What each transaction of sealed block `number` returned (anvil_mine_detailed).
    pub fn tx_outputs(&self, number: u64) -> ChainResult<Vec<TxOutput>> {
        let view = self.chain.view();
        let block = self.block_to_trace(&view, Resolved::Sealed(number))?;
        outputs::tx_outputs(self.chain.spec(), &block)
    }

    /// debug_traceBlockByNumber / ByHash: every transaction of the block, in order.
    pub fn trace_block(&self, id: BlockId, opts: &TraceOptions) -> ChainResult<Vec<(B256, GethTrace)>> {
        let view = self.chain.view();
        let at = view.resolve(id).map_err(|e| match (e, id) {
            (ChainError::HeaderNotFound, BlockId::Number(n)) => Missing::Block(n).into(),
            (ChainError::HeaderNotFound, BlockId::Hash(h)) => Missing::BlockHash(h).into(),
            (e, _) => e,
        })?;
        let block = self.block_to_trace(&view, at)?;
        let inspectors = inspectors(opts, &self.limits())?;
        block.trace(self.chain.spec(), 0..block.txs.len(), inspectors)
    }

    /// debug_traceTransaction: a sealed transaction, or a pre-confirmed one in the block
    /// being built (its block's earlier transactions are replayed first).
    pub fn trace_transaction(&self, hash: B256, opts: &TraceOptions) -> ChainResult<GethTrace> {
        let inspectors = inspectors(opts, &self.limits())?;
        let view = self.chain.view();
        let (at, index) = match view.pending.as_ref().and_then(|p| p.position(&hash)) {
            Some(i) => (Resolved::Pending, i),
            None => match view.snapshot.tx_location(&hash)? {
                Some((number, index)) if number <= view.head_number() => (Resolved::Sealed(number), index as usize),
                _ => return Err(Missing::Transaction.into()),
            },
        };
        let block = self.block_to_trace(&view, at)?;
        let mut traces = block.trace(self.chain.spec(), index..index + 1, inspectors)?;
        traces.pop().map(|(_, t)| t).ok_or_else(|| InternalError::NoTrace.into())
    }

    /// debug_traceCall: a call on the state after the named block (or, with `tx_index`,
    /// before that transaction of it), in that block's context; `pending` included.
    pub fn trace_call(&self, tx: &TransactionRequest, id: BlockId, opts: &TraceCallOptions) -> ChainResult<GethTrace> {
        let inspectors = inspectors(&opts.trace, &self.limits())?;
        let spec = self.chain.spec();
        let view = self.chain.view();
        let at = view.resolve(id)?;
        if let Resolved::Sealed(n) = at {
            view.snapshot.check_history(n)?;
        }
        let mut exec_block = ExecBlock::from_header(&view.context_header(at)?);
        if let Some(o) = &opts.block_overrides {
            apply_block_overrides(&mut exec_block, o)?;
        }
        let mut session = match opts.tx_index {
            None => TraceSession::new(spec, CacheDB::new(view.state(at)), &exec_block, Mode::Call, inspectors),
            Some(index) => {
                let block = self.block_to_trace(&view, at)?;
                let count = block.txs.len() as u64;
                if index >= count && !(index == 0 && count == 0) {
                    let block = block.hash.map_or_else(|| "pending".to_string(), |h| h.to_string());
                    return Err(Rejection::TxIndexOutOfRange { index, block }.into());
                }
                let mut session = block.session_at(spec, index as usize, inspectors)?;
                session.use_call_rules(&exec_block);
                session
            }
        };
        let gas = capped_gas(tx, self.chain.config().gas_cap);
        let prepared = prepare_call(session.db(), spec, exec_block.base_fee, tx, opts.state_overrides.as_ref(), gas)?;
        session.trace_call(prepared.env)
    }

    /// eth_createAccessList.
    pub fn create_access_list(
        &self,
        tx: &TransactionRequest,
        id: BlockId,
        state_overrides: Option<&StateOverride>,
    ) -> ChainResult<AccessListOutcome> {
        super::prefetch::request(&self.chain, tx);
        let view = self.chain.view();
        let at = view.resolve(id)?;
        let ctx = CallContext {
            spec: self.chain.spec(),
            state: view.state(at),
            block: ExecBlock::from_header(&view.context_header(at)?),
            gas_cap: self.chain.config().gas_cap,
            unpriced_sees_zero_fees: self.chain.config().profile == crate::config::Profile::Geth,
        };
        access_list::create_access_list(&ctx, tx, state_overrides)
    }
}

fn not_found_block(at: Resolved) -> ChainError {
    match at {
        Resolved::Pending => Missing::PendingBlock.into(),
        Resolved::Sealed(n) => Missing::Block(n).into(),
    }
}
