//! The test methods' hook in the builder (`--dev`; crate::dev holds the rest). The builder
//! is the chain's only writer, so their requests are carried out here, between ticks, in
//! the order they came:
//!
//! - a state edit goes into the block being built (its EVM state and change sets, like a
//!   transaction's effects) and is shown at once as the block's next pre-confirmation;
//!   it is sealed with the block;
//! - a new block context (time, base fee) seals the open block if it holds anything, or
//!   opens it again if it holds nothing, so what is sent next runs in the new context;
//! - a snapshot seals what the open block holds and marks the store; a revert puts the
//!   store back there and opens a new block on it (a reset: on a new genesis), dropping the
//!   pool, and shows that block at once: subscribers see a new block, never an older
//!   pre-confirmation.
//!
//! Pre-confirmations the test methods bring forward do not count towards a block's
//! schedule: blocks are still sealed every `--block-time-ms` (or as `Mining` says).

use std::collections::BTreeMap;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use alloy_primitives::{keccak256, B256, KECCAK256_EMPTY};
use revm::bytecode::Bytecode;

use super::block::OpenBlock;
use super::tick::Executed;
use super::Builder;
use crate::changes::{AccountState, StateChanges};
use crate::consensus::MIN_GAS_LIMIT;
use crate::dev::clock::{BlockClock, BlockContext};
use crate::dev::requests::{
    AccountEdit, Balance, DevHooks, DevInbox, DevMetadata, DevReply, DevRequest, Mining, PoolDrop,
};
use crate::dev::rewind;
use crate::dev::DevError;
use crate::error::{ChainError, ChainResult, StoreFault};
use crate::genesis::seed::GenesisSource;
use crate::store::StoreSavepoint;

/// The builder's side of the test methods.
pub(super) struct DevState {
    inbox: DevInbox,
    clock: BlockClock,
    mining: Mining,
    /// What `evm_setAutomine(false)` goes back to.
    before_auto: Mining,
    snapshots: BTreeMap<u64, Snapshot>,
    next_id: u64,
    /// Pre-confirmations of block `.0` the test methods brought forward: `.1`.
    extra: (u64, u64),
    /// The number of the open block when it holds state edits.
    edited: Option<u64>,
    genesis: Option<GenesisSource>,
    /// `anvil_metadata`'s instance id.
    instance_id: B256,
}

/// A sealed state to go back to (`evm_snapshot`).
struct Snapshot {
    savepoint: StoreSavepoint,
    /// Its head's timestamp: the clock goes back to it with the state.
    timestamp: u64,
    /// Its head's number and hash (`anvil_metadata`).
    head: (u64, B256),
}

/// A new instance id: unique to this start (or reset) of the chain, not secret.
fn new_instance_id() -> B256 {
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or_default();
    keccak256([nanos.to_be_bytes().as_slice(), &std::process::id().to_be_bytes()].concat())
}

impl DevState {
    pub fn new(hooks: DevHooks) -> Self {
        Self {
            inbox: hooks.inbox,
            clock: BlockClock::default(),
            mining: Mining::Schedule,
            before_auto: Mining::Schedule,
            snapshots: BTreeMap::new(),
            next_id: 0,
            extra: (0, 0),
            edited: None,
            genesis: hooks.genesis,
            instance_id: new_instance_id(),
        }
    }
}

impl Builder {
    fn dev_mut(&mut self) -> &mut DevState {
        self.dev.as_mut().expect("only a builder serving the test methods gets their requests")
    }

    /// Carries out the test methods' requests that came since the last look. A failure of
    /// the chain itself (the store) is answered and then stops the builder.
    pub(super) fn serve_dev(&mut self) -> ChainResult<()> {
        let Some(dev) = &self.dev else { return Ok(()) };
        for call in dev.inbox.drain() {
            let reply = self.dev_request(call.request);
            let fatal = match &reply {
                Err(e @ ChainError::Internal(_)) => Some(e.clone()),
                _ => None,
            };
            let _ = call.reply.send(reply);
            if let Some(e) = fatal {
                return Err(e);
            }
        }
        Ok(())
    }

