//! The block builder: a Rust thread that, every pre-confirmation interval, executes the
//! pool's executable transactions on top of the block being built and publishes a new
//! immutable view; every `block_time` it seals the block (roots, state root, hash), commits
//! it to the store in one transaction, and opens the next one.

pub mod events;

use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use alloy_consensus::{
    constants::EMPTY_OMMER_ROOT_HASH, proofs, Header, Receipt, TxEnvelope, EMPTY_ROOT_HASH,
};
use alloy_primitives::{keccak256, map::B256Map, Bloom, Bytes, B256};
use revm::context_interface::result::{EVMError, ExecutionResult};
use revm::database::CacheDB;
use revm::handler::{ExecuteCommitEvm, ExecuteEvm, SystemCallEvm};
use revm::primitives::hardfork::SpecId;
use serde_json::{json, Value};

use crate::error::{ChainError, ChainResult};
use crate::exec::system::{self, SystemCalls};
use crate::exec::{build_evm, errors::invalid_tx_message, tx_env_from_signed, Evm, ExecBlock, Mode};
use crate::node::Node;
use crate::pool::PooledTx;
use crate::rpc;
use crate::state::{changes::StateChanges, trie::StateTrie, StateView};
use crate::store::{BlockWrite, StoredBody, StoredReceipts};
use crate::types::{BlockData, ExecutedTx};
use crate::view::{ChainView, PendingBlock};
use events::interest;

pub struct BuilderHandle {
    stop: mpsc::Sender<()>,
    thread: Option<JoinHandle<()>>,
}

impl BuilderHandle {
    /// Stops the builder after its current step; it seals the open block if it holds
    /// transactions, so a clean shutdown leaves nothing only pre-confirmed.
    pub fn stop(mut self) {
        let _ = self.stop.send(());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

pub fn spawn(node: Arc<Node>, trie: StateTrie) -> ChainResult<BuilderHandle> {
    let (stop, stop_rx) = mpsc::channel();
    let (ready_tx, ready_rx) = mpsc::sync_channel(1);
    // revm's EVM is not Send: the builder is created on its own thread and stays there.
    let thread = std::thread::Builder::new()
        .name("preconf-builder".into())
        .spawn(move || match Builder::new(node, trie) {
            Ok(mut builder) => {
                let _ = ready_tx.send(Ok(()));
                builder.run(stop_rx);
            }
            Err(e) => {
                let _ = ready_tx.send(Err(e));
            }
        })
        .map_err(ChainError::internal)?;
    ready_rx.recv().map_err(ChainError::internal)??;
    Ok(BuilderHandle { stop, thread: Some(thread) })
}

/// The block being built.
struct OpenBlock {
    header: Header,
    spec_id: SpecId,
    evm: Evm<StateView>,
    changes: StateChanges,
    txs: Vec<Arc<ExecutedTx>>,
    tx_index: B256Map<usize>,
    gas_used: u64,
    preconf_index: u64,
    /// Transactions already announced in an earlier pre-confirmation.
    announced: usize,
}

struct Builder {
    node: Arc<Node>,
    trie: StateTrie,
    block: OpenBlock,
}

fn unix_now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or_default()
}

fn unix_now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or_default()
}

impl Builder {
    fn new(node: Arc<Node>, trie: StateTrie) -> ChainResult<Self> {
        let view = node.view();
        let block = open_block(&node, &view)?;
        let mut b = Self { node, trie, block };
        b.publish(false);
        Ok(b)
    }

    fn run(&mut self, stop: mpsc::Receiver<()>) {
        let interval = Duration::from_millis(self.node.config.preconf_interval_ms.max(1));
        let per_block = self.node.config.preconfs_per_block();
        let mut next = Instant::now() + interval;
        loop {
            match stop.recv_timeout(next.saturating_duration_since(Instant::now())) {
                Ok(()) | Err(RecvTimeoutError::Disconnected) => break,
                Err(RecvTimeoutError::Timeout) => {}
            }
            next += interval;
            let now = Instant::now();
            if next < now {
                // Fell behind (a long seal): skip the missed ticks instead of bursting.
                next = now + interval;
            }
            self.preconfirm();
            if self.block.preconf_index >= per_block {
                if let Err(e) = self.seal() {
                    eprintln!("[preconf-node] builder stopped: cannot seal block {}: {e}", self.block.header.number);
                    self.node.set_unhealthy(format!("builder stopped: {e}"));
                    return;
                }
            }
        }
        if !self.block.txs.is_empty() {
            if let Err(e) = self.seal() {
                eprintln!("[preconf-node] could not seal the open block at shutdown: {e}");
            }
        }
    }

