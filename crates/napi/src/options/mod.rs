//! Node settings as they cross the boundary: every field optional, so that the chain's
//! own defaults (`ChainConfig::default`) are the only ones.

mod fork;

use napi_derive::napi;
use preconf_chain::{ChainConfig, Profile as ChainProfile};

/// Whose interface to answer with where the product's differs from geth's (`--profile`).
#[napi(string_enum = "lowercase")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Profile {
    Default,
    Geth,
}

/// The chain side of the command-line flags. Absent fields take the chain's defaults,
/// which `defaultOptions()` reports.
#[napi(object)]
#[derive(Clone, Debug, Default)]
pub struct NodeOptions {
    /// Where the chain and the pool journal are stored; absent: in memory.
    pub datadir: Option<String>,
    /// Contents of a geth-style genesis.json (small ones, tests).
    pub genesis: Option<String>,
    /// A geth-style genesis.json, read by streaming. Absent with `genesis`: the embedded
    /// dev chain on an empty datadir, or the chain the datadir holds.
    pub genesis_file: Option<String>,
    /// The chain config for a `genesis_file` whose `config` is null: op-node's rollup.json
    /// or the superchain registry's chain TOML (OP chains' published genesis files).
    pub rollup_config: Option<String>,
    /// Page cache of the store in MiB: what its memory is bounded by.
    pub db_cache_mb: Option<u32>,
    /// Build blocks (false: `--no-build`, serve the stored chain).
    pub build: Option<bool>,
    pub preconf: Option<bool>,
    /// `--flashblocks-url`: the pending block comes from a sequencer's flashblocks
    /// (`flashblocksFollowStart`), not from this node's builder or its replication stream.
    pub follow_flashblocks: Option<bool>,
    pub preconf_interval_ms: Option<u32>,
    pub block_time_ms: Option<u32>,
    pub gas_cap: Option<i64>,
    pub finality_depth: Option<u32>,
    pub pool_max_per_sender: Option<u32>,
    pub pool_max_total: Option<u32>,
    pub simulate_max_blocks: Option<u32>,
    pub simulate_max_calls_per_block: Option<u32>,
    pub simulate_max_calls: Option<u32>,
    pub simulate_timeout_ms: Option<u32>,
    pub logs_max_range: Option<u32>,
    pub logs_max_results: Option<u32>,
    /// Receipts for pre-confirmed transactions (Base-style) instead of only sealed ones.
    pub preconf_receipts: Option<bool>,
    /// The longest `timeout` a debug_trace* request may ask for.
    pub trace_max_timeout_ms: Option<u32>,
    /// The largest trace output (JSON bytes) one request may produce.
    pub trace_max_bytes: Option<u32>,
    /// `default` (the product's interface) or `geth` (docs/compat.md).
    pub profile: Option<Profile>,
    /// Keep each sealed block's state changes, to republish it to a replication stream
    /// (set on a leader, `--publish`).
    pub keep_change_sets: Option<bool>,
    /// A cluster's node (`--cluster`): builds only while it holds the leader's lease, and then
    /// shows and accepts nothing before the replicated log holds it.
    pub cluster: Option<bool>,
    /// A static leader (`--publish`): the builder starts once replication has read the
    /// stream back (it may hold sealed blocks a crash kept from the store).
    pub publish: Option<bool>,
    /// Keep the bodies, receipts, transaction index and state history of the last N blocks
    /// only (`--history-blocks`; 0: everything).
    pub history_blocks: Option<u32>,
    /// Below this much free disk in the datadir (MiB) the node stops committing and sealing
    /// until space is freed (`--min-free-disk-mb`; 0: no check).
    pub min_free_disk_mb: Option<u32>,
    /// The test methods (`--dev`): absent, on for the embedded dev chain only.
    pub dev: Option<bool>,
    /// Fork a live chain at `forkBlockNumber` (`--fork-url`, HTTP(S)): its state is read
    /// from there as needed, and this node builds on its block.
    pub fork_url: Option<String>,
    /// `--fork-block-number`; absent: the upstream's latest at start.
    pub fork_block_number: Option<i64>,
    /// `--fork-chain-id`: the chain id, without asking the upstream.
    pub fork_chain_id: Option<i64>,
    /// `--fork-retries`: attempts after a failed upstream request (default 5).
    pub fork_retries: Option<u32>,
    /// `--fork-retry-backoff`: ms before the first retry, doubling after (default 1000).
    pub fork_retry_backoff_ms: Option<u32>,
    /// `--fork-timeout-ms`: one upstream request's budget (default 45000).
    pub fork_timeout_ms: Option<u32>,
    /// `--compute-units-per-second`: the upstream's rate limit (default 330, none on loopback).
    pub compute_units_per_second: Option<u32>,
    /// `--no-rate-limit`.
    pub no_rate_limit: Option<bool>,
    /// `--no-storage-caching`: keep fetched state in memory only, not in the store.
    pub no_storage_caching: Option<bool>,
    /// `--fork-header KEY:VALUE`, sent with every upstream request.
    pub fork_headers: Option<Vec<String>>,
    /// `--optimism`: the embedded dev chain as an OP dev chain (deposits, L1 fees).
    pub optimism: Option<bool>,
    /// The L1 values every OP block's L1-info deposit carries (no L1 here): `--l1-base-fee`
    /// and `--l1-blob-base-fee` in wei, `--l1-base-fee-scalar`, `--l1-blob-base-fee-scalar`.
    pub l1_base_fee: Option<i64>,
    pub l1_blob_base_fee: Option<i64>,
    pub l1_base_fee_scalar: Option<u32>,
    pub l1_blob_base_fee_scalar: Option<u32>,
    /// Isthmus's operator fee the deposits carry: `--l1-operator-fee-scalar` and
    /// `--l1-operator-fee-constant` (wei).
    pub l1_operator_fee_scalar: Option<u32>,
    pub l1_operator_fee_constant: Option<i64>,
    /// The Engine API is served (`--authrpc.*`): blocks come only from it on an OP chain.
    pub engine_driven: Option<bool>,
    /// Jovian's DA footprint gas scalar the deposits carry (`--l1-da-footprint-gas-scalar`;
    /// 0: op-node's default, 400).
    pub l1_da_footprint_gas_scalar: Option<u32>,
    /// The OP dev chain's last fork (`--hardfork`: `isthmus` or `jovian`).
    pub hardfork: Option<String>,
    /// Jovian's minimum base fee in wei, in the OP dev genesis's extraData (`--min-base-fee`).
    pub min_base_fee: Option<i64>,
}

