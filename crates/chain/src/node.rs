//! The node: opens the store, seeds genesis, owns the published view and answers reads.

use std::sync::Arc;

use alloy_consensus::Header;
use alloy_primitives::{Address, B256, U256};
use arc_swap::ArcSwap;
use serde_json::Value;

use crate::builder::{self, events::{EventSink, NoEvents}, BuilderHandle};
use crate::config::NodeConfig;
use crate::pool::{journal::Journal, Pool, PoolLimits};
use crate::error::{ChainError, ChainResult};
use crate::genesis::{self, DevAccount};
use crate::rpc;
use crate::spec::ChainSpec;
use crate::state::{changes::StateChanges, trie::StateTrie, CodeCache, StateView};
use crate::store::{BlockWrite, Store, StoredBody, StoredReceipts};
use crate::types::{BlockData, BlockId, ExecutedTx};
use crate::view::ChainView;

pub const CLIENT_VERSION: &str = concat!("preconf-node/v", env!("CARGO_PKG_VERSION"));

/// Where a block selector points.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resolved {
    /// The block being built.
    Pending,
    /// A sealed block.
    Sealed(u64),
}

pub struct Node {
    pub config: NodeConfig,
    pub spec: Arc<ChainSpec>,
    pub store: Arc<Store>,
    view: Arc<ArcSwap<ChainView>>,
    pub dev_accounts: Vec<DevAccount>,
    genesis_hash: B256,
    /// The state-root cache, handed to the builder at start.
    trie: parking_lot::Mutex<Option<StateTrie>>,
    pub pool: parking_lot::Mutex<Pool>,
    /// Durable record of accepted transactions (`None` with an in-memory store).
    pub journal: Option<Journal>,
    journal_records: parking_lot::Mutex<Vec<alloy_primitives::Bytes>>,
    events: parking_lot::RwLock<Arc<dyn EventSink>>,
    builder: parking_lot::Mutex<Option<BuilderHandle>>,
    unhealthy: parking_lot::Mutex<Option<String>>,
    /// Serialises eth_sendTransaction so concurrent sends get consecutive nonces.
    pub(crate) send_lock: parking_lot::Mutex<()>,
    /// Recently read sealed blocks, decoded: a receipt lookup must not decode a whole
    /// block every time (sealed blocks never change, so entries never go stale).
    blocks: parking_lot::Mutex<BlockCache>,
}

/// A small FIFO cache of decoded sealed blocks.
#[derive(Default)]
struct BlockCache {
    map: std::collections::HashMap<u64, Arc<BlockData>>,
    order: std::collections::VecDeque<u64>,
}

const BLOCK_CACHE_ENTRIES: usize = 128;

impl BlockCache {
    fn get(&self, n: u64) -> Option<Arc<BlockData>> {
        self.map.get(&n).cloned()
    }

    fn insert(&mut self, n: u64, block: Arc<BlockData>) {
        if self.map.insert(n, block).is_none() {
            self.order.push_back(n);
            if self.order.len() > BLOCK_CACHE_ENTRIES {
                if let Some(old) = self.order.pop_front() {
                    self.map.remove(&old);
                }
            }
        }
    }
}

