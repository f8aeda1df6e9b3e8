//! Chain settings. `ChainConfig::default()` is the one place their defaults live: the
//! N-API layer fills only what the operator set, and the CLI's help text asks for these.

use std::path::PathBuf;

#[derive(Clone, Debug)]
pub struct ChainConfig {
    /// `None`: the store lives in memory (`--ephemeral`).
    pub datadir: Option<PathBuf>,
    /// Contents of a geth-style genesis.json; `None`: `genesis_file`, else the embedded
    /// dev chain (or, on a datadir that holds a chain, that chain).
    pub genesis: Option<String>,
    /// A geth-style genesis.json, read by streaming (for an alloc of any size).
    pub genesis_file: Option<PathBuf>,
    /// The chain config for a `genesis_file` whose `config` is null (`--rollup-config`):
    /// op-node's rollup.json or the superchain registry's chain TOML.
    pub chain_config_file: Option<PathBuf>,
    /// Page cache of the store, in bytes: what the store's memory is bounded by.
    pub db_cache_bytes: usize,
    /// Build blocks. Without (`--no-build`: serving an imported chain, or a replica),
    /// transactions are still accepted into the pool but nothing executes or seals them.
    pub build: bool,
    pub preconf: bool,
    /// The pending block comes from a sequencer's flashblocks, re-executed here
    /// (`--flashblocks-url`, crates/chain `flashblocks`): a replica then ignores its
    /// stream's pre-confirmations and shows only its sealed blocks.
    pub follow_flashblocks: bool,
    pub preconf_interval_ms: u64,
    pub block_time_ms: u64,
    /// Gas given to eth_call / eth_estimateGas when the caller names none.
    pub gas_cap: u64,
    /// `finalized` is this many blocks behind the newest sealed block.
    pub finality_depth: u64,
    pub pool_max_per_sender: usize,
    pub pool_max_total: usize,
    pub simulate_max_blocks: usize,
    pub simulate_max_calls_per_block: usize,
    pub simulate_max_calls: usize,
    pub simulate_timeout_ms: u64,
    pub logs_max_range: u64,
    pub logs_max_results: usize,
    /// The longest `timeout` a trace may ask for (the default is 5 s, as geth).
    pub trace_max_timeout_ms: u64,
    /// The largest trace output (JSON bytes) one request may produce.
    pub trace_max_bytes: usize,
    /// Answer eth_getTransactionReceipt (and the block fields of eth_getTransactionByHash)
    /// for pre-confirmed transactions, as Base does; by default only once sealed, as geth.
    pub preconf_receipts: bool,
    /// Whose interface to answer with where the product's deliberately differs from geth's
    /// (docs/compat.md lists every difference).
    pub profile: Profile,
    /// Keep each sealed block's state changes in the store, so it can be republished to a
    /// replication stream later (a leader, `--publish`).
    pub keep_change_sets: bool,
    /// `--history-blocks`: keep bodies, receipts, the transaction index and the state
    /// history of the last N blocks only (0: everything, an archive node).
    pub history_blocks: u64,
    /// `--min-free-disk-mb`, in bytes: below this much free space in the datadir the node
    /// stops committing (and so sealing) until space is freed (0: no check).
    pub min_free_disk_bytes: u64,
    /// A node of a cluster (`--cluster`): it builds only while it holds the leader's lease,
    /// and then shows nothing and accepts nothing before the replicated log holds it.
    pub cluster: bool,
    /// A static leader (`--publish`): it streams each sealed block before the block is
    /// durable, so its builder starts only once replication has read back what the stream
    /// holds beyond the store (`Node::start_building`).
    pub publish: bool,
    /// The test methods anvil and Hardhat serve (`anvil_*`, `evm_*`, `hardhat_*`; `--dev`).
    /// `None`: on for the embedded dev chain only.
    pub dev: Option<bool>,
    /// A forked chain (`--fork-url`): the upstream that answers for the state at the fork
    /// block, which the node builds on.
    pub fork: Option<crate::fork::ForkSource>,
    /// `--optimism`: the embedded dev chain made an OP dev chain (`preconf_op::dev`).
    pub optimism: bool,
    /// The L1 values the L1-info deposit of every block built on an OP chain carries: the
    /// node has no L1 to read them from (`--optimism`'s L1 flags set them).
    pub op_l1: preconf_op::dev::DevL1Values,
    /// The Engine API is served (`--authrpc.*`): on an OP chain blocks then come only from
    /// it (forkchoice updates with attributes, getPayload), not from the builder's clock.
    pub engine_driven: bool,
    /// The OP dev chain's last fork and (Jovian) minimum base fee (`--hardfork`,
    /// `--min-base-fee` with `--optimism`).
    pub op_dev: preconf_op::dev::DevChain,
}

/// The interface profile (`--profile`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Profile {
    /// The product's interface.
    #[default]
    Default,
    /// geth's answers (the rpc-compat suite): e.g. real state roots of simulated blocks.
    Geth,
}

impl Default for ChainConfig {
    fn default() -> Self {
        Self {
            datadir: None,
            genesis: None,
            genesis_file: None,
            chain_config_file: None,
            db_cache_bytes: 128 << 20,
            build: true,
            preconf: true,
            follow_flashblocks: false,
            preconf_interval_ms: 200,
            block_time_ms: 2000,
            gas_cap: 50_000_000,
            finality_depth: 0,
            pool_max_per_sender: 1024,
            pool_max_total: 50_000,
            simulate_max_blocks: 256,
            simulate_max_calls_per_block: 5_000,
            simulate_max_calls: 10_000,
            simulate_timeout_ms: 5_000,
            logs_max_range: 10_000,
            logs_max_results: 10_000,
            trace_max_timeout_ms: 60_000,
            trace_max_bytes: 64 * 1024 * 1024,
            preconf_receipts: false,
            profile: Profile::Default,
            keep_change_sets: false,
            history_blocks: 0,
            min_free_disk_bytes: 256 << 20,
            cluster: false,
            publish: false,
            dev: None,
            fork: None,
            optimism: false,
            op_l1: preconf_op::dev::DevL1Values::default(),
            engine_driven: false,
            op_dev: preconf_op::dev::DevChain::default(),
        }
    }
}
