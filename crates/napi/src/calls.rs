//! Work off the event loop: calls, estimates, simulation, submissions, log and fee scans.

use napi::bindgen_prelude::Either;
use napi_derive::napi;
use preconf_rpc::params;
use preconf_rpc::render::{self, simulate, to_json};

use crate::failure::NativeFailure;
use crate::work::Class;
use crate::NativeNode;

#[napi]
impl NativeNode {
    /// eth_sendRawTransaction on the calling event loop, for a node without a pool journal
    /// (`ChainInfo::submits_inline`): there, accepting a transaction never waits, and a hop to
    /// a submit thread and back costs more than the work (docs/architecture.md).
    #[napi]
    pub fn send_raw_transaction_inline(&self, raw: String) -> Either<String, NativeFailure> {
        self.sync(|n| submit_raw(n, &raw))
    }

    /// A raw transaction's hash, keccak256 of its EIP-2718 bytes, decoding nothing: an RPC
    /// node that sends eth_sendRawTransactionSync on to its sequencer waits for this hash
    /// before the sequencer answers, or without its answer.
    #[napi]
    pub fn transaction_hash(&self, raw: String) -> Either<String, NativeFailure> {
        self.sync(|_| Ok(format!("\"{:#x}\"", alloy_primitives::keccak256(params::raw_tx(&raw)?))))
    }

    /// eth_sendRawTransaction's checks, in the same words, admitting nothing; the hash. For an
    /// RPC node without a sequencer: it answers what is wrong with a transaction before saying
    /// that it has nowhere to send it.
    #[napi]
    pub fn check_raw_transaction(&self, raw: String) -> Either<String, NativeFailure> {
        self.sync(|n| Ok(format!("\"{:#x}\"", n.api().submit.validate_raw(params::raw_tx(&raw)?)?.hash)))
    }

    /// Addresses eth_sendTransaction can sign for (the dev chain's accounts; none otherwise).
    #[napi]
    pub fn accounts(&self) -> String {
        let list: Vec<String> =
            self.node.api().submit.dev_accounts().iter().map(|a| format!("{:#x}", a.address)).collect();
        to_json(&list)
    }

    #[napi]
    pub fn gas_price(&self) -> Either<String, NativeFailure> {
        self.sync(|n| Ok(render::quantity(n.api().fees.gas_price()?)))
    }

    #[napi]
    pub fn max_priority_fee_per_gas(&self) -> Either<String, NativeFailure> {
        self.sync(|n| Ok(render::quantity(n.api().fees.suggested_tip()?)))
    }
}

/// eth_sendRawTransaction's work, wherever it runs: decode, admit to the pool, the hash.
fn submit_raw(n: &preconf_chain::Node, raw: &str) -> preconf_chain::ChainResult<String> {
    Ok(format!("\"{:#x}\"", n.api().submit.submit_raw(params::raw_tx(raw)?)?))
}

work_methods! {
    #[doc = " eth_call on a calls thread; on a fork, one that meets state only the upstream has"]
    #[doc = " runs again on an upstream thread (`work::run_or_defer`)."]
    fn call(request: String) per client on Class::Calls, then Class::Upstream => |n| {
        let p: params::CallParams = params::json(&request, "call request")?;
        let out = n.api().execution.call(
            &p.tx,
            params::block(&p.block)?,
            p.state_overrides.as_ref(),
            p.block_overrides.as_ref(),
        )?;
        Ok(format!("\"{out}\""))
    };

    #[doc = " eth_estimateGas, as `call`."]
    fn estimate_gas(request: String) per client on Class::Calls, then Class::Upstream => |n| {
        let p: params::EstimateParams = params::json(&request, "estimate request")?;
        Ok(render::quantity(n.api().execution.estimate_gas(&p.tx, params::block(&p.block)?, p.state_overrides.as_ref())?))
    };

    fn simulate(request: String) per client on Class::Simulate => |n| {
        let p: params::SimulateParams = params::json(&request, "simulation request")?;
        let blocks = n.api().execution.simulate(&p.payload, params::block(&p.block)?)?;
        Ok(simulate::simulated_blocks(&blocks, p.payload.return_full_transactions))
    };

    #[doc = " eth_sendRawTransaction on a submit thread: with a journal it waits for the fdatasync."]
    fn send_raw_transaction(raw: String) on Class::Submit => |n| submit_raw(n, &raw);

    #[doc = " eth_sendTransaction for the dev chain's funded accounts, as `call` (nothing is"]
    #[doc = " admitted before every read it needs is held, so a first run cut short admits nothing)."]
    fn send_transaction(request: String) on Class::Calls, then Class::Upstream => |n| {
        let tx = params::json(&request, "transaction")?;
        Ok(format!("\"{:#x}\"", n.api().submit.send_transaction(&tx)?))
    };

    fn get_logs(filter: String) per client on Class::Scans => |n| {
        crate::history::logs(n, &filter)
    };

    #[doc = " eth_getProof: `keys` are 0x storage keys as the request named them."]
    fn get_proof(address: String, keys: Vec<String>, block: String) per client on Class::Calls => |n| {
        let address = params::address(&address)?;
        let keys = keys.iter().map(|k| params::storage_key(k)).collect::<preconf_chain::ChainResult<Vec<_>>>()?;
        let slots: Vec<_> = keys.iter().map(|k| k.as_b256().into()).collect();
        let proof = n.api().proofs.proof(address, &slots, params::block(&block)?)?;
        Ok(render::proof::account_proof(address, keys, proof))
    };

    fn fee_history(request: String) per client on Class::Scans => |n| {
        let p: params::FeeHistoryParams = params::json(&request, "fee history request")?;
        Ok(to_json(&n.api().fees.fee_history(
            u64::from(p.block_count),
            params::block(&p.newest_block)?,
            &p.reward_percentiles,
        )?))
    };
}
