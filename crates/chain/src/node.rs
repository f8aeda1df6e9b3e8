//! The node: opens the store (seeding genesis), restores the pool from its journal,
//! starts the builder, and hands out the read API. Dropping it stops the builder.

use std::sync::Arc;

use alloy_primitives::B256;

use crate::api::ChainApi;
use crate::builder::{self, BuilderHandle};
use crate::chain_state::ChainState;
use crate::config::ChainConfig;
use crate::dev::{rewind::genesis_source, DevApi};
use crate::engine::sequence::Mailbox;
use crate::engine::Engine;
use crate::error::{Cause, ChainResult, ConfigError, InternalError, UpstreamError, UpstreamFailure};
use crate::fork::{ForkPoint, ForkSource};
use crate::genesis::{self, seed::file_source, seed::open_genesis, seed::warm_fork, seed::GenesisSource};
use crate::ledger::Ledger;
use crate::pool::{journal::Journal, Pool, PoolLimits};
use crate::state::CodeCache;
use crate::store::{Store, Upstream};
use crate::view::ChainView;

pub const CLIENT_VERSION: &str = concat!("preconf-node/v", env!("CARGO_PKG_VERSION"));
pub const CLIENT_SEMVER: &str = env!("CARGO_PKG_VERSION");

pub struct Node {
    chain: Arc<ChainState>,
    api: ChainApi,
    /// The test methods, on a node that serves them (`--dev`).
    dev: Option<DevApi>,
    genesis_hash: B256,
    builder: parking_lot::Mutex<Option<BuilderHandle>>,
    /// The Engine API's payload jobs (served when the CLI opens the authenticated port).
    engine: Engine,
}

