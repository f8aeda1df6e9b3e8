//! The test methods' clock: an offset from the wall clock (`evm_increaseTime`), an exact
//! timestamp for the next block (`evm_setNextBlockTimestamp`), a base fee for it
//! (`anvil_setNextBlockBaseFeePerGas`). As anvil's: an exact timestamp also moves the offset,
//! so the blocks after it go on from there; a revert sets the clock back to the snapshot.
//! Beside it, what every later block takes until changed again: a coinbase
//! (`anvil_setCoinbase`), a gas limit (`evm_setBlockGasLimit`) and a fixed step between
//! timestamps (`anvil_setBlockTimestampInterval`); a revert keeps them, as anvil does.

use std::time::{SystemTime, UNIX_EPOCH};

use alloy_consensus::Header;
use alloy_primitives::Address;

use super::DevError;

/// What a new block's context takes from the clock; `None`: the builder's own rule
/// (wall-clock seconds, at least one past the parent; the base fee from the parent).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BlockContext {
    pub timestamp: Option<u64>,
    pub base_fee: Option<u64>,
    pub beneficiary: Option<Address>,
    pub gas_limit: Option<u64>,
}

/// Settings that hold for every block opened until they change.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BlockSettings {
    pub coinbase: Option<Address>,
    pub gas_limit: Option<u64>,
    /// Seconds from each block's timestamp to the next one's.
    pub timestamp_interval: Option<u64>,
}

/// The latest timestamp the test methods set: blocks after it still count up by a second
/// each without overflowing a header's 64 bits.
pub const MAX_TIMESTAMP: u64 = i64::MAX as u64;

#[derive(Clone, Debug, Default)]
pub struct BlockClock {
    /// Seconds added to the wall clock.
    offset: i64,
    next_timestamp: Option<u64>,
    next_base_fee: Option<u64>,
    pub settings: BlockSettings,
}

fn now_secs() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or_default()
}

impl BlockClock {
    /// Moves the clock forward; returns the total offset. Refused past `MAX_TIMESTAMP`.
    /// Counted from the chain's time when that is ahead of the clock (blocks mined faster
    /// than one a second are stamped a second apart, so the chain runs ahead): the next block
    /// comes at least `seconds` after `parent`, the block it follows, as on anvil.
    pub fn increase(&mut self, seconds: u64, parent: u64) -> Result<i64, DevError> {
        let lead = i64::try_from(parent).unwrap_or(i64::MAX).saturating_sub(now_secs());
        let offset = i64::try_from(seconds).ok().and_then(|s| self.offset.max(lead).checked_add(s));
        match offset.filter(|o| now_secs().checked_add(*o).is_some_and(|t| t <= MAX_TIMESTAMP as i64)) {
            Some(o) => {
                self.offset = o;
                Ok(o)
            }
            None => Err(DevError::OffsetTooLate { offset: self.offset, seconds, max: MAX_TIMESTAMP }),
        }
    }

    /// The clock reads `timestamp` from now on (`anvil_setTime`): later blocks are stamped
    /// from it, at least a second after their parent. Returns how many seconds that moved the
    /// clock forward (0 when back), as anvil answers. Refused past `MAX_TIMESTAMP`.
    pub fn set_time(&mut self, timestamp: u64) -> Result<u64, DevError> {
        if timestamp > MAX_TIMESTAMP {
            return Err(DevError::TimestampTooLate { requested: timestamp, max: MAX_TIMESTAMP });
        }
        let now = now_secs();
        let was = now.saturating_add(self.offset).max(0) as u64;
        self.offset = (timestamp as i64).saturating_sub(now);
        self.next_timestamp = None;
        Ok(timestamp.saturating_sub(was))
    }

    /// The next block opened (after a parent stamped `parent`) gets exactly `timestamp`; not
    /// before the parent's, equal allowed as in anvil; not past `MAX_TIMESTAMP`.
    pub fn set_next_timestamp(&mut self, timestamp: u64, parent: u64) -> Result<(), DevError> {
        if timestamp < parent {
            return Err(DevError::TimestampBeforeParent { requested: timestamp, parent });
        }
        if timestamp > MAX_TIMESTAMP {
            return Err(DevError::TimestampTooLate { requested: timestamp, max: MAX_TIMESTAMP });
        }
        self.next_timestamp = Some(timestamp);
        Ok(())
    }

    /// The next block opened gets `timestamp`, unchecked (`anvil_mine`'s interval, counted
    /// from a block the builder made).
    pub fn next_at(&mut self, timestamp: u64) {
        self.next_timestamp = Some(timestamp);
    }

    pub fn set_next_base_fee(&mut self, base_fee: u64) {
        self.next_base_fee = Some(base_fee);
    }

    /// Back to `timestamp` (a reverted-to block's): the next block follows it.
    pub fn reset_to(&mut self, timestamp: u64) {
        let settings = self.settings;
        *self = Self { offset: (timestamp as i64).saturating_sub(now_secs()), settings, ..Self::default() };
    }

