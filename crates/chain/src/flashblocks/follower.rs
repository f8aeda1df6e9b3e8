//! The follower's thread: flashblocks in, executed on the head, shown as the pending block.

use std::sync::atomic::Ordering;
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender, SyncSender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use alloy_consensus::Header;
use alloy_primitives::B256;
use preconf_flashblocks::{FlashblocksPayloadV1, Sequence};
use preconf_op::OpTx;

use super::stats::FollowStats;
use crate::builder::block::{OpenBlock, Outcome};
use crate::chain_state::ChainState;
use crate::consensus::{next_header, NextBlock};
use crate::events::ChainEvent;
use crate::followed::{FollowedBlock, FollowedBlocks};
use crate::view::PendingBlock;
use crate::warm::WarmTrie;

/// What the follower's thread is told.
pub enum Input {
    /// A decoded flashblock and when its frame was read.
    Frame(Box<FlashblocksPayloadV1>, Instant),
    /// The head moved (a sealed block was shown).
    Sealed,
    /// newPayload's question: the block followed on `parent`, if it hashes to `hash`.
    Take {
        parent: B256,
        hash: B256,
        reply: SyncSender<Option<FollowedBlock>>,
    },
    Stop,
}

/// What the chain asks the follower (newPayload's question), through its inbox.
struct Inbox(parking_lot::Mutex<Sender<Input>>);

impl FollowedBlocks for Inbox {
    fn take(&self, parent: B256, hash: B256) -> Option<FollowedBlock> {
        let (reply, answer) = std::sync::mpsc::sync_channel(1);
        self.0.lock().send(Input::Take { parent, hash, reply }).ok()?;
        // The follower answers between two flashblocks; a stuck one is not waited for.
        answer.recv_timeout(Duration::from_secs(1)).ok().flatten()
    }
}

pub struct FollowerHandle {
    tx: Sender<Input>,
    thread: Option<JoinHandle<()>>,
    chain: Arc<ChainState>,
}

impl FollowerHandle {
    /// Where the WebSocket client hands its flashblocks.
    pub fn sender(&self) -> Sender<Input> {
        self.tx.clone()
    }

    pub fn stop(self) {
        drop(self);
    }
}

