//! eth_simulateV1: a sequence of simulated blocks on top of a sealed block or of the block
//! being built. Each block runs on an EVM made by `exec::evm_context`, the function the
//! builder's EVM comes from, with the same system calls before and after its transactions;
//! simulation adds only an inspector (logs, transfers, deadline) and a precompile set that
//! honours `movePrecompileToAddress`. See docs/simulate.md.

mod block;
mod calls;
pub mod precompiles;
pub mod sanitize;
pub mod state_root;
pub mod tracer;

use std::sync::Arc;
use std::time::{Duration, Instant};

use alloy_consensus::{Header, Receipt};
use alloy_eips::eip4895::Withdrawal;
use alloy_primitives::{map::AddressSet, Address, Bytes, B256, KECCAK256_EMPTY, U256};
use alloy_rpc_types_eth::{state::StateOverride, BlockOverrides, TransactionRequest};
use revm::context::Evm;
use revm::database::CacheDB;
use revm::handler::instructions::EthInstructions;
use revm::handler::{EthFrame, ExecuteCommitEvm, MainBuilder};
use revm::inspector::InspectEvm;
use revm::interpreter::interpreter::EthInterpreter;
use revm::Database;
use serde::{Deserialize, Serialize};

use self::block::open_header;
pub use self::block::{CallFailure, CallOutcome, SimulatedBlock};
use self::precompiles::SimPrecompiles;
pub use self::sanitize::Limits;
use self::sanitize::{PlannedBlock, Requested};
use self::tracer::SimTracer;
use super::overrides::apply_state_overrides;
use super::request::{call_tx_env, sender};
use super::system::{self, SystemCalls};
use super::{evm_context, EvmContext, ExecBlock, Mode};
use crate::config::Profile;
use crate::error::{Cause, ChainError, ChainResult, InternalError, InvalidParam, SimulateError};
use crate::spec::ChainSpec;
use crate::state::StateView;
use crate::types::ExecutedTx;

/// eth_simulateV1's first parameter: alloy's `SimulatePayload`, except that a block's
/// overrides may also carry geth's `withdrawals` (alloy's `BlockOverrides` has none).
#[derive(Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SimulatePayload {
    pub block_state_calls: Vec<SimBlock>,
    #[serde(default)]
    pub trace_transfers: bool,
    #[serde(default)]
    pub validation: bool,
    #[serde(default)]
    pub return_full_transactions: bool,
}

#[derive(Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SimBlock {
    #[serde(default)]
    pub calls: Vec<TransactionRequest>,
    pub state_overrides: Option<StateOverride>,
    pub block_overrides: Option<SimBlockOverrides>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SimBlockOverrides {
    #[serde(flatten)]
    pub header: BlockOverrides,
    #[serde(default)]
    pub withdrawals: Option<Vec<Withdrawal>>,
}

/// What a simulation runs on top of, resolved from one view, and its limits.
pub struct SimulateContext<'a> {
    pub spec: &'a ChainSpec,
    pub limits: Limits,
    pub timeout: Duration,
    /// Gas all calls of the request may use together.
    pub gas_cap: u64,
    pub block_time_ms: u64,
    /// The block the simulated blocks follow, and its hash (zero for the block being built).
    pub base: Header,
    pub base_hash: B256,
    pub state: StateView,
    /// `Geth` (`--profile geth`): real state roots (zero otherwise), logs numbered as geth
    /// numbers them, two precompiles may move to one address (docs/compat.md).
    pub profile: Profile,
}

type SimEvm = Evm<
    EvmContext<StateView>,
    SimTracer,
    EthInstructions<EthInterpreter, EvmContext<StateView>>,
    SimPrecompiles,
    EthFrame,
>;

/// The request's shape against the client limits, before any state is read.
pub fn check_payload(payload: &SimulatePayload, limits: &Limits) -> ChainResult<()> {
    if payload.block_state_calls.is_empty() {
        return Err(InvalidParam::NoSimBlocks.into());
    }
    sanitize::check_calls(&requested(payload)?, limits)
}

fn requested(payload: &SimulatePayload) -> ChainResult<Vec<Requested>> {
    let number_invalid = |_| ChainError::Simulate(SimulateError::NumberWidth);
    payload
        .block_state_calls
        .iter()
        .map(|b| {
            let o = b.block_overrides.as_ref().map(|o| &o.header);
            Ok(Requested {
                number: o.and_then(|o| o.number).map(u64::try_from).transpose().map_err(number_invalid)?,
                time: o.and_then(|o| o.time),
                calls: b.calls.len(),
            })
        })
        .collect()
}

