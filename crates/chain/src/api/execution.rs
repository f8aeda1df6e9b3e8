//! eth_call, eth_estimateGas and eth_simulateV1 against a block the caller names: the
//! view is resolved here, the execution itself lives in `exec`.

use std::sync::Arc;
use std::time::Duration;

use alloy_primitives::Bytes;
use alloy_rpc_types_eth::{state::StateOverride, BlockOverrides, TransactionRequest};

use crate::chain_state::ChainState;
use crate::config::Profile;
use crate::error::ChainResult;
use crate::exec::call::{self, CallContext};
use crate::exec::estimate;
use crate::exec::overrides::apply_block_overrides;
use crate::exec::simulate::{self, Limits, SimulateContext, SimulatePayload, SimulatedBlock};
use crate::exec::ExecBlock;
use crate::types::BlockId;
use crate::view::Resolved;

/// The block time geth's eth_simulateV1 assumes between simulated blocks.
const GETH_BLOCK_TIME_MS: u64 = 12_000;

pub struct Execution {
    chain: Arc<ChainState>,
}

impl Execution {
    pub fn new(chain: Arc<ChainState>) -> Self {
        Self { chain }
    }

    fn context(&self, block: BlockId, overrides: Option<&BlockOverrides>) -> ChainResult<CallContext<'_>> {
        let view = self.chain.view();
        let at = view.resolve(block)?;
        let mut exec_block = ExecBlock::from_header(&view.context_header(at)?);
        if let Some(o) = overrides {
            apply_block_overrides(&mut exec_block, o)?;
        }
        Ok(CallContext {
            spec: self.chain.spec(),
            state: view.state(at),
            block: exec_block,
            gas_cap: self.chain.config().gas_cap,
            unpriced_sees_zero_fees: self.chain.config().profile == Profile::Geth,
        })
    }

    pub fn call(
        &self,
        tx: &TransactionRequest,
        block: BlockId,
        state_overrides: Option<&StateOverride>,
        block_overrides: Option<&BlockOverrides>,
    ) -> ChainResult<Bytes> {
        super::prefetch::request(&self.chain, tx);
        call::call(&self.context(block, block_overrides)?, tx, state_overrides)
    }

    pub fn estimate_gas(
        &self,
        tx: &TransactionRequest,
        block: BlockId,
        state_overrides: Option<&StateOverride>,
    ) -> ChainResult<u64> {
        super::prefetch::request(&self.chain, tx);
        estimate::estimate_gas(&self.context(block, None)?, tx, state_overrides)
    }

    pub fn simulate(&self, payload: &SimulatePayload, block: BlockId) -> ChainResult<Vec<SimulatedBlock>> {
        let config = self.chain.config();
        let limits = Limits {
            max_blocks: config.simulate_max_blocks,
            max_calls_per_block: config.simulate_max_calls_per_block,
            max_calls: config.simulate_max_calls,
        };
        simulate::check_payload(payload, &limits)?;
        let geth = config.profile == Profile::Geth;
        let view = self.chain.view();
        let at = view.resolve(block)?;
        // The block being built has no hash until it is sealed: its children link to zero,
        // as pre-confirmed receipts do.
        let base_hash = match at {
            Resolved::Pending => Default::default(),
            Resolved::Sealed(_) => view.block_hash(at)?.unwrap_or_default(),
        };
        let ctx = SimulateContext {
            spec: self.chain.spec(),
            limits,
            timeout: Duration::from_millis(config.simulate_timeout_ms),
            gas_cap: config.gas_cap,
            // geth's simulated blocks are 12 s apart; ours follow this chain's block time.
            block_time_ms: if geth { GETH_BLOCK_TIME_MS } else { config.block_time_ms },
            base: view.context_header(at)?,
            base_hash,
            state: view.state(at),
            profile: config.profile,
        };
        simulate::simulate(ctx, payload)
    }
}