impl Node {
    pub fn open(config: NodeConfig) -> ChainResult<Self> {
        let (genesis, dev_accounts) = match &config.genesis {
            Some(json) => (genesis::parse_genesis(json)?, Vec::new()),
            None => (genesis::dev_genesis(), genesis::dev_accounts(genesis::DEV_ACCOUNT_COUNT)),
        };
        let spec = Arc::new(ChainSpec::new(genesis));
        let store = Arc::new(match &config.datadir {
            Some(dir) => Store::open(dir)?,
            None => Store::in_memory()?,
        });

        let (genesis_changes, mut genesis_trie) = genesis_state(&spec);
        let genesis_header = genesis::genesis_header(&spec, genesis_trie.root());
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

        let snapshot = store.snapshot()?;
        let head_number = snapshot.head().ok_or_else(|| ChainError::Internal("store has no head".into()))?;
        let head = Arc::new(load_block(&snapshot, head_number)?.ok_or_else(|| {
            ChainError::Internal(format!("store head {head_number} has no block"))
        })?);
        let (journal, journal_records) = match &config.datadir {
            Some(dir) => {
                let (j, records) = Journal::open(dir)
                    .map_err(|e| ChainError::Config(format!("cannot open the pool journal in {}: {e}", dir.display())))?;
                (Some(j), records)
            }
            None => (None, Vec::new()),
        };
        let pool = Pool::new(PoolLimits { max_per_sender: config.pool_max_per_sender, max_total: config.pool_max_total });
        let view = ChainView {
            snapshot,
            finalized: head_number.saturating_sub(config.finality_depth),
            head,
            pending: None,
            codes: Arc::new(CodeCache::default()),
        };
        Ok(Self {
            config,
            spec,
            store,
            view: Arc::new(ArcSwap::from_pointee(view)),
            dev_accounts,
            genesis_hash,
            trie: parking_lot::Mutex::new(Some(trie)),
            pool: parking_lot::Mutex::new(pool),
            journal,
            journal_records: parking_lot::Mutex::new(journal_records),
            events: parking_lot::RwLock::new(Arc::new(NoEvents)),
            builder: parking_lot::Mutex::new(None),
            unhealthy: parking_lot::Mutex::new(None),
            send_lock: parking_lot::Mutex::new(()),
            blocks: parking_lot::Mutex::new(BlockCache::default()),
        })
    }

    /// Replays the pool journal and starts the builder. Idempotent.
    pub fn start(self: &Arc<Self>) -> ChainResult<()> {
        let mut slot = self.builder.lock();
        if slot.is_some() {
            return Ok(());
        }
        let Some(trie) = self.take_trie() else { return Ok(()) };
        let records = std::mem::take(&mut *self.journal_records.lock());
        if !records.is_empty() {
            let (kept, dropped) = self.replay_journal(records);
            eprintln!("[preconf-node] pool journal: {kept} transactions restored, {dropped} already included or no longer valid");
        }
        *slot = Some(builder::spawn(self.clone(), trie)?);
        Ok(())
    }

    /// Stops the builder (sealing what it pre-confirmed) and flushes the store.
    pub fn shutdown(&self) {
        if let Some(b) = self.builder.lock().take() {
            b.stop();
        }
    }

    pub fn set_event_sink(&self, sink: Arc<dyn EventSink>) {
        *self.events.write() = sink;
    }

    pub fn events(&self) -> Arc<dyn EventSink> {
        self.events.read().clone()
    }

    pub fn set_unhealthy(&self, reason: String) {
        *self.unhealthy.lock() = Some(reason);
    }

    pub fn health(&self) -> Option<String> {
        self.unhealthy.lock().clone()
    }

    /// Fee recipient of built blocks.
    pub fn coinbase(&self) -> Address {
        Address::ZERO
    }

    /// Header of the block being built (or, without pre-confirmations, the head's).
    pub fn pending_context(&self, view: &ChainView) -> Header {
        match &view.pending {
            Some(p) => p.block.header.clone(),
            None => view.head.header.clone(),
        }
    }

    /// The sender's nonce in the newest pending state.
    pub fn pending_state_nonce(&self, sender: &Address) -> ChainResult<u64> {
        self.view().pending_state().nonce(sender)
    }

    /// eth_getTransactionCount: with `pending`, pooled transactions count too.
    pub fn transaction_count(&self, address: Address, id: BlockId) -> ChainResult<u64> {
        let state_nonce = self.nonce(address, id)?;
        if id == BlockId::Pending {
            return Ok(self.pool.lock().next_nonce(&address, state_nonce));
        }
        Ok(state_nonce)
    }

    /// The current view; cheap (an atomic load), held for the length of one request.
    pub fn view(&self) -> Arc<ChainView> {
        self.view.load_full()
    }

    pub fn view_handle(&self) -> Arc<ArcSwap<ChainView>> {
        self.view.clone()
    }

    pub fn take_trie(&self) -> Option<StateTrie> {
        self.trie.lock().take()
    }

    pub fn genesis_hash(&self) -> B256 {
        self.genesis_hash
    }

    pub fn chain_id(&self) -> u64 {
        self.spec.chain_id()
    }

