//! The node: opens the store (seeding genesis), restores the pool from its journal,
//! starts the builder, and hands out the read API. Dropping it stops the builder.

use std::sync::Arc;

use alloy_primitives::{B256, U256};

use crate::api::ChainApi;
use crate::builder::{self, BuilderHandle};
use crate::chain_state::ChainState;
use crate::config::ChainConfig;
use crate::error::{ChainError, ChainResult};
use crate::genesis;
use crate::pool::{journal::Journal, Pool, PoolLimits};
use crate::spec::ChainSpec;
use crate::state::{changes::StateChanges, trie::StateTrie, CodeCache};
use crate::store::{BlockWrite, Store, StoredBody, StoredReceipts};
use crate::view::ChainView;

pub const CLIENT_VERSION: &str = concat!("preconf-node/v", env!("CARGO_PKG_VERSION"));

pub struct Node {
    chain: Arc<ChainState>,
    api: ChainApi,
    genesis_hash: B256,
    builder: parking_lot::Mutex<Option<BuilderHandle>>,
}

impl Node {
    /// Opens the chain and starts building blocks.
    pub fn open(config: ChainConfig) -> ChainResult<Self> {
        let (genesis, dev_accounts) = match &config.genesis {
            Some(json) => (genesis::parse_genesis(json)?, Vec::new()),
            None => (genesis::dev_genesis(), genesis::dev_accounts(genesis::DEV_ACCOUNT_COUNT)),
        };
        let spec = Arc::new(ChainSpec::new(genesis));
        let store = Arc::new(match &config.datadir {
            Some(dir) => Store::open(dir)?,
            None => Store::in_memory()?,
        });
        let (trie, genesis_hash) = seed_genesis(&spec, &store)?;

        let snapshot = store.snapshot()?;
        let head_number = snapshot.head().ok_or_else(|| ChainError::Internal("store has no head".into()))?;
        let head = crate::api::blocks::load_block(&snapshot, head_number)?
            .ok_or_else(|| ChainError::Internal(format!("store head {head_number} has no block")))?;
        let (journal, records) = match &config.datadir {
            Some(dir) => {
                let (j, records) = Journal::open(dir).map_err(|e| {
                    ChainError::Config(format!("cannot open the pool journal in {}: {e}", dir.display()))
                })?;
                (Some(j), records)
            }
            None => (None, Vec::new()),
        };
        let pool =
            Pool::new(PoolLimits { max_per_sender: config.pool_max_per_sender, max_total: config.pool_max_total });
        let view = ChainView {
            snapshot,
            finalized: head_number.saturating_sub(config.finality_depth),
            head: Arc::new(head),
            pending: None,
            codes: Arc::new(CodeCache::default()),
        };
        let chain = Arc::new(ChainState::new(spec, config, store, view, pool, journal));
        let api = ChainApi::new(chain.clone(), dev_accounts);
        if !records.is_empty() {
            let (kept, dropped) = api.submit.replay_journal(records);
            eprintln!("[preconf-node] pool journal: {kept} transactions restored, {dropped} already included or no longer valid");
        }
        let builder = builder::spawn(chain.clone(), trie)?;
        Ok(Self { chain, api, genesis_hash, builder: parking_lot::Mutex::new(Some(builder)) })
    }

    pub fn api(&self) -> &ChainApi {
        &self.api
    }

    pub fn chain(&self) -> &Arc<ChainState> {
        &self.chain
    }

    pub fn genesis_hash(&self) -> B256 {
        self.genesis_hash
    }

    /// Stops the builder (sealing what it pre-confirmed). Idempotent.
    pub fn shutdown(&self) {
        if let Some(b) = self.builder.lock().take() {
            b.stop();
        }
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// Writes the genesis block into an empty store, or checks that the store holds the same
/// chain; returns the state-root cache and the genesis hash.
fn seed_genesis(spec: &ChainSpec, store: &Store) -> ChainResult<(StateTrie, B256)> {
    let (genesis_changes, mut genesis_trie) = genesis_state(spec);
    let genesis_header = genesis::genesis_header(spec, genesis_trie.root());
    let genesis_hash = genesis_header.hash_slow();
    let trie = match store.genesis_hash()? {
        Some(stored) if stored != genesis_hash => {
            return Err(ChainError::Config(format!(
                "the datadir holds a different chain (genesis {stored}) than the one configured \
                 (genesis {genesis_hash}); use another --datadir or the same genesis"
            )))
        }
        Some(_) => store.load_state_trie()?,
        None => {
            store.commit_block(BlockWrite {
                header: &genesis_header,
                hash: genesis_hash,
                body: &StoredBody::default(),
                receipts: &StoredReceipts::default(),
                tx_hashes: &[],
                changes: &genesis_changes,
            })?;
            genesis_trie.finish_load();
            genesis_trie
        }
    };
    Ok((trie, genesis_hash))
}

/// The genesis alloc as a change set and as a state trie.
fn genesis_state(spec: &ChainSpec) -> (StateChanges, StateTrie) {
    use crate::state::changes::{AccountChange, AccountState};
    let mut changes = StateChanges::default();
    let mut trie = StateTrie::default();
    for (address, account) in &spec.genesis.alloc {
        let code = account.code.clone().filter(|c| !c.is_empty());
        let code_hash = code.as_ref().map(alloy_primitives::keccak256).unwrap_or(alloy_primitives::KECCAK256_EMPTY);
        if let Some(code) = code {
            changes.codes.insert(code_hash, code);
        }
        let state = AccountState { nonce: account.nonce.unwrap_or(0), balance: account.balance, code_hash };
        let mut change = AccountChange { info: Some(state), ..Default::default() };
        trie.load_account(*address, state);
        for (slot, value) in account.storage.iter().flatten() {
            let slot = U256::from_be_bytes(slot.0);
            let value = U256::from_be_bytes(value.0);
            if !value.is_zero() {
                change.storage.insert(slot, value);
                trie.load_slot(*address, slot, value);
            }
        }
        changes.accounts.insert(*address, change);
    }
    trie.finish_load();
    (changes, trie)
}