    fn dev_request(&mut self, request: DevRequest) -> ChainResult<DevReply> {
        let reply = match request {
            DevRequest::Edit(edits) => {
                self.edit(&edits)?;
                DevReply::Done
            }
            DevRequest::Mine { blocks, interval, timestamp } => {
                self.mine(blocks, interval, timestamp)?;
                DevReply::Done
            }
            DevRequest::IncreaseTime(seconds) => {
                let total = self.dev_mut().clock.increase(seconds)?;
                self.new_context(true)?;
                DevReply::Offset(total)
            }
            DevRequest::SetTime(timestamp) => {
                let forward = self.dev_mut().clock.set_time(timestamp)?;
                self.new_context(true)?;
                DevReply::Forward(forward)
            }
            DevRequest::SetNextTimestamp(timestamp) => {
                let parent = self.next_parent_timestamp();
                self.dev_mut().clock.set_next_timestamp(timestamp, parent)?;
                self.new_context(true)?;
                DevReply::Done
            }
            DevRequest::SetNextBaseFee(fee) => {
                if self.block.header.base_fee_per_gas.is_none() {
                    return Err(DevError::NoBaseFee.into());
                }
                self.dev_mut().clock.set_next_base_fee(fee);
                self.new_context(false)?;
                DevReply::Done
            }
            DevRequest::SetCoinbase(coinbase) => {
                self.dev_mut().clock.settings.coinbase = Some(coinbase);
                self.new_context(false)?;
                DevReply::Done
            }
            DevRequest::SetGasLimit(gas_limit) => {
                if gas_limit < MIN_GAS_LIMIT {
                    return Err(DevError::GasLimitTooLow { limit: gas_limit, min: MIN_GAS_LIMIT }.into());
                }
                self.dev_mut().clock.settings.gas_limit = Some(gas_limit);
                self.new_context(false)?;
                DevReply::Done
            }
            DevRequest::SetTimestampInterval(seconds) => {
                let was = std::mem::replace(&mut self.dev_mut().clock.settings.timestamp_interval, seconds);
                self.new_context(seconds.is_some())?;
                DevReply::Found(was.is_some())
            }
            DevRequest::SetMining(mode) => {
                let dev = self.dev_mut();
                if mode == Mining::Auto && dev.mining != Mining::Auto {
                    dev.before_auto = dev.mining;
                }
                dev.mining = mode;
                DevReply::Done
            }
            DevRequest::StopAutomine => {
                let dev = self.dev_mut();
                if dev.mining == Mining::Auto {
                    dev.mining = dev.before_auto;
                }
                DevReply::Done
            }
            DevRequest::GetMining => DevReply::Mining(self.dev_mut().mining),
            DevRequest::Snapshot => DevReply::Id(self.snapshot()?),
            DevRequest::Revert(id) => DevReply::Found(self.revert(id)?),
            DevRequest::Metadata => {
                let dev = self.dev_mut();
                let snapshots = dev.snapshots.iter().map(|(id, s)| (*id, s.head.0, s.head.1)).collect();
                DevReply::Metadata(DevMetadata { instance_id: dev.instance_id, snapshots })
            }
            DevRequest::Reset => {
                self.reset()?;
                DevReply::Done
            }
            DevRequest::DropTx(hash) => DevReply::Dropped(self.drop_pooled(PoolDrop::One(hash)).into_iter().next()),
            DevRequest::DropAll => {
                self.drop_pooled(PoolDrop::All);
                DevReply::Done
            }
            DevRequest::DropFrom(sender) => {
                self.drop_pooled(PoolDrop::Sender(sender));
                DevReply::Done
            }
        };
        Ok(reply)
    }

