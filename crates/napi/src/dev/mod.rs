//! The test methods (`--dev`): anvil's and Hardhat's state edits, mining, time, snapshots,
//! impersonation and state dumps. Each call that changes the chain waits for the builder
//! to carry it out, on a submission thread (those threads mostly wait); dumps and loads,
//! which grow with the state, on the scan threads. A node without `--dev` answers each
//! with `unavailable` (TypeScript does not even register the methods there). State edits
//! and dumps are in state.rs.

mod state;

use alloy_primitives::{Bytes, U256};
use napi::bindgen_prelude::Either;
use napi_derive::napi;
use preconf_chain::dev::requests::Mining;
use preconf_chain::dev::{DevApi, ForkReset};
use preconf_chain::error::Unavailable;
use preconf_chain::fork::{ForkPoint, ForkSettings};
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

/// The fork the chain runs on (its upstream's settings, the fork block); `None` off a fork.
fn fork(n: &Node) -> ChainResult<Option<(ForkSettings, ForkPoint)>> {
    let store = n.chain().store();
    let Some(upstream) = store.upstream() else { return Ok(None) };
    Ok(store.fork_point()?.map(|p| (upstream.source.settings(), p)))
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
            dev(n)?.impersonate(params::address(&address)?, on)?;
            Ok("null".into())
        })
    }

    /// anvil_autoImpersonateAccount.
    #[napi]
    pub fn dev_auto_impersonate(&self, on: bool) -> Either<String, NativeFailure> {
        self.sync(|n| {
            dev(n)?.auto_impersonate(on)?;
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
            let fork = fork(n)?;
            Ok(render::node::node_info(&n.api().node.info()?, fork.as_ref().map(|(s, p)| (s, p))))
        })
    }
}