impl Node {
    /// Opens the chain and starts building blocks.
    pub fn open(config: ChainConfig) -> ChainResult<Self> {
        let store = Arc::new(match &config.datadir {
            Some(dir) => Store::open(dir, config.db_cache_bytes)?,
            None => Store::in_memory()?,
        });
        // A node op-node drives rewinds the unsafe chain from the blocks' change sets.
        store.keep_change_sets(config.keep_change_sets || config.engine_driven);
        store.set_history_blocks(config.history_blocks);
        let source = match (&config.fork, &config.genesis, &config.genesis_file) {
            (Some(fork), _, _) => GenesisSource::Fork(Box::new(fork_point(&store, fork)?)),
            (None, Some(json), _) => GenesisSource::Json(json.clone()),
            (None, None, Some(path)) => file_source(path.clone(), config.chain_config_file.as_deref())?,
            (None, None, None) if config.optimism => GenesisSource::OpDev(config.op_dev),
            (None, None, None) => GenesisSource::Dev,
        };
        // A fork's upstream is attached before the first block is seeded: the seed reads the
        // dev accounts' nonce and code from it.
        if let GenesisSource::Fork(point) = &source {
            let upstream = config.fork.as_ref().expect("a fork source").0.clone();
            upstream.attach(point, store.fork_cache(point));
            warm_fork(upstream.as_ref(), point);
            store.set_upstream(Some(Upstream { source: upstream, fork_block: point.header.number }));
        }
        let opened = open_genesis(&source, &store)?;
        // A fork has anvil's dev accounts too (funded at its first block: genesis/seed.rs).
        let with_dev_accounts = opened.is_dev || matches!(source, GenesisSource::Fork(_));
        let dev_accounts =
            if with_dev_accounts { genesis::dev_accounts(genesis::DEV_ACCOUNT_COUNT) } else { Vec::new() };
        let spec = Arc::new(opened.spec);

        let snapshot = store.snapshot()?;
        let head_number = snapshot.head().ok_or(InternalError::NoHead)?;
        let head =
            crate::api::blocks::load_block(&snapshot, head_number)?.ok_or(InternalError::MissingBlock(head_number))?;
        let (journal, records) = match &config.datadir {
            Some(dir) => {
                let (j, records) =
                    Journal::open(dir).map_err(|e| ConfigError::Journal { dir: dir.clone(), source: Cause::new(e) })?;
                (Some(j), records)
            }
            None => (None, Vec::new()),
        };
        let pool =
            Pool::new(PoolLimits { max_per_sender: config.pool_max_per_sender, max_total: config.pool_max_total });
        // An imported chain's fork choice, else the configured depth behind the head.
        let finalized = snapshot.finalized().unwrap_or(head_number.saturating_sub(config.finality_depth));
        let view = ChainView {
            snapshot,
            finalized,
            head: Arc::new(head),
            pending: None,
            codes: Arc::new(CodeCache::default()),
        };
        // On its own clock the builder writes each fork's upgrade transactions in its first
        // block (in sequencer mode op-node's attributes carry them).
        if config.build && !config.engine_driven {
            if let Some(op) = spec.op() {
                buildable(op, &view)?;
            }
        }
        let chain = Arc::new(ChainState::new(spec, config, store, view, pool, journal));
        let api = ChainApi::new(chain.clone(), dev_accounts);
        // The test methods: asked for, or on the embedded dev chain unless refused. They
        // need a builder of this node's own (not a cluster's, whose builder moves).
        let dev = chain.config().dev.unwrap_or(opened.is_dev && chain.config().build && !chain.config().cluster);
        if dev && (chain.config().cluster || !chain.config().build) {
            return Err(ConfigError::DevWithoutBuilder.into());
        }
        if !records.is_empty() {
            let (kept, dropped) = api.submit.replay_journal(records, dev);
            let fields = serde_json::json!({ "restored": kept, "dropped": dropped });
            crate::log::info("pool", "pool journal replayed (dropped: already included or no longer valid)", fields);
        }
        let (dev, hooks) = match dev {
            true => {
                let (api, hooks) =
                    DevApi::new(chain.clone(), api.submit.clone(), genesis_source(&chain, opened.is_dev));
                (Some(api), Some(hooks))
            }
            false => (None, None),
        };
        // The Engine API's requests to the builder (sequencer mode), whichever builder runs.
        let sequencer = Arc::new(Mailbox::default());
        // A cluster's node builds only while it leads (`lead`); a static leader once its
        // stream was read back (`start_building`).
        let builder = if chain.config().build && !chain.config().cluster && !chain.config().publish {
            Some(builder::spawn(chain.clone(), None, hooks, sequencer.clone())?)
        } else {
            None
        };
        let engine = Engine::new(chain.clone(), sequencer);
        Ok(Self { chain, api, dev, genesis_hash: opened.hash, builder: parking_lot::Mutex::new(builder), engine })
    }

    /// The test methods, when this node serves them (`--dev`).
    pub fn dev(&self) -> Option<&DevApi> {
        self.dev.as_ref()
    }

    pub fn api(&self) -> &ChainApi {
        &self.api
    }

    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    pub fn chain(&self) -> &Arc<ChainState> {
        &self.chain
    }

    /// The chain's first block: genesis, or on a fork the fork block. `anvil_reset` with
    /// `forking` seeds another one into the wiped store, which records it: read there.
    pub fn genesis_hash(&self) -> B256 {
        self.chain.store().genesis_hash().ok().flatten().unwrap_or(self.genesis_hash)
    }

    /// A cluster's node starts leading: the builder continues the block the log shows open
    /// (or opens the next one), writing everything to `ledger` before showing it, and
    /// transactions are accepted (into the ledger) from now on.
    pub fn lead(&self, ledger: Arc<dyn Ledger>) -> ChainResult<()> {
        let mut slot = self.builder.lock();
        if slot.is_some() {
            return Err(InternalError::BuilderRunning.into());
        }
        self.chain.set_ledger(Some(ledger.clone()));
        match builder::spawn(self.chain.clone(), Some(ledger), None, self.engine.mailbox().clone()) {
            Ok(b) => {
                *slot = Some(b);
                Ok(())
            }
            Err(e) => {
                self.chain.set_ledger(None);
                Err(e)
            }
        }
    }

