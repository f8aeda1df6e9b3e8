//! Snapshots, reverts and resets: the store marked, put back or wiped, and a new block
//! opened on what it then holds.

use alloy_primitives::B256;

use super::super::block::OpenBlock;
use super::super::tick::Executed;
use super::{new_instance_id, Builder, Snapshot};
use crate::dev::clock::BlockClock;
use crate::dev::rewind;
use crate::dev::DevError;
use crate::error::{ChainResult, DropReason};
use crate::fork::{ForkPoint, ForkSource};
use crate::genesis::seed::GenesisSource;
use crate::store::Upstream;

impl Builder {
    /// Seals what the open block holds, then marks the store as it is.
    pub(super) fn snapshot(&mut self) -> ChainResult<u64> {
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
    pub(super) fn revert(&mut self, id: u64) -> ChainResult<bool> {
        let dev = self.dev_mut();
        let Some(snapshot) = dev.snapshots.remove(&id) else { return Ok(false) };
        // Restoring a savepoint makes every later one invalid.
        dev.snapshots.retain(|later, _| *later < id);
        self.land_all()?;
        self.chain.store().restore(&snapshot.savepoint)?;
        drop(snapshot.savepoint);
        self.dev_mut().clock.reset_to(snapshot.timestamp);
        self.reopen_on_store(DropReason::Revert)?;
        Ok(true)
    }

    /// Back to a new genesis: the store wiped and seeded again.
    pub(super) fn reset(&mut self) -> ChainResult<()> {
        if self.dev_mut().genesis.is_none() {
            return Err(DevError::NoGenesis.into());
        }
        self.wipe()?;
        let dev = self.dev.as_ref().expect("a dev builder");
        rewind::seed(&self.chain, dev.genesis.as_ref().expect("checked above"))?;
        self.started_again()
    }

    /// Onto another fork (`anvil_reset` with `forking`): `source` was attached and asked for
    /// `point` before this request came, so nothing here waits for the upstream but the dev
    /// accounts' seed, which reads what the source warmed. Later resets come back here.
    pub(super) fn reset_fork(&mut self, source: ForkSource, point: ForkPoint) -> ChainResult<()> {
        self.wipe()?;
        let upstream = Upstream { source: source.0, fork_block: point.header.number };
        self.chain.store().set_upstream(Some(upstream));
        let genesis = GenesisSource::Fork(Box::new(point));
        rewind::seed(&self.chain, &genesis)?;
        self.dev_mut().genesis = Some(genesis);
        self.started_again()
    }

    /// Savepoints first: under them the wipe would keep every page the chain used.
    fn wipe(&mut self) -> ChainResult<()> {
        self.dev_mut().snapshots.clear();
        self.land_all()?;
        self.chain.store().wipe()
    }

    fn started_again(&mut self) -> ChainResult<()> {
        self.dev_mut().clock = BlockClock::default();
        self.dev_mut().instance_id = new_instance_id();
        self.reopen_on_store(DropReason::Reset)
    }

    /// After the store went back: readers see its head with a new block open on it, the
    /// pool is empty (what it held was sent against state that is gone), and the
    /// transactions of the discarded open block are forgotten by the journal.
    fn reopen_on_store(&mut self, reason: DropReason) -> ChainResult<()> {
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
}
