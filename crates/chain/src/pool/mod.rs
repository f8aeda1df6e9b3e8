//! The transaction pool: per-sender nonce queues, replacement, limits and eviction.
//!
//! Rules (documented in docs/pool.md):
//! - A transaction whose nonce follows the sender's (pending) state nonce without a gap is
//!   *executable*; one after a gap is *queued* until the gap fills.
//! - Same sender and nonce: the newcomer replaces the pooled one only if its fee cap and
//!   its priority fee are each at least 10% higher; otherwise "replacement transaction
//!   underpriced".
//! - At most `max_per_sender` transactions per sender ("account limit exceeded").
//! - At most `max_total` in all. When full, a newcomer that pays a higher priority fee
//!   than the cheapest *last* transaction of another sender evicts that one (taking a
//!   sender's last nonce never opens a gap); otherwise "txpool is full".
//! - Every transaction that leaves the pool without being included is recorded with its
//!   reason, so it is never reported as pending.

pub mod journal;

use std::cmp::Ordering;
use std::collections::{BTreeMap, BinaryHeap, VecDeque};
use std::sync::Arc;

use alloy_consensus::{Transaction, TxEnvelope};
use alloy_primitives::{
    map::{AddressMap, B256Map},
    Address, Bytes, B256, U256,
};

use crate::error::{ChainError, DropReason, InvalidTx, Rejection};

/// A validated, signed transaction waiting in the pool.
#[derive(Debug)]
pub struct PooledTx {
    pub tx: TxEnvelope,
    pub raw: Bytes,
    pub sender: Address,
    pub hash: B256,
    pub nonce: u64,
    pub gas_limit: u64,
    /// Fee cap (legacy: gas price).
    pub max_fee: u128,
    /// Priority fee cap (legacy: gas price).
    pub max_priority: u128,
    /// Arrival order, the tie-breaker between equal fees.
    pub seq: u64,
}

impl PooledTx {
    pub fn new(tx: TxEnvelope, raw: Bytes, sender: Address) -> Self {
        Self {
            hash: *tx.tx_hash(),
            nonce: tx.nonce(),
            gas_limit: tx.gas_limit(),
            max_fee: tx.max_fee_per_gas(),
            max_priority: tx.max_priority_fee_per_gas().unwrap_or_else(|| tx.max_fee_per_gas()),
            tx,
            raw,
            sender,
            seq: 0,
        }
    }

    /// What the sender must hold: gas limit x fee cap + value.
    pub fn cost(&self) -> U256 {
        U256::from(self.gas_limit) * U256::from(self.max_fee) + self.tx.value()
    }

    /// Priority fee actually paid at this base fee; `None` if the fee cap is below it.
    pub fn effective_tip(&self, base_fee: u64) -> Option<u128> {
        let base = base_fee as u128;
        (self.max_fee >= base).then(|| self.max_priority.min(self.max_fee - base))
    }
}

#[derive(Clone, Debug)]
pub struct PoolLimits {
    pub max_per_sender: usize,
    pub max_total: usize,
}

/// A transaction the pool holds or held.
#[derive(Clone, Debug)]
pub enum PoolEntry {
    /// Waiting, with the nonces its sender has pooled (to tell pending from queued).
    Pooled { tx: Arc<PooledTx>, sender_nonces: Vec<u64> },
    /// Left the pool without being included, and why.
    Dropped(DropReason),
}

/// Where a transaction the pool knows stands.
#[derive(Clone, Debug)]
pub enum TxStatus {
    /// Executable: no nonce gap before it.
    Pending,
    /// Waiting for a gap in its sender's nonces to fill.
    Queued,
    Dropped(DropReason),
}

impl PoolEntry {
    /// Its status, given its sender's nonce in the newest pending state.
    pub fn status(&self, state_nonce: u64) -> TxStatus {
        match self {
            PoolEntry::Pooled { tx, sender_nonces } if tx.nonce < next_nonce(state_nonce, sender_nonces) => {
                TxStatus::Pending
            }
            PoolEntry::Pooled { .. } => TxStatus::Queued,
            PoolEntry::Dropped(reason) => TxStatus::Dropped(reason.clone()),
        }
    }
}

/// The end of the contiguous run of `nonces` (ascending) that starts at `state_nonce`.
pub fn next_nonce(state_nonce: u64, nonces: &[u64]) -> u64 {
    let mut next = state_nonce;
    for &nonce in nonces.iter().filter(|n| **n >= state_nonce) {
        if nonce != next {
            break;
        }
        next += 1;
    }
    next
}

/// Result of adding a transaction.
#[derive(Debug, Default)]
pub struct Added {
    /// The transaction it replaced, if any.
    pub replaced: Option<B256>,
    /// Transactions evicted to make room.
    pub evicted: Vec<B256>,
}

const DROPPED_MEMORY: usize = 10_000;

pub struct Pool {
    limits: PoolLimits,
    by_hash: B256Map<Arc<PooledTx>>,
    senders: AddressMap<BTreeMap<u64, Arc<PooledTx>>>,
    seq: u64,
    dropped: B256Map<DropReason>,
    dropped_order: VecDeque<B256>,
}