    /// Whether the open block holds transactions or state edits (sealing it is not empty).
    pub(super) fn holds_anything(&self) -> bool {
        let edited = self.dev.as_ref().and_then(|d| d.edited);
        !self.block.txs.is_empty() || edited == Some(self.block.header.number)
    }

    /// The open block's pre-confirmations that count towards its schedule: not those the
    /// test methods brought forward.
    pub(super) fn scheduled_preconfs(&self) -> u64 {
        let ticks = self.block.preconf_index;
        match &self.dev {
            Some(dev) if dev.extra.0 == self.block.header.number => ticks.saturating_sub(dev.extra.1),
            _ => ticks,
        }
    }

    /// Whether the block is due to be sealed after a tick's pre-confirmation; `scheduled`:
    /// the schedule's answer, which stands unless the test methods changed how blocks are
    /// mined.
    pub(super) fn seal_due(&self, scheduled: bool) -> bool {
        let Some(dev) = &self.dev else { return scheduled };
        match dev.mining {
            Mining::Schedule => scheduled,
            Mining::Interval(secs) => {
                let interval = self.chain.config().preconf_interval_ms.max(1);
                self.scheduled_preconfs() >= (secs.saturating_mul(1000) / interval).max(1)
            }
            Mining::Auto => self.holds_anything(),
            Mining::Manual => false,
        }
    }

    /// The context of the next block opened after `parent`'s seal.
    pub(super) fn next_context(&mut self, parent: &alloy_consensus::Header) -> BlockContext {
        match &mut self.dev {
            Some(dev) => dev.clock.next_context(parent),
            None => BlockContext::default(),
        }
    }

    /// Publishes the next pre-confirmation now rather than at the tick.
    fn bring_forward(&mut self) {
        let number = self.block.header.number;
        if let Some(dev) = &mut self.dev {
            if dev.extra.0 != number {
                dev.extra = (number, 0);
            }
            dev.extra.1 += 1;
        }
        self.preconfirm(None);
    }

    /// Seals the open block now, after showing what it executed since the last tick.
    fn seal_now(&mut self) -> ChainResult<()> {
        if !self.executed.included.is_empty() {
            self.bring_forward();
        }
        self.seal()
    }

    /// Applies state edits to the open block and shows them. With automine (or without
    /// pre-confirmations, where `pending` is the head) they are sealed at once.
    fn edit(&mut self, edits: &[AccountEdit]) -> ChainResult<()> {
        let b = &mut self.block;
        let db = &mut b.evm.ctx.journaled_state.database;
        for edit in edits {
            let existing = db.load_account(edit.address)?.info();
            let mut info = existing.clone().unwrap_or_default();
            match edit.balance {
                Some(Balance::Set(v)) => info.balance = v,
                Some(Balance::Add(v)) => info.balance = info.balance.saturating_add(v),
                None => {}
            }
            if let Some(nonce) = edit.nonce {
                info.nonce = nonce;
            }
            if let Some(code) = &edit.code {
                (info.code_hash, info.code) = match code.is_empty() {
                    true => (KECCAK256_EMPTY, None),
                    false => (keccak256(code), Some(Bytecode::new_raw(code.clone()))),
                };
            }
            let state = AccountState { nonce: info.nonce, balance: info.balance, code_hash: info.code_hash };
            if existing.is_none() && state.is_empty() && edit.storage.is_empty() {
                continue; // an account that does not exist, left empty: nothing changes
            }
            db.insert_account_info(edit.address, info);
            for (slot, value) in &edit.storage {
                db.insert_account_storage(edit.address, *slot, *value)?;
            }
            for changes in [&mut b.changes, &mut b.tick] {
                record(changes, edit, state);
            }
        }
        b.warm.changed();
        let number = b.header.number;
        self.dev_mut().edited = Some(number);
        if self.dev_mut().mining == Mining::Auto || !self.chain.config().preconf {
            return self.seal_now();
        }
        self.bring_forward();
        Ok(())
    }