    /// Resolves a selector against a view. Unknown numbers and hashes are `HeaderNotFound`.
    pub fn resolve(&self, view: &ChainView, id: BlockId) -> ChainResult<Resolved> {
        let head = view.head_number();
        Ok(match id {
            BlockId::Pending if view.pending.is_some() => Resolved::Pending,
            BlockId::Pending | BlockId::Latest | BlockId::Safe => Resolved::Sealed(head),
            BlockId::Finalized => Resolved::Sealed(view.finalized),
            BlockId::Earliest => Resolved::Sealed(0),
            BlockId::Number(n) if n <= head => Resolved::Sealed(n),
            BlockId::Number(_) => return Err(ChainError::HeaderNotFound),
            BlockId::Hash(hash) => match view.snapshot.block_number(&hash)? {
                Some(n) if n <= head => Resolved::Sealed(n),
                _ => return Err(ChainError::HeaderNotFound),
            },
        })
    }

    /// Like `resolve`, but a block that does not exist is `None` (block lookups answer null).
    pub fn resolve_opt(&self, view: &ChainView, id: BlockId) -> ChainResult<Option<Resolved>> {
        match self.resolve(view, id) {
            Ok(r) => Ok(Some(r)),
            Err(ChainError::HeaderNotFound) => Ok(None),
            Err(e) => Err(e),
        }
    }

    pub fn state(&self, view: &ChainView, at: Resolved) -> StateView {
        match at {
            Resolved::Pending => view.pending_state(),
            Resolved::Sealed(n) => view.state_at(n),
        }
    }

    /// The header whose context (number, timestamp, base fee...) a call at `at` runs in.
    pub fn context_header(&self, view: &ChainView, at: Resolved) -> ChainResult<Header> {
        match at {
            Resolved::Pending => Ok(view.pending.as_ref().map(|p| p.block.header.clone()).unwrap_or_else(|| view.head.header.clone())),
            Resolved::Sealed(n) if n == view.head_number() => Ok(view.head.header.clone()),
            Resolved::Sealed(n) => view.snapshot.header(n)?.ok_or(ChainError::HeaderNotFound),
        }
    }

    pub fn block_data(&self, view: &ChainView, at: Resolved) -> ChainResult<Option<Arc<BlockData>>> {
        match at {
            Resolved::Pending => Ok(view.pending.as_ref().map(|p| p.block.clone())),
            Resolved::Sealed(n) if n == view.head_number() => Ok(Some(view.head.clone())),
            Resolved::Sealed(n) => {
                if let Some(b) = self.blocks.lock().get(n) {
                    return Ok(Some(b));
                }
                let Some(block) = load_block(&view.snapshot, n)?.map(Arc::new) else { return Ok(None) };
                self.blocks.lock().insert(n, block.clone());
                Ok(Some(block))
            }
        }
    }

    // ---- reads -------------------------------------------------------------------------

    pub fn balance(&self, address: Address, id: BlockId) -> ChainResult<U256> {
        let view = self.view();
        let at = self.resolve(&view, id)?;
        self.state(&view, at).balance(&address)
    }

    pub fn nonce(&self, address: Address, id: BlockId) -> ChainResult<u64> {
        let view = self.view();
        let at = self.resolve(&view, id)?;
        self.state(&view, at).nonce(&address)
    }

    pub fn code(&self, address: Address, id: BlockId) -> ChainResult<alloy_primitives::Bytes> {
        let view = self.view();
        let at = self.resolve(&view, id)?;
        self.state(&view, at).code_bytes(&address)
    }

    pub fn storage(&self, address: Address, slot: U256, id: BlockId) -> ChainResult<U256> {
        let view = self.view();
        let at = self.resolve(&view, id)?;
        self.state(&view, at).storage(&address, &slot)
    }

    pub fn block_json(&self, id: BlockId, full: bool) -> ChainResult<Value> {
        let view = self.view();
        let Some(at) = self.resolve_opt(&view, id)? else { return Ok(Value::Null) };
        Ok(match self.block_data(&view, at)? {
            Some(block) => rpc::block_json(&block, full),
            None => Value::Null,
        })
    }

    pub fn block_receipts_json(&self, id: BlockId) -> ChainResult<Value> {
        let view = self.view();
        let Some(at) = self.resolve_opt(&view, id)? else { return Ok(Value::Null) };
        Ok(match self.block_data(&view, at)? {
            Some(block) => rpc::block_receipts_json(&block),
            None => Value::Null,
        })
    }