    /// Executes what the pool has and publishes the next pre-confirmation.
    fn preconfirm(&mut self) {
        let base_fee = self.block.header.base_fee_per_gas.unwrap_or_default();
        let candidates = {
            let pool = self.node.pool.lock();
            let evm = &mut self.block.evm;
            pool.best(base_fee, |sender| {
                evm.ctx.journaled_state.database.load_account(*sender).ok().and_then(|a| a.info()).map(|i| i.nonce).unwrap_or(0)
            })
        };
        let mut candidates = candidates;
        let mut included = Vec::new();
        let mut dropped: Vec<(B256, String)> = Vec::new();
        // Hold the cadence: whatever does not fit in three quarters of an interval waits
        // for the next pre-confirmation.
        let budget = Duration::from_millis(self.node.config.preconf_interval_ms.max(1) * 3 / 4);
        let started = Instant::now();
        while let Some(ptx) = candidates.next() {
            if started.elapsed() > budget {
                break;
            }
            match self.execute(&ptx) {
                Outcome::Included => included.push(ptx.hash),
                Outcome::NoRoom => candidates.skip_sender(&ptx.sender),
                Outcome::Invalid(reason) => {
                    candidates.skip_sender(&ptx.sender);
                    dropped.push((ptx.hash, reason));
                }
            }
        }
        if !included.is_empty() || !dropped.is_empty() {
            let mut pool = self.node.pool.lock();
            for h in &included {
                pool.remove(h);
            }
            for (h, reason) in &dropped {
                pool.drop_tx(h, reason.clone());
            }
        }
        if !dropped.is_empty() {
            if let Some(j) = &self.node.journal {
                let _ = j.forget(dropped.iter().map(|(h, _)| h));
            }
        }
        self.block.preconf_index += 1;
        self.publish(true);
    }

    fn execute(&mut self, ptx: &PooledTx) -> Outcome {
        let b = &mut self.block;
        if b.gas_used + ptx.gas_limit > b.header.gas_limit {
            return Outcome::NoRoom;
        }
        let env = tx_env_from_signed(&ptx.tx, ptx.sender);
        match b.evm.transact(env) {
            Ok(out) => {
                let result = out.result;
                b.changes.apply_evm_state(&out.state, b.spec_id);
                b.evm.commit(out.state);
                let gas = result.tx_gas_used();
                b.gas_used += gas;
                let success = result.is_success();
                let logs = match result {
                    ExecutionResult::Success { logs, .. } => logs,
                    _ => Vec::new(),
                };
                let receipt = Receipt { status: success.into(), cumulative_gas_used: b.gas_used, logs };
                b.tx_index.insert(ptx.hash, b.txs.len());
                b.txs.push(Arc::new(ExecutedTx { tx: ptx.tx.clone(), sender: ptx.sender, receipt, gas_used: gas }));
                Outcome::Included
            }
            Err(EVMError::Transaction(e)) => Outcome::Invalid(invalid_tx_message(&e, ptx.sender, ptx.gas_limit)),
            Err(e) => Outcome::Invalid(format!("execution failed: {e}")),
        }
    }

    /// Publishes the current state of the open block to readers, then tells subscribers.
    fn publish(&mut self, announce: bool) {
        let b = &self.block;
        let view = self.node.view();
        let pending = if self.node.config.preconf {
            let mut header = b.header.clone();
            header.gas_used = b.gas_used;
            header.logs_bloom = logs_bloom(&b.txs);
            header.transactions_root = tx_root(&b.txs);
            header.receipts_root = receipt_root(&b.txs);
            Some(Arc::new(PendingBlock {
                block: Arc::new(BlockData { header, hash: None, txs: b.txs.clone(), preconf_index: Some(b.preconf_index) }),
                changes: Arc::new(b.changes.clone()),
                tx_index: b.tx_index.clone(),
            }))
        } else {
            None
        };
        self.node.publish(ChainView { pending: pending.clone(), ..(*view).clone() });
        if announce {
            if let Some(p) = pending {
                self.announce_preconf(&p);
            }
        }
        self.block.announced = self.block.txs.len();
    }