    /// Seals `blocks` blocks now, each with what the pool has ready.
    fn mine(&mut self, blocks: u64, interval: Option<u64>, timestamp: Option<u64>) -> ChainResult<()> {
        if blocks > crate::dev::MAX_MINE_BLOCKS {
            return Err(DevError::TooManyBlocks { asked: blocks, max: crate::dev::MAX_MINE_BLOCKS }.into());
        }
        // The interval's last timestamp must fit, as an exact timestamp must.
        let spread = interval.map(|i| i.saturating_mul(blocks));
        let last = spread.map(|s| self.block.header.timestamp.max(timestamp.unwrap_or_default()).saturating_add(s));
        if let Some(last) = last.filter(|t| *t > crate::dev::clock::MAX_TIMESTAMP) {
            return Err(DevError::TimestampTooLate { requested: last, max: crate::dev::clock::MAX_TIMESTAMP }.into());
        }
        if let Some(t) = timestamp {
            let parent = self.next_parent_timestamp();
            self.dev_mut().clock.set_next_timestamp(t, parent)?;
            self.new_context(true)?;
        }
        for _ in 0..blocks {
            // Everything executable, however long it takes: the caller asked for a block now.
            self.execute_pool(Instant::now() + Duration::from_secs(3600));
            if let Some(seconds) = interval.filter(|s| *s > 0) {
                let next = self.block.header.timestamp.saturating_add(seconds);
                self.dev_mut().clock.next_at(next);
            }
            self.seal_now()?;
        }
        Ok(())
    }

    /// The timestamp the next block opened will follow: the open block's if it is sealed
    /// first (it holds something), else the head's.
    fn next_parent_timestamp(&self) -> u64 {
        match self.holds_anything() {
            true => self.block.header.timestamp,
            false => self.chain.view().head.header.timestamp,
        }
    }

    /// A new block context from the clock: the open block is sealed if it holds anything,
    /// else opened again in the new context (its pre-confirmations counting on, so
    /// subscribers see its index grow; its timestamp kept unless `time` changed); either
    /// way the block is shown at once.
    fn new_context(&mut self, time: bool) -> ChainResult<()> {
        if self.holds_anything() {
            self.seal_now()?;
        } else {
            let index = self.block.preconf_index;
            let mut view = (*self.chain.view()).clone();
            view.pending = None;
            let mut context = self.next_context(&view.head.header.clone());
            if !time {
                context.timestamp = Some(self.block.header.timestamp);
            }
            self.block = OpenBlock::open_at(&self.chain, &view, context)?;
            self.block.preconf_index = index;
            self.published = None;
            self.executed = Executed::default();
            let view = self.with_pending(view);
            self.chain.publish(view);
            self.announce_open();
        }
        self.bring_forward();
        Ok(())
    }

    /// Waits until every sealed block is in the store: a savepoint, a restore or a wipe
    /// must not race the committer. Refused while the store cannot write (the committer
    /// would retry until it can, and the caller would wait as long).
    fn land_all(&mut self) -> ChainResult<()> {
        if let Some(reason) = self.chain.store_fault() {
            return Err(StoreFault::CannotWrite { reason }.into());
        }
        while let Some(landed) = self.committer.wait() {
            self.land(landed)?;
        }
        Ok(())
    }

    /// Seals what the open block holds, then marks the store as it is.
    fn snapshot(&mut self) -> ChainResult<u64> {
        if self.holds_anything() {
            self.seal_now()?;
        }
        self.land_all()?;
        let savepoint = self.chain.store().savepoint()?;
        let view = self.chain.view();
        let (timestamp, head) = (view.head.header.timestamp, (view.head_number(), view.head_hash()));
        let dev = self.dev_mut();
        let id = dev.next_id;
        dev.next_id += 1;
        dev.snapshots.insert(id, Snapshot { savepoint, timestamp, head });
        Ok(id)
    }