    /// Finds an executed transaction: pre-confirmed first, then sealed.
    pub fn find_tx(&self, view: &ChainView, hash: &B256) -> ChainResult<Option<(Arc<BlockData>, usize)>> {
        if let Some(p) = &view.pending {
            if let Some(&i) = p.tx_index.get(hash) {
                return Ok(Some((p.block.clone(), i)));
            }
        }
        let Some((number, index)) = view.snapshot.tx_location(hash)? else { return Ok(None) };
        if number > view.head_number() {
            return Ok(None);
        }
        Ok(self.block_data(view, Resolved::Sealed(number))?.map(|b| (b, index as usize)))
    }

    /// A transaction: executed (pre-confirmed or sealed), else still in the pool
    /// (with null block fields, as geth reports pooled transactions).
    pub fn transaction_json(&self, hash: B256) -> ChainResult<Value> {
        let view = self.view();
        if let Some((block, i)) = self.find_tx(&view, &hash)? {
            let etx = &block.txs[i];
            return Ok(rpc::tx_json(&etx.tx, &etx.sender, Some(rpc::position_in(&block, i))));
        }
        Ok(match self.pool.lock().get(&hash) {
            Some(ptx) => rpc::tx_json(&ptx.tx, &ptx.sender, None),
            None => Value::Null,
        })
    }

    /// Where a transaction stands: pending or queued in the pool, pre-confirmed, included
    /// in a sealed block, dropped (with the reason), or unknown.
    pub fn tx_status_json(&self, hash: B256) -> ChainResult<Value> {
        let view = self.view();
        if let Some(p) = &view.pending {
            if let Some(&i) = p.tx_index.get(&hash) {
                return Ok(serde_json::json!({
                    "status": "preconfirmed",
                    "blockNumber": rpc::qty(p.block.header.number),
                    "transactionIndex": rpc::qty(i as u64),
                    "preconfIndex": rpc::qty(p.block.preconf_index.unwrap_or_default()),
                }));
            }
        }
        if let Some((n, i)) = view.snapshot.tx_location(&hash)? {
            if n <= view.head_number() {
                return Ok(serde_json::json!({
                    "status": "included",
                    "blockNumber": rpc::qty(n),
                    "blockHash": view.snapshot.block_hash(n)?.map(|h| rpc::hash(&h)).unwrap_or(Value::Null),
                    "transactionIndex": rpc::qty(i as u64),
                }));
            }
        }
        let state = view.pending_state();
        let status = self.pool.lock().status(&hash, |a| state.nonce(a).unwrap_or_default());
        Ok(match status {
            crate::pool::TxStatus::Pending => serde_json::json!({ "status": "pending" }),
            crate::pool::TxStatus::Queued => serde_json::json!({ "status": "queued" }),
            crate::pool::TxStatus::Dropped(reason) => serde_json::json!({ "status": "dropped", "reason": reason }),
            crate::pool::TxStatus::Unknown => serde_json::json!({ "status": "unknown" }),
        })
    }

    pub fn receipt_json(&self, hash: B256) -> ChainResult<Value> {
        let view = self.view();
        Ok(match self.find_tx(&view, &hash)? {
            Some((block, i)) => rpc::receipt_in_block_json(&block, i),
            None => Value::Null,
        })
    }

    /// Publishes a new view (the builder's only way to change what readers see).
    pub fn publish(&self, view: ChainView) {
        self.view.store(Arc::new(view));
    }
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

/// Reads a sealed block with its transactions and receipts.
pub fn load_block(snapshot: &crate::store::StoreSnapshot, number: u64) -> ChainResult<Option<BlockData>> {
    let Some(header) = snapshot.header(number)? else { return Ok(None) };
    let hash = snapshot.block_hash(number)?;
    let body = snapshot.body(number)?.unwrap_or_default();
    let receipts = snapshot.receipts(number)?.unwrap_or_default();
    let txs = ExecutedTx::from_stored(&body.txs, &receipts.receipts)?;
    Ok(Some(BlockData { header, hash, txs, preconf_index: None }))
}