work_methods! {
    #[doc = " eth_sendUnsignedTransaction: from any sender, without its key."]
    fn dev_send_unsigned(request: String) on Class::Calls, with dev => |d| {
        let tx = params::json(&request, "transaction")?;
        Ok(format!("\"{:#x}\"", d.send_unsigned(&tx)?))
    };

    #[doc = " anvil_mine / evm_mine: `blocks` and the optional `interval` (seconds between their"]
    #[doc = " timestamps) and `timestamp` (the first one's) are 0x quantities."]
    fn dev_mine(blocks: String, interval: Option<String>, timestamp: Option<String>) on Class::Submit, with dev => |d| {
        d.mine(params::quantity(&blocks)?, opt_quantity(interval)?, opt_quantity(timestamp)?)?;
        Ok("null".into())
    };

    #[doc = " anvil_mine_detailed / evm_mine_detailed: mines as evm_mine, and answers the blocks it"]
    #[doc = " sealed with full transactions and what each returned, as anvil does."]
    fn dev_mine_detailed(blocks: String, timestamp: Option<String>) on Class::Submit => |n| {
        let mined = dev(n)?.mine(params::quantity(&blocks)?, None, opt_quantity(timestamp)?)?;
        let api = n.api();
        let mut out = Vec::new();
        for number in mined {
            let Some(data) = api.blocks.by_id(BlockId::Number(number))? else { continue };
            out.push(block::mined_block(&data, &api.tracing.tx_outputs(number)?));
        }
        Ok(serde_json::Value::Array(out).to_string())
    };

    #[doc = " evm_increaseTime: the clock's total offset, in seconds (a JSON number, as anvil)."]
    fn dev_increase_time(seconds: String) on Class::Submit, with dev => |d| Ok(d.increase_time(params::quantity(&seconds)?)?.to_string());

    #[doc = " anvil_setTime: seconds the clock moved forward (a JSON number, as anvil)."]
    fn dev_set_time(timestamp: String) on Class::Submit, with dev => |d| Ok(d.set_time(params::quantity(&timestamp)?)?.to_string());

    fn dev_set_next_block_timestamp(timestamp: String) on Class::Submit, with dev => |d| {
        d.set_next_timestamp(params::quantity(&timestamp)?)?;
        Ok("null".into())
    };

    fn dev_set_next_block_base_fee(fee: String) on Class::Submit, with dev => |d| {
        d.set_next_base_fee(params::quantity(&fee)?)?;
        Ok("null".into())
    };

    #[doc = " anvil_setCoinbase: the beneficiary of the blocks opened from now on."]
    fn dev_set_coinbase(address: String) on Class::Submit, with dev => |d| {
        d.set_coinbase(params::address(&address)?)?;
        Ok("null".into())
    };

    #[doc = " anvil_metadata: the instance id and the live snapshots (from the builder) with the"]
    #[doc = " newest sealed block, in anvil's shape."]
    fn dev_metadata() on Class::Submit => |n| {
        let m = dev(n)?.metadata()?;
        let view = n.chain().view();
        let fork = fork(n)?;
        Ok(render::node::metadata(
            n.chain().chain_id(),
            (view.head_number(), view.head_hash()),
            &m,
            fork.as_ref().map(|(s, p)| (s, p)),
        ))
    };

    #[doc = " evm_setBlockGasLimit: `true`, as anvil answers."]
    fn dev_set_block_gas_limit(gas_limit: String) on Class::Submit, with dev => |d| {
        d.set_block_gas_limit(params::quantity(&gas_limit)?)?;
        Ok("true".into())
    };

    #[doc = " anvil_setBlockTimestampInterval (`seconds`) and anvil_removeBlockTimestampInterval"]
    #[doc = " (none): whether an interval was set before."]
    fn dev_set_block_timestamp_interval(seconds: Option<String>) on Class::Submit, with dev => |d| Ok(d.set_timestamp_interval(opt_quantity(seconds)?)?.to_string());

    #[doc = " evm_setAutomine."]
    fn dev_set_automine(on: bool) on Class::Submit, with dev => |d| {
        match on {
            true => d.set_mining(Mining::Auto)?,
            false => d.stop_automine()?,
        }
        Ok("null".into())
    };

    #[doc = " anvil_setIntervalMining: seconds between sealed blocks; 0 seals only when asked."]
    fn dev_set_interval_mining(seconds: String) on Class::Submit, with dev => |d| {
        d.set_mining(match params::quantity(&seconds)? {
            0 => Mining::Manual,
            s => Mining::Interval(s),
        })?;
        Ok("null".into())
    };

    #[doc = " anvil_getAutomine: `true`/`false`."]
    fn dev_automine() on Class::Submit, with dev => |d| Ok((d.mining()? == Mining::Auto).to_string());

    #[doc = " anvil_getIntervalMining: seconds between sealed blocks (the block time rounded up to"]
    #[doc = " a second on the default schedule), or null when blocks are sealed on demand."]
    fn dev_interval_mining() on Class::Submit => |n| {
        Ok(match dev(n)?.mining()? {
            Mining::Schedule => n.chain().config().block_time_ms.div_ceil(1000).to_string(),
            Mining::Interval(s) => s.to_string(),
            Mining::Auto | Mining::Manual => "null".into(),
        })
    };

    #[doc = " evm_snapshot: the id, a 0x quantity."]
    fn dev_snapshot() on Class::Submit, with dev => |d| Ok(render::quantity(d.snapshot()?));

    #[doc = " evm_revert: `true`, or `false` when the snapshot does not exist (any more)."]
    fn dev_revert(id: String) on Class::Submit, with dev => |d| {
        // An id past 64 bits was never handed out.
        let Ok(id) = params::quantity(&id) else { return Ok("false".into()) };
        Ok(d.revert(id)?.to_string())
    };

    #[doc = " anvil_reset; `fork`: the request named another fork (`url`, `block`: either may be absent)."]
    fn dev_reset(fork: bool, url: Option<String>, block: Option<String>) on Class::Submit, with dev => |d| {
        let fork = match fork {
            true => Some(ForkReset { url, block: opt_quantity(block)? }),
            false => None,
        };
        d.reset(fork)?;
        Ok("null".into())
    };

    #[doc = " anvil_dropTransaction: the hash, or null when the pool did not hold it."]
    fn dev_drop_transaction(hash: String) on Class::Submit, with dev => |d| {
        Ok(match d.drop_transaction(params::hash(&hash)?)? {
            Some(h) => format!("\"{h:#x}\""),
            None => "null".into(),
        })
    };

    fn dev_drop_all_transactions() on Class::Submit, with dev => |d| {
        d.drop_all_transactions()?;
        Ok("null".into())
    };

    #[doc = " anvil_removePoolTransactions: every pooled transaction of one sender."]
    fn dev_drop_transactions_from(sender: String) on Class::Submit, with dev => |d| {
        d.drop_transactions_from(params::address(&sender)?)?;
        Ok("null".into())
    };
}