impl NodeOptions {
    pub fn into_config(self) -> napi::Result<ChainConfig> {
        let d = ChainConfig::default();
        let gas_cap = match self.gas_cap {
            Some(g) => u64::try_from(g)
                .map_err(|_| napi::Error::from_reason(format!("gasCap must not be negative, got {g}")))?,
            None => d.gas_cap,
        };
        let fork = fork::fork_source(&self)?;
        let op_l1 = self.op_l1_values()?;
        let op_dev = self.op_dev_chain()?;
        Ok(ChainConfig {
            optimism: self.optimism.unwrap_or(d.optimism),
            engine_driven: self.engine_driven.unwrap_or(d.engine_driven),
            op_l1,
            op_dev,
            fork,
            datadir: self.datadir.map(Into::into),
            genesis: self.genesis,
            genesis_file: self.genesis_file.map(Into::into),
            chain_config_file: self.rollup_config.map(Into::into),
            db_cache_bytes: self.db_cache_mb.map_or(d.db_cache_bytes, |mb| (mb as usize) << 20),
            build: self.build.unwrap_or(d.build),
            preconf: self.preconf.unwrap_or(d.preconf),
            follow_flashblocks: self.follow_flashblocks.unwrap_or(d.follow_flashblocks),
            preconf_interval_ms: self.preconf_interval_ms.map_or(d.preconf_interval_ms, u64::from),
            block_time_ms: self.block_time_ms.map_or(d.block_time_ms, u64::from),
            gas_cap,
            finality_depth: self.finality_depth.map_or(d.finality_depth, u64::from),
            pool_max_per_sender: self.pool_max_per_sender.map_or(d.pool_max_per_sender, |v| v as usize),
            pool_max_total: self.pool_max_total.map_or(d.pool_max_total, |v| v as usize),
            simulate_max_blocks: self.simulate_max_blocks.map_or(d.simulate_max_blocks, |v| v as usize),
            simulate_max_calls_per_block: self
                .simulate_max_calls_per_block
                .map_or(d.simulate_max_calls_per_block, |v| v as usize),
            simulate_max_calls: self.simulate_max_calls.map_or(d.simulate_max_calls, |v| v as usize),
            simulate_timeout_ms: self.simulate_timeout_ms.map_or(d.simulate_timeout_ms, u64::from),
            logs_max_range: self.logs_max_range.map_or(d.logs_max_range, u64::from),
            logs_max_results: self.logs_max_results.map_or(d.logs_max_results, |v| v as usize),
            preconf_receipts: self.preconf_receipts.unwrap_or(d.preconf_receipts),
            trace_max_timeout_ms: self.trace_max_timeout_ms.map_or(d.trace_max_timeout_ms, u64::from),
            trace_max_bytes: self.trace_max_bytes.map_or(d.trace_max_bytes, |v| v as usize),
            profile: match self.profile {
                Some(Profile::Geth) => ChainProfile::Geth,
                Some(Profile::Default) => ChainProfile::Default,
                None => d.profile,
            },
            keep_change_sets: self.keep_change_sets.unwrap_or(d.keep_change_sets),
            cluster: self.cluster.unwrap_or(d.cluster),
            publish: self.publish.unwrap_or(d.publish),
            history_blocks: self.history_blocks.map_or(d.history_blocks, u64::from),
            min_free_disk_bytes: self.min_free_disk_mb.map_or(d.min_free_disk_bytes, |mb| u64::from(mb) << 20),
            dev: self.dev.or(d.dev),
        })
    }
}

