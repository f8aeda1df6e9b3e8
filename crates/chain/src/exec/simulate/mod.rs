//! eth_simulateV1: a sequence of simulated blocks on top of a sealed block or of the block
//! being built. Each block runs on an EVM made by `exec::evm_context`, the function the
//! builder's EVM comes from, with the same system calls before and after its transactions;
//! simulation adds only an inspector (logs, transfers, deadline) and a precompile set that
//! honours `movePrecompileToAddress`. See docs/simulate.md.

mod block;
mod calls;
pub mod precompiles;
pub mod sanitize;
pub mod tracer;

use std::sync::Arc;
use std::time::{Duration, Instant};

use alloy_consensus::{Header, Receipt};
use alloy_primitives::{Address, Bytes, B256, KECCAK256_EMPTY, U256};
use revm::context::Evm;
use revm::database::CacheDB;
use revm::handler::instructions::EthInstructions;
use revm::handler::{EthFrame, ExecuteCommitEvm, MainBuilder, SystemCallEvm};
use revm::inspector::InspectEvm;
use revm::interpreter::interpreter::EthInterpreter;
use revm::Database;
use serde::Deserialize;
use serde_json::Value;

use self::block::{open_header, CallOutcome, SimulatedBlock};
use self::precompiles::SimPrecompiles;
use self::sanitize::{Limits, PlannedBlock, Requested};
use self::tracer::SimTracer;
use super::request::{apply_state_overrides, BlockOverrides, CallRequest, StateOverrides};
use super::system::{self, SystemCalls};
use super::{evm_context, EvmContext, ExecBlock, Mode};
use crate::error::{ChainError, ChainResult, SimulateError};
use crate::node::{Node, Resolved};
use crate::state::StateView;
use crate::types::{BlockId, ExecutedTx};

/// The request as src/validation/simulate.ts hands it over.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SimulateParams {
    pub payload: SimulatePayload,
    pub block: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SimulatePayload {
    pub block_state_calls: Vec<BlockStateCall>,
    #[serde(default)]
    pub trace_transfers: bool,
    #[serde(default)]
    pub validation: bool,
    #[serde(default)]
    pub return_full_transactions: bool,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BlockStateCall {
    #[serde(default)]
    pub calls: Vec<CallRequest>,
    pub state_overrides: Option<StateOverrides>,
    pub block_overrides: Option<BlockOverrides>,
}

type SimEvm = Evm<EvmContext<StateView>, SimTracer, EthInstructions<EthInterpreter, EvmContext<StateView>>, SimPrecompiles, EthFrame>;

/// eth_simulateV1: one JSON block object (with `calls`) per simulated block.
pub fn simulate(node: &Node, params: &SimulateParams) -> ChainResult<Value> {
    let deadline = Instant::now() + Duration::from_millis(node.config.simulate_timeout_ms);
    let payload = &params.payload;
    if payload.block_state_calls.is_empty() {
        return Err(ChainError::InvalidParams("empty input: blockStateCalls has no blocks".into()));
    }
    let requested: Vec<Requested> = payload
        .block_state_calls
        .iter()
        .map(|b| Requested {
            number: b.block_overrides.as_ref().and_then(|o| o.number).map(|n| n.to()),
            time: b.block_overrides.as_ref().and_then(|o| o.time).map(|t| t.to()),
            calls: b.calls.len(),
        })
        .collect();
    let limits = Limits {
        max_blocks: node.config.simulate_max_blocks,
        max_calls_per_block: node.config.simulate_max_calls_per_block,
        max_calls: node.config.simulate_max_calls,
    };
    sanitize::check_calls(&requested, &limits)?;

    let view = node.view();
    let at = node.resolve(&view, BlockId::parse(&params.block)?)?;
    let base = node.context_header(&view, at)?;
    // The block being built has no hash until it is sealed: its children link to zero,
    // as pre-confirmed receipts do.
    let base_hash = match at {
        Resolved::Pending => B256::ZERO,
        Resolved::Sealed(n) => view.snapshot.block_hash(n)?.unwrap_or_default(),
    };
    let step = sanitize::block_time_secs(node.config.block_time_ms);
    let plan = sanitize::plan_blocks((base.number, base.timestamp), &requested, step, limits.max_blocks)?;

    let mut db = CacheDB::new(node.state(&view, at));
    db.cache.block_hashes.insert(U256::from(base.number), base_hash);
    let mut sim = Simulator { node, payload, db: Some(db), gas_budget: node.config.gas_cap, deadline };
    let mut parent = (base, base_hash);
    let mut out = Vec::with_capacity(plan.len());
    for planned in &plan {
        sim.check_deadline()?;
        let request = planned.request.map(|i| &payload.block_state_calls[i]);
        let (header, hash, json) = sim.run_block(&parent.0, parent.1, planned, request)?;
        out.push(json);
        parent = (header, hash);
    }
    Ok(Value::Array(out))
}

struct Simulator<'a> {
    node: &'a Node,
    payload: &'a SimulatePayload,
    /// The state as the simulation has left it; lent to each block's EVM in turn.
    db: Option<CacheDB<StateView>>,
    /// Gas the remaining calls of the request may still use.
    gas_budget: u64,
    deadline: Instant,
}