    /// Back to snapshot `id` (false: no such snapshot). It and every later one are used up.
    fn revert(&mut self, id: u64) -> ChainResult<bool> {
        let dev = self.dev_mut();
        let Some(snapshot) = dev.snapshots.remove(&id) else { return Ok(false) };
        // Restoring a savepoint makes every later one invalid.
        dev.snapshots.retain(|later, _| *later < id);
        self.land_all()?;
        self.chain.store().restore(&snapshot.savepoint)?;
        drop(snapshot.savepoint);
        self.dev_mut().clock.reset_to(snapshot.timestamp);
        self.reopen_on_store("dropped by evm_revert")?;
        Ok(true)
    }

    /// Back to a new genesis: the store wiped and seeded again.
    fn reset(&mut self) -> ChainResult<()> {
        if self.dev_mut().genesis.is_none() {
            return Err(DevError::NoGenesis.into());
        }
        // Savepoints first: under them the wipe would keep every page the chain used.
        self.dev_mut().snapshots.clear();
        self.land_all()?;
        self.chain.store().wipe()?;
        let dev = self.dev.as_ref().expect("a dev builder");
        rewind::seed(&self.chain, dev.genesis.as_ref().expect("checked above"))?;
        self.dev_mut().clock = BlockClock::default();
        self.dev_mut().instance_id = new_instance_id();
        self.reopen_on_store("dropped by anvil_reset")
    }

    /// After the store went back: readers see its head with a new block open on it, the
    /// pool is empty (what it held was sent against state that is gone), and the
    /// transactions of the discarded open block are forgotten by the journal.
    fn reopen_on_store(&mut self, reason: &str) -> ChainResult<()> {
        let view = rewind::view_at_store_head(&self.chain)?;
        let context = self.next_context(&view.head.header.clone());
        let discarded: Vec<B256> = self.block.txs.iter().map(|t| t.hash()).collect();
        self.block = OpenBlock::open_at(&self.chain, &view, context)?;
        self.published = None;
        self.executed = Executed::default();
        let number = self.block.header.number;
        let dev = self.dev_mut();
        dev.extra = (number, 0);
        dev.edited = None;
        let view = self.with_pending(view);
        self.chain.publish_emptying_pool(view, reason);
        if let Some(journal) = self.chain.journal() {
            journal.forget(discarded.iter());
        }
        self.announce_open();
        self.bring_forward();
        Ok(())
    }

    /// Takes transactions out of the pool: `hash`, or all. One already executed into the
    /// open block stays (it is shown at the next tick): it is not in the answer.
    fn drop_pooled(&mut self, which: PoolDrop) -> Vec<B256> {
        let reason = match which {
            PoolDrop::One(_) => "dropped by anvil_dropTransaction",
            PoolDrop::Sender(_) => "dropped by anvil_removePoolTransactions",
            PoolDrop::All => "dropped by anvil_dropAllTransactions",
        };
        let hashes: Vec<B256> = match which {
            PoolDrop::One(h) => vec![h],
            PoolDrop::Sender(sender) => {
                self.chain.read_pool(|pool| pool.queue_of(&sender)).into_iter().map(|t| t.hash).collect()
            }
            PoolDrop::All => self
                .chain
                .read_pool(|pool| pool.snapshot())
                .into_iter()
                .flat_map(|(_, q)| q.into_iter().map(|t| t.hash))
                .collect(),
        };
        let executed = &self.executed.included;
        let dropped: Vec<(B256, String)> =
            hashes.into_iter().filter(|h| !executed.contains(h)).map(|h| (h, reason.to_string())).collect();
        self.chain.drop_from_pool(&dropped)
    }
}

/// Records one edit in a change set, as a transaction's effects are recorded.
fn record(changes: &mut StateChanges, edit: &AccountEdit, state: AccountState) {
    let change = changes.accounts.entry(edit.address).or_default();
    change.info = Some(state);
    change.storage.extend(edit.storage.iter().copied());
    if let Some(code) = edit.code.as_ref().filter(|c| !c.is_empty()) {
        changes.codes.insert(state.code_hash, code.clone());
    }
}