impl NodeOptions {
    fn op_dev_chain(&self) -> napi::Result<preconf_op::dev::DevChain> {
        use preconf_op::dev::{DevChain, DevHardfork};
        let d = DevChain::default();
        let hardfork = match self.hardfork.as_deref() {
            Some(name) => DevHardfork::from_name(name).ok_or_else(|| {
                napi::Error::from_reason(format!("hardfork must be isthmus or jovian, got \"{name}\""))
            })?,
            None => d.hardfork,
        };
        let min_base_fee = match self.min_base_fee {
            Some(v) => u64::try_from(v)
                .map_err(|_| napi::Error::from_reason(format!("minBaseFee must not be negative, got {v}")))?,
            None => d.min_base_fee,
        };
        if min_base_fee != 0 && hardfork != DevHardfork::Jovian {
            return Err(napi::Error::from_reason("minBaseFee is Jovian's: it needs hardfork jovian"));
        }
        Ok(DevChain { hardfork, min_base_fee })
    }

    fn op_l1_values(&self) -> napi::Result<preconf_op::dev::DevL1Values> {
        let d = preconf_op::dev::DevL1Values::default();
        let wei = |name: &str, v: Option<i64>, default| match v {
            Some(v) => u64::try_from(v)
                .map(alloy_primitives::U256::from)
                .map_err(|_| napi::Error::from_reason(format!("{name} must not be negative, got {v}"))),
            None => Ok(default),
        };
        Ok(preconf_op::dev::DevL1Values {
            base_fee: wei("l1BaseFee", self.l1_base_fee, d.base_fee)?,
            blob_base_fee: wei("l1BlobBaseFee", self.l1_blob_base_fee, d.blob_base_fee)?,
            base_fee_scalar: self.l1_base_fee_scalar.unwrap_or(d.base_fee_scalar),
            blob_base_fee_scalar: self.l1_blob_base_fee_scalar.unwrap_or(d.blob_base_fee_scalar),
            operator_fee_scalar: self.l1_operator_fee_scalar.unwrap_or(d.operator_fee_scalar),
            operator_fee_constant: match self.l1_operator_fee_constant {
                Some(v) => u64::try_from(v).map_err(|_| {
                    napi::Error::from_reason(format!("l1OperatorFeeConstant must not be negative, got {v}"))
                })?,
                None => d.operator_fee_constant,
            },
            da_footprint_gas_scalar: match self.l1_da_footprint_gas_scalar {
                Some(v) => u16::try_from(v).map_err(|_| {
                    napi::Error::from_reason(format!("l1DaFootprintGasScalar must be at most 65535, got {v}"))
                })?,
                None => d.da_footprint_gas_scalar,
            },
            ..d
        })
    }
}

