//! When blocks are sealed under the test methods, and the seals and new block contexts
//! they ask for (`anvil_mine`, the clock's methods).

use std::ops::Range;
use std::time::{Duration, Instant};

use super::super::block::OpenBlock;
use super::super::tick::Executed;
use super::Builder;
use crate::dev::clock::BlockContext;
use crate::dev::requests::Mining;
use crate::dev::DevError;
use crate::error::ChainResult;

impl Builder {
    /// Whether the open block holds transactions or state edits (sealing it is not empty);
    /// an OP block's own L1-info deposit does not count.
    pub(in crate::builder) fn holds_anything(&self) -> bool {
        let edited = self.dev.as_ref().and_then(|d| d.edited);
        self.block.txs.len() > self.block.opening || edited == Some(self.block.header.number)
    }

    /// The open block's pre-confirmations that count towards its schedule: not those the
    /// test methods brought forward.
    pub(in crate::builder) fn scheduled_preconfs(&self) -> u64 {
        let ticks = self.block.preconf_index;
        match &self.dev {
            Some(dev) if dev.extra.0 == self.block.header.number => ticks.saturating_sub(dev.extra.1),
            _ => ticks,
        }
    }

    /// Whether the block is due to be sealed after a tick's pre-confirmation; `scheduled`:
    /// the schedule's answer, which stands unless the test methods changed how blocks are
    /// mined.
    pub(in crate::builder) fn seal_due(&self, scheduled: bool) -> bool {
        let Some(dev) = &self.dev else { return scheduled };
        match dev.mining {
            Mining::Schedule => scheduled,
            Mining::Interval(secs) => {
                let interval = self.chain.config().preconf_interval_ms.max(1);
                self.scheduled_preconfs() >= (secs.saturating_mul(1000) / interval).max(1)
            }
            // A fork's first block takes no pool transaction: sealed as it is, for the
            // transactions waiting to land in the next.
            Mining::Auto => self.holds_anything() || self.block.takes_no_pool_txs(),
            Mining::Manual => false,
        }
    }

    /// The context of the next block opened after `parent`'s seal.
    pub(in crate::builder) fn next_context(&mut self, parent: &alloy_consensus::Header) -> BlockContext {
        match &mut self.dev {
            Some(dev) => dev.clock.next_context(parent),
            None => BlockContext::default(),
        }
    }

    /// Publishes the next pre-confirmation now rather than at the tick.
    pub(super) fn bring_forward(&mut self) {
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
    pub(super) fn seal_now(&mut self) -> ChainResult<()> {
        if !self.executed.included.is_empty() {
            self.bring_forward();
        }
        self.seal()
    }

    /// Seals `blocks` blocks now, each with what the pool has ready; their numbers.
    pub(super) fn mine(
        &mut self,
        blocks: u64,
        interval: Option<u64>,
        timestamp: Option<u64>,
    ) -> ChainResult<Range<u64>> {
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
        let first = self.block.header.number;
        for _ in 0..blocks {
            // Everything executable, however long it takes: the caller asked for a block now.
            self.execute_pool(Instant::now() + Duration::from_secs(3600));
            if let Some(seconds) = interval.filter(|s| *s > 0) {
                let next = self.block.header.timestamp.saturating_add(seconds);
                self.dev_mut().clock.next_at(next);
            }
            self.seal_now()?;
        }
        Ok(first..first + blocks)
    }

    /// The timestamp the next block opened will follow: the open block's if it is sealed
    /// first (it holds something), else the head's.
    pub(super) fn next_parent_timestamp(&self) -> u64 {
        match self.holds_anything() {
            true => self.block.header.timestamp,
            false => self.chain.view().head.header.timestamp,
        }
    }

    /// A new block context from the clock: the open block is sealed if it holds anything,
    /// else opened again in the new context (its pre-confirmations counting on, so
    /// subscribers see its index grow; its timestamp kept unless `time` changed); either
    /// way the block is shown at once.
    pub(super) fn new_context(&mut self, time: bool) -> ChainResult<()> {
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
}