fn timeout(node: &Node) -> ChainError {
    ChainError::sim(
        SimulateError::Timeout,
        format!("execution aborted (timeout = {}ms)", node.config.simulate_timeout_ms),
    )
}

impl Simulator<'_> {
    fn check_deadline(&self) -> ChainResult<()> {
        if Instant::now() >= self.deadline {
            return Err(timeout(self.node));
        }
        Ok(())
    }

    fn run_block(
        &mut self,
        parent: &Header,
        parent_hash: B256,
        planned: &PlannedBlock,
        request: Option<&BlockStateCall>,
    ) -> ChainResult<(Header, B256, Value)> {
        let spec = &self.node.spec;
        let block_overrides = request.and_then(|r| r.block_overrides.as_ref());
        let header = open_header(spec, parent, parent_hash, planned, block_overrides, self.payload.validation)?;
        let spec_id = spec.spec_at(header.number, header.timestamp);

        let mut db = self.db.take().ok_or_else(|| ChainError::Internal("simulation state lost".into()))?;
        let mut precompiles = SimPrecompiles::new(spec_id);
        if let Some(overrides) = request.and_then(|r| r.state_overrides.as_ref()) {
            precompiles.apply_overrides(overrides)?;
            apply_state_overrides(&mut db, overrides)?;
        }
        let mut evm = self.build_evm(db, &header, block_overrides, precompiles);
        system::pre_block(&mut evm, &header, spec_id)?;

        let mut block = SimulatedBlock {
            header,
            txs: Vec::new(),
            encoded: Vec::new(),
            withdrawals: block_overrides.and_then(|o| o.withdrawals.clone()).unwrap_or_default(),
            calls: Vec::new(),
        };
        for call in request.map(|r| r.calls.as_slice()).unwrap_or_default() {
            self.check_deadline()?;
            self.run_call(&mut evm, &mut block, call)?;
        }
        let requests = system::post_block(&mut evm, spec_id)?;
        let mut db = evm.ctx.journaled_state.database;
        credit_withdrawals(&mut db, &block.withdrawals)?;

        let hash = block.seal(requests.map(|r| r.requests_hash()));
        // BLOCKHASH in later simulated blocks sees this block.
        db.cache.block_hashes.insert(U256::from(block.header.number), hash);
        self.db = Some(db);
        let json = block.to_json(hash, self.payload.return_full_transactions);
        Ok((block.header, hash, json))
    }

    /// The block's EVM: the builder's context (rules, block environment) with simulate's
    /// relaxations, the transfer tracer, and the block's precompile set.
    fn build_evm(
        &self,
        db: CacheDB<StateView>,
        header: &Header,
        overrides: Option<&BlockOverrides>,
        precompiles: SimPrecompiles,
    ) -> SimEvm {
        let mode = if self.payload.validation { Mode::Transaction } else { Mode::Call };
        let mut ctx = evm_context(db, &self.node.spec, &ExecBlock::from_header(header), mode).modify_cfg_chained(|cfg| {
            // geth skips these even with validation: a simulated sender may have code, and a
            // call's gas is checked against the gas left in the block, not its limit.
            cfg.disable_eip3607 = true;
            cfg.disable_block_gas_limit = true;
            cfg.tx_gas_limit_cap = Some(u64::MAX);
        });
        if let Some(fee) = overrides.and_then(|o| o.blob_base_fee) {
            if let Some(blob) = ctx.block.blob_excess_gas_and_price.as_mut() {
                blob.blob_gasprice = fee.saturating_to();
            }
        }
        let tracer = SimTracer::new(self.payload.trace_transfers, self.deadline);
        ctx.build_mainnet_with_inspector(tracer).with_precompiles(precompiles)
    }

    fn run_call(&mut self, evm: &mut SimEvm, block: &mut SimulatedBlock, call: &CallRequest) -> ChainResult<()> {
        let chain_id = self.node.chain_id();
        if let Some(c) = call.chain_id {
            if c.to::<u64>() != chain_id {
                return Err(ChainError::sim(
                    SimulateError::Generic,
                    format!("chainId does not match node's (have={c}, want={chain_id})"),
                ));
            }
        }
        let sender = call.sender();
        let header = &block.header;
        let used = block.txs.last().map(|t| t.receipt.cumulative_gas_used).unwrap_or(0);
        let remaining = header.gas_limit.saturating_sub(used);
        let wanted = match call.gas {
            Some(g) if g.to::<u64>() > remaining => {
                return Err(ChainError::sim(
                    SimulateError::BlockGasLimitExceeded,
                    format!("block gas limit reached: {used} used, {g} more asked of {}", header.gas_limit),
                ))
            }
            Some(g) => g.to::<u64>(),
            None => remaining,
        };
        if self.gas_budget == 0 {
            return Err(ChainError::sim(
                SimulateError::ClientLimitExceeded,
                format!("the request's gas budget of {} is used up", self.node.config.gas_cap),
            ));
        }
        let gas = wanted.min(self.gas_budget);
        let capped = gas < wanted;
        let base_fee = header.base_fee_per_gas.unwrap_or_default();
        calls::check_fees(call, base_fee, self.payload.validation)?;

        let nonce = match call.nonce {
            Some(n) => n.to::<u64>(),
            None => evm.ctx.journaled_state.database.basic(sender)?.map(|a| a.nonce).unwrap_or_default(),
        };
        let call = calls::with_fee_defaults(call);
        let env = call.to_tx_env(chain_id, gas, nonce, Some(base_fee))?;
        let tx = calls::unsigned_tx(&call, chain_id, nonce, gas)?;

        // Without validation a blob call that names no blob fee pays none: geth zeroes the
        // blob base fee for it, as it zeroes the base fee for calls without fees.
        let block_blob_fee = evm.ctx.block.blob_excess_gas_and_price;
        let free_blobs = !self.payload.validation
            && call.blob_versioned_hashes.is_some()
            && call.max_fee_per_blob_gas.unwrap_or_default().is_zero();
        if let (true, Some(blob)) = (free_blobs, evm.ctx.block.blob_excess_gas_and_price.as_mut()) {
            blob.blob_gasprice = 0;
        }
        evm.inspector.take_logs();
        let out = evm.inspect_tx(env);
        evm.ctx.block.blob_excess_gas_and_price = block_blob_fee;
        if evm.inspector.timed_out {
            return Err(timeout(self.node));
        }
        let out = out.map_err(|e| calls::refusal(e, sender, gas, capped))?;
        let logs = evm.inspector.take_logs();
        evm.commit(out.state);

        let result = out.result;
        let gas_used = result.tx_gas_used();
        self.gas_budget = self.gas_budget.saturating_sub(gas_used);
        let receipt_logs = match &result {
            revm::context_interface::result::ExecutionResult::Success { logs, .. } => logs.clone(),
            _ => Vec::new(),
        };
        let receipt = Receipt { status: result.is_success().into(), cumulative_gas_used: used + gas_used, logs: receipt_logs };
        block.calls.push(CallOutcome::new(&result, logs));
        block.txs.push(Arc::new(ExecutedTx { tx: tx.envelope, sender, receipt, gas_used }));
        block.encoded.push(tx.encoded);
        Ok(())
    }
}

impl SystemCalls for SimEvm {
    /// A system call inside the simulated block, as the builder makes them (not traced:
    /// it is no transaction).
    fn system_call(&mut self, address: Address, input: Bytes) -> ChainResult<Option<Bytes>> {
        let exists = self
            .ctx
            .journaled_state
            .database
            .basic(address)?
            .is_some_and(|a| a.code_hash != KECCAK256_EMPTY);
        if !exists {
            return Ok(None);
        }
        let out = SystemCallEvm::system_call(self, address, input)
            .map_err(|e| ChainError::Internal(format!("system call to {address} failed: {e}")))?;
        let output = out.result.output().cloned();
        self.commit(out.state);
        Ok(output)
    }
}

/// Withdrawals from `blockOverrides` credit their recipients after the block's calls.
fn credit_withdrawals(db: &mut CacheDB<StateView>, withdrawals: &[alloy_eips::eip4895::Withdrawal]) -> ChainResult<()> {
    for w in withdrawals {
        let mut info = db.basic(w.address)?.unwrap_or_default();
        info.balance = info.balance.saturating_add(w.amount_wei());
        db.insert_account_info(w.address, info);
    }
    Ok(())
}