/// The chain holds an inbox of the follower (for newPayload), so the thread would not see
/// its channel close: it is told to stop.
impl Drop for FollowerHandle {
    fn drop(&mut self) {
        self.chain.set_follower(None);
        let _ = self.tx.send(Input::Stop);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Starts the follower's thread, and a listener that tells it when the head moves.
pub fn spawn(chain: Arc<ChainState>, max_wait: Duration, stats: Arc<FollowStats>) -> std::io::Result<FollowerHandle> {
    let (tx, rx) = channel();
    let events = chain.events().subscribe();
    let heads = tx.clone();
    std::thread::Builder::new().name("preconf-fb-heads".into()).spawn(move || {
        while let Ok(event) = events.recv() {
            if matches!(event, ChainEvent::Sealed { .. }) && heads.send(Input::Sealed).is_err() {
                return;
            }
        }
    })?;
    chain.set_follower(Some(Arc::new(Inbox(parking_lot::Mutex::new(tx.clone())))));
    let follower_chain = chain.clone();
    let thread = std::thread::Builder::new().name("preconf-fb-follow".into()).spawn(move || {
        Follower { chain: follower_chain, stats, max_wait, seq: None, open: None, waiting_since: None, followed: None }
            .run(rx)
    });
    match thread {
        Ok(thread) => Ok(FollowerHandle { tx, thread: Some(thread), chain }),
        Err(e) => {
            chain.set_follower(None);
            Err(e)
        }
    }
}

/// The block being executed on the head.
struct Open {
    block: OpenBlock,
    head: B256,
    /// Transactions of the sequence executed so far.
    executed: usize,
    pending: Option<Arc<PendingBlock>>,
    /// The block's trie, advanced by each flashblock's changes (its state root).
    warm: WarmTrie,
}

/// The block last shown as pending, to judge the canonical block of its number.
struct Followed {
    number: u64,
    /// The hash the last flashblock named (zero when the builder sends none).
    hash: B256,
    txs: Vec<B256>,
}

struct Follower {
    chain: Arc<ChainState>,
    stats: Arc<FollowStats>,
    max_wait: Duration,
    seq: Option<Sequence>,
    open: Option<Open>,
    /// When the oldest flashblock not shown yet arrived.
    waiting_since: Option<Instant>,
    followed: Option<Followed>,
}

impl Follower {
    fn run(mut self, rx: Receiver<Input>) {
        loop {
            // Something waits for its parent: wake when the bound passes.
            let input = match self.waiting_since.filter(|_| self.seq.is_some()) {
                Some(since) => match rx.recv_timeout(self.max_wait.saturating_sub(since.elapsed())) {
                    Ok(input) => Some(input),
                    Err(RecvTimeoutError::Timeout) => None,
                    Err(RecvTimeoutError::Disconnected) => return,
                },
                None => match rx.recv() {
                    Ok(input) => Some(input),
                    Err(_) => return,
                },
            };
            match input {
                Some(Input::Frame(fb, at)) => self.frame(*fb, at),
                Some(Input::Sealed) => self.sealed(),
                Some(Input::Take { parent, hash, reply }) => {
                    let _ = reply.send(self.take(parent, hash));
                }
                Some(Input::Stop) => return,
                None => {}
            }
            self.advance();
        }
    }

    fn drop_block(&mut self) {
        FollowStats::count(&self.stats.dropped);
        self.seq = None;
        self.open = None;
        self.waiting_since = None;
    }

    fn frame(&mut self, fb: FlashblocksPayloadV1, at: Instant) {
        if fb.index == 0 {
            // A new payload (the next block, or this one started over).
            self.open = None;
            match Sequence::start(fb) {
                Ok(seq) => self.seq = Some(seq),
                Err(_) => return self.drop_block(),
            }
        } else {
            let Some(seq) = &mut self.seq else {
                // Joined mid-block (a new connection): the next index 0 starts a block.
                FollowStats::count(&self.stats.dropped);
                return;
            };
            if seq.push(fb).is_err() {
                // A flashblock was missed: what is shown stays until the next index 0.
                return self.drop_block();
            }
        }
        self.waiting_since.get_or_insert(at);
    }

    /// The head moved: the followed block is promoted or was not the canonical one.
    fn sealed(&mut self) {
        let view = self.chain.view();
        let head = view.head_number();
        if let Some(f) = self.followed.take_if(|f| f.number <= head) {
            if f.number == head {
                let canonical: Vec<B256> = view.head.txs.iter().map(|t| t.hash()).collect();
                let same = match f.hash.is_zero() {
                    false => f.hash == view.head_hash(),
                    // No hash from the builder: the same transactions.
                    true => f.txs == canonical,
                };
                FollowStats::count(if same { &self.stats.promoted } else { &self.stats.mismatches });
            }
        }
        if self.open.as_ref().is_some_and(|o| o.head != view.head_hash()) {
            self.open = None;
        }
        if self.stats.pending_number.load(Ordering::Relaxed) <= head {
            self.stats.pending_number.store(0, Ordering::Relaxed);
        }
    }

    /// The followed block, sealed, when it is block `hash` on `parent` with everything the
    /// flashblocks named executed. Compared first by the header shown (no trie work for a
    /// block that differs), then sealed as the builder seals: the state root and trie diff
    /// over the whole block, the seal's own header fields, and the hash again.
    fn take(&mut self, parent: B256, hash: B256) -> Option<FollowedBlock> {
        let (seq, open) = (self.seq.as_ref()?, self.open.as_ref()?);
        let shown = open.pending.as_ref()?;
        if open.head != parent || open.executed != seq.transactions.len() || shown.block.header.hash_slow() != hash {
            return None;
        }
        let mut open = self.open.take()?;
        // Whatever happens now, this block is done with: the canonical one arrived.
        self.seq = None;
        self.waiting_since = None;
        let mut header = open.block.current_header();
        let (state_root, trie) = open.warm.state_root(&open.block.changes).ok()?;
        header.state_root = state_root;
        open.block.seal_fields(&mut header, &trie).ok()?;
        if header.hash_slow() != hash {
            FollowStats::count(&self.stats.mismatches);
            return None;
        }
        FollowStats::count(&self.stats.reused);
        let changes = std::mem::take(&mut open.block.changes);
        Some(FollowedBlock { txs: std::mem::take(&mut open.block.txs), changes, trie })
    }

    /// Executes what the sequence holds beyond what is shown, when it can be.
    fn advance(&mut self) {
        let Some(seq) = &self.seq else { return };
        let view = self.chain.view();
        if self.open.is_none() {
            let number = seq.base.block_number;
            if number <= view.head_number() {
                // The head passed it: pending reads the head until the next block's.
                return self.drop_block();
            }
            if number != view.head_number() + 1 || seq.base.parent_hash != view.head_hash() {
                if self.waiting_since.is_some_and(|s| s.elapsed() >= self.max_wait) {
                    self.drop_block();
                }
                return;
            }
            let b = &seq.base;
            let next = NextBlock {
                timestamp: b.timestamp,
                beneficiary: b.fee_recipient,
                gas_limit: b.gas_limit,
                mix_hash: b.prev_randao,
                parent_beacon_block_root: b.parent_beacon_block_root,
                ..Default::default()
            };
            let mut header = next_header(self.chain.spec(), &view.head.header, view.head_hash(), next);
            header.extra_data = b.extra_data.clone();
            header.base_fee_per_gas = Some(b.base_fee_per_gas.saturating_to());
            match OpenBlock::following(&self.chain, &view, header) {
                Ok(block) => {
                    let warm = WarmTrie::new(view.snapshot.clone());
                    self.open = Some(Open { block, head: view.head_hash(), executed: 0, pending: None, warm });
                }
                Err(_) => return self.drop_block(),
            }
        }
        self.execute();
    }

    fn execute(&mut self) {
        let (Some(seq), Some(open)) = (&self.seq, &mut self.open) else { return };
        if open.executed == seq.transactions.len()
            && open.pending.as_ref().is_some_and(|p| p.preconf_index() == seq.index)
        {
            return;
        }
        let started = Instant::now();
        for raw in &seq.transactions[open.executed..] {
            let run = OpTx::decode_2718(raw).and_then(|tx| Ok((tx.sender()?, tx)));
            let ok = match run {
                Ok((sender, tx)) => matches!(open.block.run(tx, sender, raw), Outcome::Included),
                Err(_) => false,
            };
            if !ok {
                // Not executable on this head: not the sequencer's block.
                FollowStats::count(&self.stats.mismatches);
                return self.drop_block();
            }
            open.executed += 1;
        }
        let layer = Arc::new(std::mem::take(&mut open.block.tick));
        let diff = &seq.latest;
        let mut header = open.block.current_header();
        let state_root = match diff.state_root.is_zero() {
            true => None,
            false => open.warm.advance_root(&layer).ok(),
        };
        if state_root.is_none() {
            open.warm.advance(&layer);
        }
        header.state_root = state_root.unwrap_or(diff.state_root);
        if header.withdrawals_root.is_some() {
            header.withdrawals_root = Some(diff.withdrawals_root);
        }
        if let (Some(_), Some(blob)) = (header.blob_gas_used, diff.blob_gas_used) {
            header.blob_gas_used = Some(blob);
        }
        if differs(&header, diff, state_root.is_some()) {
            FollowStats::count(&self.stats.mismatches);
        }
        self.stats.exec.observe(started.elapsed().as_secs_f64());
        let (pending, first_new) = match &open.pending {
            None => (PendingBlock::start(header, open.block.txs.clone(), seq.index, layer.clone()), 0),
            Some(p) => {
                let first_new = p.block.txs.len();
                (p.next(header, &open.block.txs[first_new..], seq.index, layer.clone()), first_new)
            }
        };
        let pending = Arc::new(pending);
        let view = self.chain.view();
        let mut next = (*view).clone();
        next.pending = Some(pending.clone());
        let included = pending.block.txs[first_new..].iter().map(|t| t.hash());
        if !self.chain.publish_on_head(open.head, next, included) {
            // The head moved meanwhile: `sealed` judges the block, the next index 0 follows.
            self.open = None;
            return;
        }
        let opened = open.pending.is_none() && seq.index == 0;
        open.pending = Some(pending.clone());
        let block = pending.block.clone();
        let unix_ms = crate::replica::unix_now_ms();
        self.followed = Some(Followed {
            number: block.header.number,
            hash: seq.block_hash().unwrap_or_default(),
            txs: block.txs.iter().map(|t| t.hash()).collect(),
        });
        self.stats.pending_number.store(block.header.number, Ordering::Relaxed);
        self.chain.events().send(match opened {
            true => ChainEvent::Opened { block, unix_ms, changes: layer },
            false => ChainEvent::Preconfirmed { block, first_new, unix_ms, changes: layer },
        });
        FollowStats::count(&self.stats.applied);
        if let Some(since) = self.waiting_since.take() {
            self.stats.lag.observe(since.elapsed().as_secs_f64());
        }
    }
}

/// Whether the block as executed here is not the one the flashblock describes.
fn differs(ours: &Header, theirs: &preconf_flashblocks::ExecutionPayloadFlashblockDeltaV1, with_root: bool) -> bool {
    ours.receipts_root != theirs.receipts_root
        || ours.gas_used != theirs.gas_used
        || ours.logs_bloom != theirs.logs_bloom
        || (with_root && ours.state_root != theirs.state_root)
}
