//! The test methods (`--dev`): anvil's and Hardhat's state edits, mining, time, snapshots,
//! impersonation and state dumps. Each call that changes the chain waits for the builder
//! to carry it out, on a submission thread (those threads mostly wait); dumps and loads,
//! which grow with the state, on the scan threads. A node without `--dev` answers each
//! with `unavailable` (TypeScript does not even register the methods there). State edits
//! and dumps are in state.rs.

mod state;

use alloy_primitives::{Bytes, U256};
use napi::bindgen_prelude::{Either, PromiseRaw};
use napi::Env;
use napi_derive::napi;
use preconf_chain::dev::requests::Mining;
use preconf_chain::dev::DevApi;
use preconf_chain::error::Unavailable;
use preconf_chain::types::BlockId;
use preconf_chain::{ChainResult, InvalidParam, Node};
use preconf_rpc::params;
use preconf_rpc::render::{self, block};

use crate::failure::NativeFailure;
use crate::work::Class;
use crate::NativeNode;

fn dev(n: &Node) -> ChainResult<&DevApi> {
    n.dev().ok_or(Unavailable::TestMethodsOff.into())
}

fn u256(s: &str) -> ChainResult<U256> {
    s.parse().map_err(|_| InvalidParam::Quantity(s.to_string()).into())
}

fn data(s: &str) -> ChainResult<Bytes> {
    s.parse().map_err(|_| InvalidParam::HexData(s[..s.len().min(20)].to_string()).into())
}

fn opt_quantity(s: Option<String>) -> ChainResult<Option<u64>> {
    s.as_deref().map(params::quantity).transpose()
}

impl NativeNode {
    fn dev_job<'env>(
        &self,
        env: &'env Env,
        class: Class,
        work: impl FnOnce(&DevApi) -> ChainResult<String> + Send + 'static,
    ) -> napi::Result<PromiseRaw<'env, Either<String, NativeFailure>>> {
        self.spawn(env, class, move |n| work(dev(n)?))
    }
}

#[napi]
impl NativeNode {
    /// Whether this node serves the test methods.
    #[napi]
    pub fn dev_enabled(&self) -> bool {
        self.node.dev().is_some()
    }

    /// anvil_impersonateAccount / anvil_stopImpersonatingAccount.
    #[napi]
    pub fn dev_impersonate(&self, address: String, on: bool) -> Either<String, NativeFailure> {
        self.sync(|n| {
            dev(n)?.impersonate(params::address(&address)?, on);
            Ok("null".into())
        })
    }

    /// anvil_autoImpersonateAccount.
    #[napi]
    pub fn dev_auto_impersonate(&self, on: bool) -> Either<String, NativeFailure> {
        self.sync(|n| {
            dev(n)?.auto_impersonate(on);
            Ok("null".into())
        })
    }