/// eth_simulateV1: the simulated blocks, each with its calls' outcomes.
pub fn simulate(ctx: SimulateContext, payload: &SimulatePayload) -> ChainResult<Vec<SimulatedBlock>> {
    let deadline = Instant::now() + ctx.timeout;
    check_payload(payload, &ctx.limits)?;
    let requested = requested(payload)?;
    let step = sanitize::block_time_secs(ctx.block_time_ms);
    let plan = sanitize::plan_blocks((ctx.base.number, ctx.base.timestamp), &requested, step, ctx.limits.max_blocks)?;

    let mut db = CacheDB::new(ctx.state.clone());
    db.cache.block_hashes.insert(U256::from(ctx.base.number), ctx.base_hash);
    let mut sim = Simulator {
        ctx: &ctx,
        payload,
        db: Some(db),
        gas_budget: ctx.gas_cap,
        deadline,
        written: Default::default(),
        captured: 0,
    };
    let mut parent = (ctx.base.clone(), ctx.base_hash);
    let mut out = Vec::with_capacity(plan.len());
    for planned in &plan {
        sim.check_deadline()?;
        let request = planned.request.map(|i| &payload.block_state_calls[i]);
        let block = sim.run_block(&parent.0, parent.1, planned, request)?;
        parent = (block.header.clone(), block.hash);
        out.push(block);
    }
    Ok(out)
}

struct Simulator<'a> {
    ctx: &'a SimulateContext<'a>,
    payload: &'a SimulatePayload,
    /// The state as the simulation has left it; lent to each block's EVM in turn.
    db: Option<CacheDB<StateView>>,
    /// Gas the remaining calls of the request may still use.
    gas_budget: u64,
    deadline: Instant,
    /// Accounts written outside the EVM so far (overrides, withdrawals), for state roots.
    written: AddressSet,
    /// Logs the block's calls captured so far, failed frames' included (geth's numbering).
    captured: u64,
}

fn timeout(ctx: &SimulateContext) -> ChainError {
    SimulateError::Timeout { ms: ctx.timeout.as_millis() }.into()
}