    /// A static leader starts building, on what its store and the stream's read-back hold
    /// (continuing a block the stream shows open). Does nothing when the builder runs.
    pub fn start_building(&self) -> ChainResult<()> {
        let mut slot = self.builder.lock();
        if slot.is_none() && self.chain.config().build {
            *slot = Some(builder::spawn(self.chain.clone(), None, None, self.engine.mailbox().clone())?);
        }
        Ok(())
    }

    /// A cluster's leader steps down: transactions are refused (sent to the next leader)
    /// and the builder stops at once, sealing nothing; the log holds all it showed.
    pub fn step_down(&self) {
        self.chain.set_ledger(None);
        let builder = self.builder.lock().take();
        if let Some(b) = builder {
            b.abandon();
        }
    }

    /// Stops the builder after it sealed what it pre-confirmed (through its ledger, when it
    /// leads a cluster); the store stays open.
    pub fn stop_building(&self) {
        let builder = self.builder.lock().take();
        if let Some(b) = builder {
            b.stop();
        }
    }

    /// Whether the builder runs (it stops by itself when its ledger refuses it).
    pub fn building(&self) -> bool {
        self.builder.lock().as_ref().is_some_and(|b| !b.finished())
    }

    /// Stops the builder (sealing what it pre-confirmed) and leaves the store ready for a
    /// quick restart. Idempotent.
    pub fn shutdown(&self) {
        self.chain.begin_closing();
        if let Some(b) = self.builder.lock().take() {
            b.stop();
        }
        if let Err(e) = self.chain.store().checkpoint_for_restart() {
            let fields = serde_json::json!({ "error": e.to_string() });
            crate::log::warn(
                "store",
                "could not record the allocator state (the next start checks the whole file)",
                fields,
            );
        }
    }
}

/// The fork a forked node runs on: the one its store holds (no request to the upstream),
/// or, for an empty store, the upstream's block asked for.
fn fork_point(store: &Store, fork: &ForkSource) -> ChainResult<ForkPoint> {
    let upstream = &fork.0;
    match store.fork_point()? {
        Some(stored) => {
            let same_block = upstream.configured_block().is_none_or(|n| n == stored.header.number);
            if stored.upstream != upstream.upstream() || !same_block {
                let failure = UpstreamFailure::OtherFork { stored: stored.upstream, block: stored.header.number };
                return Err(UpstreamError { upstream: upstream.upstream(), failure }.into());
            }
            Ok(stored)
        }
        None if store.genesis_hash()?.is_some() => Err(ConfigError::NotAFork.into()),
        None => upstream.fork_point(),
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// Whether the builder can build this OP chain's blocks on its own clock: every fork still
/// to come after the head that upgrades predeploys (Ecotone, Fjord, Isthmus, Jovian) finds
/// them behind proxies, as in any OP genesis, for its upgrade transactions to point at their
/// new implementations. The OP dev chain's predeploys are not proxies, and all its forks are
/// active from genesis.
fn buildable(op: &preconf_op::OpConfig, view: &ChainView) -> ChainResult<()> {
    use preconf_op::dev::{GAS_PRICE_ORACLE, L1_BLOCK};
    use preconf_op::upgrades::{ADMIN_SLOT, OPERATOR_FEE_VAULT};
    use revm::DatabaseRef;
    let state = view.state_at(view.head.header.number);
    let mut proxied = Vec::new();
    for predeploy in [L1_BLOCK, GAS_PRICE_ORACLE, OPERATOR_FEE_VAULT] {
        if !state.storage_ref(predeploy, ADMIN_SLOT.into())?.is_zero() {
            proxied.push(predeploy);
        }
    }
    let timestamp = view.head.header.timestamp;
    match preconf_op::activation::unproxied_upgrade(op, timestamp, |a| proxied.contains(&a)) {
        Some((fork, predeploy)) => Err(ConfigError::OpUpgradeWithoutProxy { fork, predeploy }.into()),
        None => Ok(()),
    }
}