    /// Tells subscribers about a pre-confirmation, after it is visible to readers. Each
    /// payload is rendered once, and only for the kinds someone listens to.
    fn announce_preconf(&self, p: &PendingBlock) {
        let sink = self.node.events();
        let wanted = sink.interest();
        let block = &p.block;
        let first = self.block.announced;
        let new = &block.txs[first..];
        let summary = json!({
            "number": rpc::qty(block.header.number),
            "index": block.preconf_index.unwrap_or_default(),
            "txHashes": new.iter().map(|t| rpc::hash(&t.hash())).collect::<Vec<_>>(),
        });
        sink.emit("preconf", summary.to_string());
        if wanted & interest::FLASHBLOCKS != 0 {
            let mut b = rpc::block_json(block, false);
            // When this pre-confirmation became visible: lets subscribers measure freshness.
            b["preconfTimestampMs"] = json!(unix_now_ms());
            sink.emit("flashblock", b.to_string());
        }
        if wanted & (interest::FLASHBLOCK_TXS | interest::PENDING_LOGS) != 0 {
            let mut logs = Vec::new();
            let mut log_index: u64 = block.txs[..first].iter().map(|t| t.receipt.logs.len() as u64).sum();
            for (offset, etx) in new.iter().enumerate() {
                let position = rpc::position_in(block, first + offset);
                let tx_logs: Vec<Value> = etx
                    .receipt
                    .logs
                    .iter()
                    .enumerate()
                    .map(|(i, l)| rpc::log_json(l, &position, &etx.hash(), log_index + i as u64))
                    .collect();
                log_index += tx_logs.len() as u64;
                if wanted & interest::FLASHBLOCK_TXS != 0 {
                    let mut t = rpc::tx_json(&etx.tx, &etx.sender, Some(position));
                    t["logs"] = Value::Array(tx_logs.clone());
                    sink.emit("flashblockTx", t.to_string());
                }
                logs.extend(tx_logs);
            }
            if wanted & interest::PENDING_LOGS != 0 && !logs.is_empty() {
                sink.emit("pendingLogs", Value::Array(logs).to_string());
            }
        }
    }

    /// Seals the open block: post-block system calls, roots, state root, hash; commits it
    /// durably, publishes the new head and opens the next block.
    fn seal(&mut self) -> ChainResult<()> {
        let spec_id = self.block.spec_id;
        let requests = system::post_block(&mut self.block, spec_id)?;
        let b = &mut self.block;
        let mut header = b.header.clone();
        header.gas_used = b.gas_used;
        header.logs_bloom = logs_bloom(&b.txs);
        header.transactions_root = tx_root(&b.txs);
        header.receipts_root = receipt_root(&b.txs);
        if let Some(requests) = requests {
            header.requests_hash = Some(requests.requests_hash());
        }
        self.trie.apply(&b.changes);
        header.state_root = self.trie.root();
        let hash = header.hash_slow();

        let body = StoredBody { txs: b.txs.iter().map(|t| t.stored_tx()).collect() };
        let receipts = StoredReceipts {
            receipts: b
                .txs
                .iter()
                .map(|t| {
                    use alloy_eips::eip2718::Encodable2718;
                    Bytes::from(t.receipt_envelope().encoded_2718())
                })
                .collect(),
        };
        let tx_hashes: Vec<B256> = b.txs.iter().map(|t| t.hash()).collect();
        self.node.store.commit_block(BlockWrite {
            header: &header,
            hash,
            body: &body,
            receipts: &receipts,
            tx_hashes: &tx_hashes,
            changes: &b.changes,
        })?;
        if let Some(j) = &self.node.journal {
            if let Err(e) = j.forget(tx_hashes.iter()) {
                eprintln!("[preconf-node] pool journal compaction failed: {e}");
            }
        }

        let head = Arc::new(BlockData { header, hash: Some(hash), txs: std::mem::take(&mut b.txs), preconf_index: None });
        let snapshot = self.node.store.snapshot()?;
        let old = self.node.view();
        let sealed_view = ChainView {
            snapshot,
            finalized: head.header.number.saturating_sub(self.node.config.finality_depth),
            head: head.clone(),
            pending: None,
            codes: old.codes.clone(),
        };
        self.block = open_block(&self.node, &sealed_view)?;
        self.node.publish(sealed_view);
        self.publish(false);
        self.announce_head(&head);
        Ok(())
    }