impl Simulator<'_> {
    fn check_deadline(&self) -> ChainResult<()> {
        if Instant::now() >= self.deadline {
            return Err(timeout(self.ctx));
        }
        Ok(())
    }

    fn run_block(
        &mut self,
        parent: &Header,
        parent_hash: B256,
        planned: &PlannedBlock,
        request: Option<&SimBlock>,
    ) -> ChainResult<SimulatedBlock> {
        let spec = self.ctx.spec;
        let block_overrides = request.and_then(|r| r.block_overrides.as_ref());
        let header = open_header(
            spec,
            parent,
            parent_hash,
            planned,
            block_overrides.map(|o| &o.header),
            self.payload.validation,
        )?;
        let spec_id = spec.spec_at(header.number, header.timestamp);

        let mut db = self.db.take().ok_or(InternalError::SimulationStateLost)?;
        let mut precompiles = SimPrecompiles::new(spec_id);
        if let Some(overrides) = request.and_then(|r| r.state_overrides.as_ref()) {
            precompiles.apply_overrides(overrides, self.ctx.profile == Profile::Geth)?;
            apply_state_overrides(&mut db, overrides)?;
        }
        let mut evm = self.build_evm(db, &header, block_overrides.map(|o| &o.header), precompiles);
        self.captured = 0;
        system::pre_block(&mut evm, &header, spec_id)?;

        let mut block = SimulatedBlock {
            header,
            hash: B256::ZERO,
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
        let mut db = evm.ctx.journaled_state.journal.database;
        credit_withdrawals(&mut db, &block.withdrawals)?;
        credit_rewards(&mut db, spec, &block.header, &mut self.written)?;
        if self.ctx.profile == Profile::Geth {
            let overrides = request.and_then(|r| r.state_overrides.as_ref());
            self.written.extend(state_root::written_by(overrides, &block.withdrawals));
            block.header.state_root = state_root::simulated_state_root(&self.ctx.state, &db, &self.written, spec_id)?;
        }

        block.seal(requests.map(|r| r.requests_hash()));
        // BLOCKHASH in later simulated blocks sees this block.
        db.cache.block_hashes.insert(U256::from(block.header.number), block.hash);
        self.db = Some(db);
        Ok(block)
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
        let mut ctx = evm_context(db, self.ctx.spec, &ExecBlock::from_header(header), mode).modify_cfg_chained(|cfg| {
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

    fn run_call(&mut self, evm: &mut SimEvm, block: &mut SimulatedBlock, call: &TransactionRequest) -> ChainResult<()> {
        let chain_id = self.ctx.spec.chain_id();
        if let Some(c) = call.chain_id {
            if c != chain_id {
                return Err(SimulateError::ChainId { have: c, want: chain_id }.into());
            }
        }
        let sender = sender(call);
        let header = &block.header;
        let used = block.txs.last().map(|t| t.receipt.cumulative_gas_used).unwrap_or(0);
        let remaining = header.gas_limit.saturating_sub(used);
        let wanted = match call.gas {
            Some(g) if g > remaining => {
                return Err(SimulateError::BlockGasLimit { used, asked: g, limit: header.gas_limit }.into())
            }
            Some(g) => g,
            None => remaining,
        };
        if self.gas_budget == 0 {
            return Err(SimulateError::BudgetUsedUp(self.ctx.gas_cap).into());
        }
        let gas = wanted.min(self.gas_budget);
        let capped = gas < wanted;
        let base_fee = header.base_fee_per_gas.unwrap_or_default();
        let state_nonce = evm.ctx.journaled_state.database.basic(sender)?.map(|a| a.nonce).unwrap_or_default();
        let nonce = call.nonce.unwrap_or(state_nonce);
        if self.payload.validation {
            // geth checks the nonce before the fees (revm the other way round).
            calls::check_nonce(nonce, state_nonce).map_err(|e| calls::refusal(e, sender, gas, capped))?;
        }
        calls::check_fees(call, base_fee, self.payload.validation)?;

        let call = calls::with_fee_defaults(call);
        let mut env = call_tx_env(&call, chain_id, gas, nonce, Some(base_fee))?;
        // revm refuses a transaction nonce of 2^64-1 even with nonce checks off; geth runs such
        // a call unvalidated (its nonce check is off), and a sender at 2^64-1 wraps to 0.
        let unchecked_max = !self.payload.validation && nonce == u64::MAX;
        let wraps = !self.payload.validation && state_nonce == u64::MAX;
        if unchecked_max {
            env.nonce = 0;
        }
        let tx = calls::unsigned_tx(&call, chain_id, nonce, gas)?;

        // Without validation a blob call that names no blob fee pays none: geth zeroes the
        // blob base fee for it, as it zeroes the base fee for calls without fees.
        let block_blob_fee = evm.ctx.block.blob_excess_gas_and_price;
        let free_blobs = !self.payload.validation
            && call.blob_versioned_hashes.is_some()
            && call.max_fee_per_blob_gas.unwrap_or_default() == 0;
        if let (true, Some(blob)) = (free_blobs, evm.ctx.block.blob_excess_gas_and_price.as_mut()) {
            blob.blob_gasprice = 0;
        }
        evm.inspector.take_logs();
        let out = evm.inspect_tx(env);
        evm.ctx.block.blob_excess_gas_and_price = block_blob_fee;
        if evm.inspector.timed_out {
            return Err(timeout(self.ctx));
        }
        let out = out.map_err(|e| calls::refusal(e, sender, gas, capped))?;
        let traced = evm.inspector.take_logs();
        evm.commit(out.state);

        let result = out.result;
        let gas_used = result.tx_gas_used();
        self.gas_budget = self.gas_budget.saturating_sub(gas_used);
        let receipt_logs = match &result {
            revm::context_interface::result::ExecutionResult::Success { logs, .. } => logs.clone(),
            _ => Vec::new(),
        };
        let receipt =
            Receipt { status: result.is_success().into(), cumulative_gas_used: used + gas_used, logs: receipt_logs };
        let mut outcome = CallOutcome::new(&result, traced.logs);
        if self.ctx.profile == Profile::Geth {
            let first = self.captured;
            outcome.log_indexes = Some(traced.ordinals.iter().map(|o| first + o).take(outcome.logs.len()).collect());
            self.captured += traced.captured;
        }
        if wraps && call.to.is_some_and(|k| k.is_call()) {
            // geth's nonce is a uint64 that wraps; revm's saturates.
            let db = &mut evm.ctx.journaled_state.database;
            let mut info = db.basic(sender)?.unwrap_or_default();
            info.nonce = 0;
            db.insert_account_info(sender, info);
        }
        block.calls.push(outcome);
        block.txs.push(Arc::new(ExecutedTx::eth(tx.envelope, sender, receipt, gas_used)));
        block.encoded.push(tx.encoded);
        Ok(())
    }
}

impl SystemCalls for SimEvm {
    /// A system call inside the simulated block, as the builder makes them (not traced:
    /// it is no transaction).
    fn system_call(&mut self, address: Address, input: Bytes) -> ChainResult<Option<Bytes>> {
        let exists = self.ctx.journaled_state.database.basic(address)?.is_some_and(|a| a.code_hash != KECCAK256_EMPTY);
        if !exists {
            return Ok(None);
        }
        let out = super::system::run(self, address, input)
            .map_err(|e| InternalError::SystemCall { address, source: Cause::new(e) })?;
        let output = out.result.output().cloned();
        self.commit(out.state);
        Ok(output)
    }
}

/// A simulated proof-of-work block pays the ethash block reward to its fee recipient, as
/// geth's engine does when it assembles one (no uncles).
fn credit_rewards(
    db: &mut CacheDB<StateView>,
    spec: &ChainSpec,
    header: &Header,
    written: &mut AddressSet,
) -> ChainResult<()> {
    for (address, amount) in crate::consensus::block_rewards(spec, header, &[]) {
        let mut info = db.basic(address)?.unwrap_or_default();
        info.balance = info.balance.saturating_add(amount);
        db.insert_account_info(address, info);
        written.insert(address);
    }
    Ok(())
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