/// The chain's defaults, for the CLI's help text.
#[napi]
pub fn default_options() -> NodeOptions {
    let d = ChainConfig::default();
    NodeOptions {
        datadir: None,
        genesis: None,
        genesis_file: None,
        rollup_config: None,
        db_cache_mb: Some((d.db_cache_bytes >> 20) as u32),
        build: Some(d.build),
        preconf: Some(d.preconf),
        follow_flashblocks: Some(d.follow_flashblocks),
        preconf_interval_ms: Some(d.preconf_interval_ms as u32),
        block_time_ms: Some(d.block_time_ms as u32),
        gas_cap: Some(d.gas_cap as i64),
        finality_depth: Some(d.finality_depth as u32),
        pool_max_per_sender: Some(d.pool_max_per_sender as u32),
        pool_max_total: Some(d.pool_max_total as u32),
        simulate_max_blocks: Some(d.simulate_max_blocks as u32),
        simulate_max_calls_per_block: Some(d.simulate_max_calls_per_block as u32),
        simulate_max_calls: Some(d.simulate_max_calls as u32),
        simulate_timeout_ms: Some(d.simulate_timeout_ms as u32),
        logs_max_range: Some(d.logs_max_range as u32),
        logs_max_results: Some(d.logs_max_results as u32),
        preconf_receipts: Some(d.preconf_receipts),
        trace_max_timeout_ms: Some(d.trace_max_timeout_ms as u32),
        trace_max_bytes: Some(d.trace_max_bytes as u32),
        profile: Some(match d.profile {
            ChainProfile::Geth => Profile::Geth,
            ChainProfile::Default => Profile::Default,
        }),
        keep_change_sets: Some(d.keep_change_sets),
        cluster: Some(d.cluster),
        publish: Some(d.publish),
        history_blocks: Some(d.history_blocks as u32),
        min_free_disk_mb: Some((d.min_free_disk_bytes >> 20) as u32),
        dev: d.dev,
        optimism: Some(d.optimism),
        l1_base_fee: i64::try_from(d.op_l1.base_fee).ok(),
        l1_blob_base_fee: i64::try_from(d.op_l1.blob_base_fee).ok(),
        l1_base_fee_scalar: Some(d.op_l1.base_fee_scalar),
        l1_blob_base_fee_scalar: Some(d.op_l1.blob_base_fee_scalar),
        l1_operator_fee_scalar: Some(d.op_l1.operator_fee_scalar),
        l1_operator_fee_constant: i64::try_from(d.op_l1.operator_fee_constant).ok(),
        l1_da_footprint_gas_scalar: Some(d.op_l1.da_footprint_gas_scalar.into()),
        hardfork: Some("isthmus".into()),
        min_base_fee: i64::try_from(d.op_dev.min_base_fee).ok(),
        ..Default::default()
    }
}