    /// eth_sendUnsignedTransaction: from any sender, without its key.
    #[napi]
    pub fn dev_send_unsigned<'env>(
        &self,
        env: &'env Env,
        request: String,
    ) -> napi::Result<PromiseRaw<'env, Either<String, NativeFailure>>> {
        self.dev_job(env, Class::Calls, move |d| {
            let tx = params::json(&request, "transaction")?;
            Ok(format!("\"{:#x}\"", d.send_unsigned(&tx)?))
        })
    }

    /// anvil_mine / evm_mine: `blocks` and the optional `interval` (seconds between their
    /// timestamps) and `timestamp` (the first one's) are 0x quantities.
    #[napi]
    pub fn dev_mine<'env>(
        &self,
        env: &'env Env,
        blocks: String,
        interval: Option<String>,
        timestamp: Option<String>,
    ) -> napi::Result<PromiseRaw<'env, Either<String, NativeFailure>>> {
        self.dev_job(env, Class::Submit, move |d| {
            d.mine(params::quantity(&blocks)?, opt_quantity(interval)?, opt_quantity(timestamp)?)?;
            Ok("null".into())
        })
    }

    /// anvil_mine_detailed / evm_mine_detailed: mines as evm_mine, and answers the blocks it
    /// sealed with full transactions and what each returned, as anvil does.
    #[napi]
    pub fn dev_mine_detailed<'env>(
        &self,
        env: &'env Env,
        blocks: String,
        timestamp: Option<String>,
    ) -> napi::Result<PromiseRaw<'env, Either<String, NativeFailure>>> {
        self.spawn(env, Class::Submit, move |n| {
            let mined = dev(n)?.mine(params::quantity(&blocks)?, None, opt_quantity(timestamp)?)?;
            let api = n.api();
            let mut out = Vec::new();
            for number in mined {
                let Some(data) = api.blocks.by_id(BlockId::Number(number))? else { continue };
                out.push(block::mined_block(&data, &api.tracing.tx_outputs(number)?));
            }
            Ok(serde_json::Value::Array(out).to_string())
        })
    }

    /// evm_increaseTime: the clock's total offset, in seconds (a JSON number, as anvil).
    #[napi]
    pub fn dev_increase_time<'env>(
        &self,
        env: &'env Env,
        seconds: String,
    ) -> napi::Result<PromiseRaw<'env, Either<String, NativeFailure>>> {
        self.dev_job(env, Class::Submit, move |d| Ok(d.increase_time(params::quantity(&seconds)?)?.to_string()))
    }

    /// anvil_setTime: seconds the clock moved forward (a JSON number, as anvil).
    #[napi]
    pub fn dev_set_time<'env>(
        &self,
        env: &'env Env,
        timestamp: String,
    ) -> napi::Result<PromiseRaw<'env, Either<String, NativeFailure>>> {
        self.dev_job(env, Class::Submit, move |d| Ok(d.set_time(params::quantity(&timestamp)?)?.to_string()))
    }

    #[napi]
    pub fn dev_set_next_block_timestamp<'env>(
        &self,
        env: &'env Env,
        timestamp: String,
    ) -> napi::Result<PromiseRaw<'env, Either<String, NativeFailure>>> {
        self.dev_job(env, Class::Submit, move |d| {
            d.set_next_timestamp(params::quantity(&timestamp)?)?;
            Ok("null".into())
        })
    }

    #[napi]
    pub fn dev_set_next_block_base_fee<'env>(
        &self,
        env: &'env Env,
        fee: String,
    ) -> napi::Result<PromiseRaw<'env, Either<String, NativeFailure>>> {
        self.dev_job(env, Class::Submit, move |d| {
            d.set_next_base_fee(params::quantity(&fee)?)?;
            Ok("null".into())
        })
    }

    /// anvil_setCoinbase: the beneficiary of the blocks opened from now on.
    #[napi]
    pub fn dev_set_coinbase<'env>(
        &self,
        env: &'env Env,
        address: String,
    ) -> napi::Result<PromiseRaw<'env, Either<String, NativeFailure>>> {
        self.dev_job(env, Class::Submit, move |d| {
            d.set_coinbase(params::address(&address)?)?;
            Ok("null".into())
        })
    }

    /// anvil_setMinGasPrice: refused, in anvil's words when EIP-1559 is active.
    #[napi]
    pub fn dev_set_min_gas_price(&self) -> Either<String, NativeFailure> {
        self.sync(|n| {
            dev(n)?.set_min_gas_price()?;
            Ok("null".into())
        })
    }

    /// anvil_nodeInfo: the head, the next block's rules and fees, in anvil's shape.
    #[napi]
    pub fn dev_node_info(&self) -> Either<String, NativeFailure> {
        self.sync(|n| {
            dev(n)?;
            Ok(render::node::node_info(&n.api().node.info()?))
        })
    }

    /// anvil_metadata: the instance id and the live snapshots (from the builder) with the
    /// newest sealed block, in anvil's shape.
    #[napi]
    pub fn dev_metadata<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, Either<String, NativeFailure>>> {
        self.spawn(env, Class::Submit, |n| {
            let m = dev(n)?.metadata()?;
            let view = n.chain().view();
            Ok(render::node::metadata(n.chain().chain_id(), (view.head_number(), view.head_hash()), &m))
        })
    }

    /// evm_setBlockGasLimit: `true`, as anvil answers.
    #[napi]
    pub fn dev_set_block_gas_limit<'env>(
        &self,
        env: &'env Env,
        gas_limit: String,
    ) -> napi::Result<PromiseRaw<'env, Either<String, NativeFailure>>> {
        self.dev_job(env, Class::Submit, move |d| {
            d.set_block_gas_limit(params::quantity(&gas_limit)?)?;
            Ok("true".into())
        })
    }

    /// anvil_setBlockTimestampInterval (`seconds`) and anvil_removeBlockTimestampInterval
    /// (none): whether an interval was set before.
    #[napi]
    pub fn dev_set_block_timestamp_interval<'env>(
        &self,
        env: &'env Env,
        seconds: Option<String>,
    ) -> napi::Result<PromiseRaw<'env, Either<String, NativeFailure>>> {
        self.dev_job(env, Class::Submit, move |d| Ok(d.set_timestamp_interval(opt_quantity(seconds)?)?.to_string()))
    }

    /// evm_setAutomine.
    #[napi]
    pub fn dev_set_automine<'env>(
        &self,
        env: &'env Env,
        on: bool,
    ) -> napi::Result<PromiseRaw<'env, Either<String, NativeFailure>>> {
        self.dev_job(env, Class::Submit, move |d| {
            match on {
                true => d.set_mining(Mining::Auto)?,
                false => d.stop_automine()?,
            }
            Ok("null".into())
        })
    }

    /// anvil_setIntervalMining: seconds between sealed blocks; 0 seals only when asked.
    #[napi]
    pub fn dev_set_interval_mining<'env>(
        &self,
        env: &'env Env,
        seconds: String,
    ) -> napi::Result<PromiseRaw<'env, Either<String, NativeFailure>>> {
        self.dev_job(env, Class::Submit, move |d| {
            d.set_mining(match params::quantity(&seconds)? {
                0 => Mining::Manual,
                s => Mining::Interval(s),
            })?;
            Ok("null".into())
        })
    }

    /// anvil_getAutomine: `true`/`false`.
    #[napi]
    pub fn dev_automine<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, Either<String, NativeFailure>>> {
        self.dev_job(env, Class::Submit, |d| Ok((d.mining()? == Mining::Auto).to_string()))
    }

    /// anvil_getIntervalMining: seconds between sealed blocks (the block time rounded up to
    /// a second on the default schedule), or null when blocks are sealed on demand.
    #[napi]
    pub fn dev_interval_mining<'env>(
        &self,
        env: &'env Env,
    ) -> napi::Result<PromiseRaw<'env, Either<String, NativeFailure>>> {
        let block_time_ms = self.node.chain().config().block_time_ms;
        self.dev_job(env, Class::Submit, move |d| {
            Ok(match d.mining()? {
                Mining::Schedule => block_time_ms.div_ceil(1000).to_string(),
                Mining::Interval(s) => s.to_string(),
                Mining::Auto | Mining::Manual => "null".into(),
            })
        })
    }

    /// evm_snapshot: the id, a 0x quantity.
    #[napi]
    pub fn dev_snapshot<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, Either<String, NativeFailure>>> {
        self.dev_job(env, Class::Submit, |d| Ok(render::quantity(d.snapshot()?)))
    }

    /// evm_revert: `true`, or `false` when the snapshot does not exist (any more).
    #[napi]
    pub fn dev_revert<'env>(
        &self,
        env: &'env Env,
        id: String,
    ) -> napi::Result<PromiseRaw<'env, Either<String, NativeFailure>>> {
        self.dev_job(env, Class::Submit, move |d| {
            // An id past 64 bits was never handed out.
            let Ok(id) = params::quantity(&id) else { return Ok("false".into()) };
            Ok(d.revert(id)?.to_string())
        })
    }

    /// anvil_reset; `fork`: the request named a chain to fork (refused).
    #[napi]
    pub fn dev_reset<'env>(
        &self,
        env: &'env Env,
        fork: bool,
    ) -> napi::Result<PromiseRaw<'env, Either<String, NativeFailure>>> {
        self.dev_job(env, Class::Submit, move |d| {
            d.reset(fork)?;
            Ok("null".into())
        })
    }

    /// anvil_dropTransaction: the hash, or null when the pool did not hold it.
    #[napi]
    pub fn dev_drop_transaction<'env>(
        &self,
        env: &'env Env,
        hash: String,
    ) -> napi::Result<PromiseRaw<'env, Either<String, NativeFailure>>> {
        self.dev_job(env, Class::Submit, move |d| {
            Ok(match d.drop_transaction(params::hash(&hash)?)? {
                Some(h) => format!("\"{h:#x}\""),
                None => "null".into(),
            })
        })
    }

    #[napi]
    pub fn dev_drop_all_transactions<'env>(
        &self,
        env: &'env Env,
    ) -> napi::Result<PromiseRaw<'env, Either<String, NativeFailure>>> {
        self.dev_job(env, Class::Submit, |d| {
            d.drop_all_transactions()?;
            Ok("null".into())
        })
    }

    /// anvil_removePoolTransactions: every pooled transaction of one sender.
    #[napi]
    pub fn dev_drop_transactions_from<'env>(
        &self,
        env: &'env Env,
        sender: String,
    ) -> napi::Result<PromiseRaw<'env, Either<String, NativeFailure>>> {
        self.dev_job(env, Class::Submit, move |d| {
            d.drop_transactions_from(params::address(&sender)?)?;
            Ok("null".into())
        })
    }
}