    /// The context of the block opened next after `parent`: takes the one-shot settings.
    pub fn next_context(&mut self, parent: &Header) -> BlockContext {
        let base_fee = self.next_base_fee.take();
        let timestamp = match self.next_timestamp.take() {
            Some(t) => {
                self.offset = (t as i64).saturating_sub(now_secs());
                Some(t)
            }
            None if self.settings.timestamp_interval.is_some() => {
                let step = self.settings.timestamp_interval.unwrap_or_default();
                Some(parent.timestamp.saturating_add(step).min(MAX_TIMESTAMP))
            }
            None if self.offset != 0 => {
                let t = now_secs().saturating_add(self.offset).max(0) as u64;
                Some(t.max(parent.timestamp + 1))
            }
            None => None,
        };
        BlockContext { timestamp, base_fee, beneficiary: self.settings.coinbase, gas_limit: self.settings.gas_limit }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parent(timestamp: u64) -> Header {
        Header { timestamp, ..Default::default() }
    }

    #[test]
    fn an_exact_timestamp_is_used_once_and_the_blocks_after_it_go_on_from_there() {
        let mut clock = BlockClock::default();
        let far = now_secs() as u64 + 1_000_000;
        clock.set_next_timestamp(far, 10).unwrap();
        assert_eq!(clock.next_context(&parent(10)).timestamp, Some(far));
        let after = clock.next_context(&parent(far)).timestamp.unwrap();
        assert!(after > far && after < far + 5, "{after} follows {far}");
    }

    #[test]
    fn a_timestamp_before_the_parent_is_refused_in_anvils_words() {
        let mut clock = BlockClock::default();
        let e = clock.set_next_timestamp(5, 10).unwrap_err();
        assert_eq!(e.to_string(), "Timestamp error: 5 is lower than previous block's timestamp 10");
        assert!(clock.set_next_timestamp(10, 10).is_ok(), "equal is allowed, as in anvil");
        assert!(clock.set_next_timestamp(u64::MAX, 10).is_err(), "no room for the blocks after it");
    }

    #[test]
    fn increasing_time_adds_up_and_moves_every_later_block() {
        let mut clock = BlockClock::default();
        assert_eq!(clock.increase(100, 0).unwrap(), 100);
        assert_eq!(clock.increase(20, 0).unwrap(), 120);
        let e = clock.increase(i64::MAX as u64, 0).unwrap_err();
        assert!(e.to_string().starts_with("Timestamp error: now + 120 + "), "{e}");
        assert_eq!(clock.increase(0, 0).unwrap(), 120, "a refused increase changes nothing");
        let t = clock.next_context(&parent(0)).timestamp.unwrap() as i64;
        assert!((t - now_secs() - 120).abs() <= 2);
        assert_eq!(clock.next_context(&parent(0)).base_fee, None);
    }

    #[test]
    fn an_increase_counts_from_a_chain_that_runs_ahead_of_the_clock() {
        let mut clock = BlockClock::default();
        // Fifty blocks mined in a second are stamped a second apart: the head is ahead.
        let head = now_secs() as u64 + 50;
        clock.increase(3_600, head).unwrap();
        let t = clock.next_context(&parent(head)).timestamp.unwrap();
        assert!(t >= head + 3_600 && t <= head + 3_602, "{t} is an hour after the head {head}");
        let t2 = clock.next_context(&parent(t)).timestamp.unwrap();
        assert!(t2 > t && t2 <= t + 2, "the blocks after it go on from there: {t2} after {t}");
    }

    #[test]
    fn settings_hold_for_every_later_block_and_survive_a_revert() {
        let mut clock = BlockClock::default();
        let coinbase = Address::repeat_byte(7);
        clock.settings =
            BlockSettings { coinbase: Some(coinbase), gas_limit: Some(50_000_000), timestamp_interval: Some(7) };
        for parent_time in [100, 107] {
            let c = clock.next_context(&parent(parent_time));
            assert_eq!(
                (c.timestamp, c.beneficiary, c.gas_limit),
                (Some(parent_time + 7), Some(coinbase), Some(50_000_000))
            );
        }
        clock.reset_to(1_000);
        assert_eq!(clock.next_context(&parent(1_000)).timestamp, Some(1_007), "the interval outlives a revert");
        clock.set_next_timestamp(2_000, 1_007).unwrap();
        assert_eq!(clock.next_context(&parent(1_007)).timestamp, Some(2_000), "an exact timestamp wins once");
    }

    #[test]
    fn setting_the_time_moves_the_clock_there_and_says_how_far_forward() {
        let mut clock = BlockClock::default();
        let far = now_secs() as u64 + 1_000_000;
        let ahead = clock.set_time(far).unwrap();
        assert!((999_998..=1_000_000).contains(&ahead), "{ahead}");
        assert_eq!(clock.set_time(far - 10).unwrap(), 0, "back in time is not forward");
        let t = clock.next_context(&parent(0)).timestamp.unwrap();
        assert!(t >= far - 10 && t < far - 5, "{t} follows the clock set to {}", far - 10);
        assert_eq!(clock.next_context(&parent(far + 50)).timestamp, Some(far + 51), "still after the parent");
        assert!(clock.set_time(MAX_TIMESTAMP + 1).is_err());
    }

    #[test]
    fn a_base_fee_is_for_the_next_block_only() {
        let mut clock = BlockClock::default();
        clock.set_next_base_fee(7);
        assert_eq!(clock.next_context(&parent(0)).base_fee, Some(7));
        assert_eq!(clock.next_context(&parent(0)), BlockContext::default());
    }
}