impl Pool {
    pub fn new(limits: PoolLimits) -> Self {
        Self {
            limits,
            by_hash: Default::default(),
            senders: Default::default(),
            seq: 0,
            dropped: Default::default(),
            dropped_order: VecDeque::new(),
        }
    }

    pub fn len(&self) -> usize {
        self.by_hash.len()
    }

    /// How many transactions have ever been added: changes whenever one arrives.
    pub fn arrivals(&self) -> u64 {
        self.seq
    }

    pub fn is_empty(&self) -> bool {
        self.by_hash.is_empty()
    }

    pub fn get(&self, hash: &B256) -> Option<Arc<PooledTx>> {
        self.by_hash.get(hash).cloned()
    }

    /// Checks whether `tx` would be accepted, without adding it (the caller journals it
    /// first, then calls `add`).
    pub fn check(&self, tx: &PooledTx, state_nonce: u64) -> Result<(), ChainError> {
        self.plan(tx, state_nonce).map(|_| ())
    }

    /// Adds a transaction. `state_nonce` is the sender's nonce in the newest pending state.
    pub fn add(&mut self, mut tx: PooledTx, state_nonce: u64) -> Result<Added, ChainError> {
        let plan = self.plan(&tx, state_nonce)?;
        let mut added = Added::default();
        if let Some(old) = plan.replace {
            self.remove(&old);
            self.record_drop(old, DropReason::Replaced);
            added.replaced = Some(old);
        }
        if let Some(victim) = plan.evict {
            self.remove(&victim);
            self.record_drop(victim, DropReason::Evicted);
            added.evicted.push(victim);
        }
        self.seq += 1;
        tx.seq = self.seq;
        let tx = Arc::new(tx);
        self.senders.entry(tx.sender).or_default().insert(tx.nonce, tx.clone());
        self.dropped.remove(&tx.hash);
        self.by_hash.insert(tx.hash, tx);
        Ok(added)
    }

    fn plan(&self, tx: &PooledTx, state_nonce: u64) -> Result<Plan, ChainError> {
        if self.by_hash.contains_key(&tx.hash) {
            return Err(InvalidTx::AlreadyKnown.into());
        }
        if tx.nonce < state_nonce {
            return Err(InvalidTx::NonceTooLow { sender: tx.sender, tx: tx.nonce, state: state_nonce }.into());
        }
        let queue = self.senders.get(&tx.sender);
        let mut plan = Plan::default();
        if let Some(old) = queue.and_then(|q| q.get(&tx.nonce)) {
            // Both the fee cap and the tip must rise by at least 10%.
            let enough = |new: u128, old: u128| new.saturating_mul(100) >= old.saturating_mul(110);
            if !(enough(tx.max_fee, old.max_fee) && enough(tx.max_priority, old.max_priority)) {
                return Err(InvalidTx::ReplacementUnderpriced.into());
            }
            plan.replace = Some(old.hash);
            return Ok(plan);
        }
        let held = queue.map_or(0, |q| q.len());
        if held >= self.limits.max_per_sender {
            return Err(Rejection::AccountLimit { sender: tx.sender, held }.into());
        }
        if tx.nonce >= state_nonce + self.limits.max_per_sender as u64 {
            return Err(InvalidTx::NonceGapTooLarge { sender: tx.sender, tx: tx.nonce, state: state_nonce }.into());
        }
        if self.by_hash.len() >= self.limits.max_total {
            plan.evict = Some(self.eviction_victim(tx).ok_or_else(|| ChainError::from(InvalidTx::PoolFull))?);
        }
        Ok(plan)
    }

    /// The cheapest last-nonce transaction of another sender that `tx` outbids.
    fn eviction_victim(&self, tx: &PooledTx) -> Option<B256> {
        self.senders
            .iter()
            .filter(|(sender, _)| **sender != tx.sender)
            .filter_map(|(_, q)| q.values().next_back())
            .filter(|last| last.max_priority < tx.max_priority)
            .min_by(|a, b| a.max_priority.cmp(&b.max_priority).then(b.seq.cmp(&a.seq)))
            .map(|t| t.hash)
    }

    /// Removes a transaction (included, replaced, evicted or dropped).
    pub fn remove(&mut self, hash: &B256) -> Option<Arc<PooledTx>> {
        let tx = self.by_hash.remove(hash)?;
        if let Some(q) = self.senders.get_mut(&tx.sender) {
            q.remove(&tx.nonce);
            if q.is_empty() {
                self.senders.remove(&tx.sender);
            }
        }
        Some(tx)
    }

    /// Removes a transaction and remembers why.
    pub fn drop_tx(&mut self, hash: &B256, reason: DropReason) -> Option<Arc<PooledTx>> {
        let tx = self.remove(hash)?;
        self.record_drop(*hash, reason);
        Some(tx)
    }

    fn record_drop(&mut self, hash: B256, reason: DropReason) {
        if self.dropped.insert(hash, reason).is_none() {
            self.dropped_order.push_back(hash);
            if self.dropped_order.len() > DROPPED_MEMORY {
                if let Some(old) = self.dropped_order.pop_front() {
                    self.dropped.remove(&old);
                }
            }
        }
    }