    fn announce_head(&self, head: &BlockData) {
        let sink = self.node.events();
        let wanted = sink.interest();
        let summary = json!({
            "number": rpc::qty(head.header.number),
            "hash": rpc::hash(&head.hash.unwrap_or_default()),
            "txHashes": head.txs.iter().map(|t| rpc::hash(&t.hash())).collect::<Vec<_>>(),
        });
        sink.emit("head", summary.to_string());
        if wanted & interest::NEW_HEADS != 0 {
            let mut h = rpc::header_json(&head.header, head.hash);
            h.insert("size".into(), rpc::qty(rpc::block_size(&head.header, &head.txs)));
            sink.emit("newHead", Value::Object(h).to_string());
        }
        if wanted & interest::LOGS != 0 {
            let mut logs = Vec::new();
            let mut log_index = 0u64;
            for (i, etx) in head.txs.iter().enumerate() {
                let position = rpc::position_in(head, i);
                for l in &etx.receipt.logs {
                    logs.push(rpc::log_json(l, &position, &etx.hash(), log_index));
                    log_index += 1;
                }
            }
            if !logs.is_empty() {
                sink.emit("logs", Value::Array(logs).to_string());
            }
        }
    }
}

enum Outcome {
    Included,
    NoRoom,
    Invalid(String),
}

impl SystemCalls for OpenBlock {
    /// Runs a system call inside the open block and folds its state changes in.
    fn system_call(&mut self, address: alloy_primitives::Address, input: Bytes) -> ChainResult<Option<Bytes>> {
        let exists = self
            .evm
            .ctx
            .journaled_state
            .database
            .load_account(address)?
            .info()
            .is_some_and(|i| i.code_hash != alloy_primitives::KECCAK256_EMPTY);
        if !exists {
            return Ok(None);
        }
        let out = self
            .evm
            .system_call(address, input)
            .map_err(|e| ChainError::Internal(format!("system call to {address} failed: {e}")))?;
        let output = out.result.output().cloned();
        self.changes.apply_evm_state(&out.state, self.spec_id);
        self.evm.commit(out.state);
        Ok(output)
    }
}

/// Opens the block after `view`'s head: its context, and the pre-block system calls.
fn open_block(node: &Node, view: &ChainView) -> ChainResult<OpenBlock> {
    let parent = &view.head.header;
    let parent_hash = view.head_hash();
    let number = parent.number + 1;
    let timestamp = unix_now().max(parent.timestamp + 1);
    let spec = &node.spec;
    let spec_id = spec.spec_at(number, timestamp);
    let mut header = Header {
        parent_hash,
        ommers_hash: EMPTY_OMMER_ROOT_HASH,
        beneficiary: node.coinbase(),
        state_root: B256::ZERO,
        transactions_root: EMPTY_ROOT_HASH,
        receipts_root: EMPTY_ROOT_HASH,
        number,
        gas_limit: parent.gas_limit,
        timestamp,
        mix_hash: keccak256([parent_hash.as_slice(), &number.to_be_bytes()].concat()),
        ..Default::default()
    };
    if spec.is_london(number) {
        header.base_fee_per_gas = Some(match parent.base_fee_per_gas {
            Some(_) => parent.next_block_base_fee(spec.base_fee_params()).unwrap_or_default(),
            None => crate::genesis::INITIAL_BASE_FEE,
        });
    }
    if spec.is_shanghai(timestamp) {
        header.withdrawals_root = Some(EMPTY_ROOT_HASH);
    }
    if spec.is_cancun(timestamp) {
        header.blob_gas_used = Some(0);
        header.excess_blob_gas = Some(0);
        header.parent_beacon_block_root = Some(B256::ZERO);
    }
    if spec.is_prague(timestamp) {
        header.requests_hash = Some(alloy_eips::eip7685::EMPTY_REQUESTS_HASH);
    }
    let base = view.state_at(parent.number);
    let evm = build_evm(CacheDB::new(base), spec, &ExecBlock::from_header(&header), Mode::Transaction);
    let mut block = OpenBlock {
        header,
        spec_id,
        evm,
        changes: StateChanges::default(),
        txs: Vec::new(),
        tx_index: Default::default(),
        gas_used: 0,
        preconf_index: 0,
        announced: 0,
    };
    let header = block.header.clone();
    system::pre_block(&mut block, &header, spec_id)?;
    Ok(block)
}

fn logs_bloom(txs: &[Arc<ExecutedTx>]) -> Bloom {
    let mut bloom = Bloom::default();
    for t in txs {
        for log in &t.receipt.logs {
            bloom.accrue_log(log);
        }
    }
    bloom
}

fn tx_root(txs: &[Arc<ExecutedTx>]) -> B256 {
    let envelopes: Vec<&TxEnvelope> = txs.iter().map(|t| &t.tx).collect();
    proofs::calculate_transaction_root(&envelopes)
}

fn receipt_root(txs: &[Arc<ExecutedTx>]) -> B256 {
    let receipts: Vec<_> = txs.iter().map(|t| t.receipt_envelope()).collect();
    proofs::calculate_receipt_root(&receipts)
}