    /// Nonces of `sender`'s pooled transactions, ascending.
    pub fn nonces_of(&self, sender: &Address) -> Vec<u64> {
        self.senders.get(sender).map(|q| q.keys().copied().collect()).unwrap_or_default()
    }

    /// The nonce a new transaction of `sender` should use: after the pooled run that
    /// continues from `state_nonce`.
    pub fn next_nonce(&self, sender: &Address, state_nonce: u64) -> u64 {
        next_nonce(state_nonce, &self.nonces_of(sender))
    }

    /// Where a pooled transaction stands (`None` when the pool never had it), without
    /// deciding pending or queued: that needs the sender's state nonce (see `TxStatus`).
    pub fn lookup(&self, hash: &B256) -> Option<PoolEntry> {
        if let Some(tx) = self.by_hash.get(hash) {
            return Some(PoolEntry::Pooled { tx: tx.clone(), sender_nonces: self.nonces_of(&tx.sender) });
        }
        self.dropped.get(hash).map(|reason| PoolEntry::Dropped(reason.clone()))
    }

    /// Every sender's pooled transactions in nonce order: what the builder takes under
    /// the pool lock, to pick from (`BestTxs::new`) after releasing it.
    pub fn snapshot(&self) -> Vec<(Address, Vec<Arc<PooledTx>>)> {
        self.senders.iter().map(|(sender, q)| (*sender, q.values().cloned().collect())).collect()
    }

    /// Every sender's pooled nonces, ascending (cheaper than `snapshot` when only counting).
    pub fn nonce_lists(&self) -> Vec<(Address, Vec<u64>)> {
        self.senders.iter().map(|(sender, q)| (*sender, q.keys().copied().collect())).collect()
    }

    /// One sender's pooled transactions in nonce order.
    pub fn queue_of(&self, sender: &Address) -> Vec<Arc<PooledTx>> {
        self.senders.get(sender).map(|q| q.values().cloned().collect()).unwrap_or_default()
    }

    /// Executable transactions in builder order (see `BestTxs::new`).
    pub fn best(&self, base_fee: u64, state_nonce_of: impl FnMut(&Address) -> u64) -> BestTxs {
        BestTxs::new(self.snapshot(), base_fee, state_nonce_of)
    }
}

#[derive(Default)]
struct Plan {
    replace: Option<B256>,
    evict: Option<B256>,
}

#[derive(PartialEq, Eq)]
struct Candidate {
    tip: u128,
    seq: u64,
    sender: Address,
}

impl Ord for Candidate {
    fn cmp(&self, other: &Self) -> Ordering {
        self.tip.cmp(&other.tip).then_with(|| other.seq.cmp(&self.seq))
    }
}

impl PartialOrd for Candidate {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Iterator over executable transactions in builder order. `skip_sender` drops the rest of
/// a sender's run (after one of its transactions failed or did not fit).
pub struct BestTxs {
    heads: BinaryHeap<Candidate>,
    runs: AddressMap<Vec<Arc<PooledTx>>>,
    base_fee: u64,
}

impl BestTxs {
    /// Executable transactions in the order the builder should try them: each sender's in
    /// nonce order from its state nonce, senders interleaved by effective priority fee
    /// (highest first, then arrival). Transactions whose fee cap is below `base_fee` wait.
    pub fn new(
        queues: Vec<(Address, Vec<Arc<PooledTx>>)>,
        base_fee: u64,
        mut state_nonce_of: impl FnMut(&Address) -> u64,
    ) -> Self {
        let mut heads = BinaryHeap::new();
        let mut runs: AddressMap<Vec<Arc<PooledTx>>> = Default::default();
        for (sender, queue) in queues {
            let start = state_nonce_of(&sender);
            // The contiguous run from the state nonce; a gap ends it.
            let mut run: Vec<Arc<PooledTx>> = queue
                .into_iter()
                .skip_while(|tx| tx.nonce < start)
                .zip(start..)
                .take_while(|(tx, want)| tx.nonce == *want)
                .map(|(tx, _)| tx)
                .collect();
            run.reverse(); // pop() from the end yields nonce order
            if let Some(head) = run.last() {
                if let Some(tip) = head.effective_tip(base_fee) {
                    heads.push(Candidate { tip, seq: head.seq, sender });
                    runs.insert(sender, run);
                }
            }
        }
        Self { heads, runs, base_fee }
    }

    pub fn skip_sender(&mut self, sender: &Address) {
        self.runs.remove(sender);
    }
}

impl Iterator for BestTxs {
    type Item = Arc<PooledTx>;

    fn next(&mut self) -> Option<Arc<PooledTx>> {
        while let Some(c) = self.heads.pop() {
            let Some(run) = self.runs.get_mut(&c.sender) else { continue };
            let Some(tx) = run.pop() else { continue };
            if let Some(next) = run.last() {
                if let Some(tip) = next.effective_tip(self.base_fee) {
                    self.heads.push(Candidate { tip, seq: next.seq, sender: c.sender });
                }
            }
            return Some(tx);
        }
        None
    }
}

#[cfg(test)]
mod tests;
