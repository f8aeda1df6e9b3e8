//! The builder's clock as a pure function: given the time and what happened (a ring of the
//! pool's bell, a prefetch left unfinished, the open block's pre-confirmation count), what
//! the builder does next. The loop in `mod.rs` only sleeps and acts.
//!
//! Between ticks the builder passes over the pool when something arrived (at most once per
//! `poll`, so a stream of arrivals is executed in batches), and stops passing a little
//! before the tick so the tick is on time; at the tick it runs what arrived meanwhile for a
//! short while and publishes. At a 10 ms interval that is at most one pass between ticks
//! (two at 20 ms): the tick runs most of the block. A tick that comes late does not burst:
//! the ticks it missed are skipped. Sealing keeps to the block time rather than to a count
//! of ticks: the block is sealed at its first tick due at (or half an interval before) its
//! deadline, so skipped ticks do not stretch blocks, and deadlines follow one another by the
//! block time whatever a seal took. A block never holds more than `per_block` pre-confirmations either (a new
//! leader continuing a block knows its count, not when it opened).

use std::time::{Duration, Instant};

/// What the builder does next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// Sleep until `until`, or until the bell rings (an arrival, a landed commit, a stop).
    Wait { until: Instant },
    /// Sleep until `until` whatever rings: too soon after the last pass.
    Rest { until: Instant },
    /// Execute what the pool offers and load the seal's trie paths, stopping at `until`.
    Pass { until: Instant },
    /// The tick due at `due`: execute what arrived (stopping at `execute_until`), publish
    /// the next pre-confirmation, and seal the block when `seal`.
    Tick { due: Instant, execute_until: Instant, seal: bool },
    /// Stop building (the handle asked).
    Stop,
}

/// What the builder knows when it asks.
#[derive(Clone, Copy, Debug)]
pub struct Facts {
    pub now: Instant,
    /// The bell rang during the last wait.
    pub rung: bool,
    /// A prefetch was cut short and has more to load.
    pub prefetch_behind: bool,
    /// Pre-confirmations the open block has so far.
    pub preconf_index: u64,
    /// The handle asked the builder to stop.
    pub stopping: bool,
}

#[derive(Debug)]
pub struct Schedule {
    interval: Duration,
    per_block: u64,
    block_time: Duration,
    /// When the open block is due to be sealed.
    seal_at: Instant,
    /// Passes between ticks are at least this far apart.
    poll: Duration,
    /// When the next tick is due.
    next: Instant,
    /// No pass before this.
    rest_until: Instant,
    /// A ring heard while resting: the pass after the rest is owed to it.
    owed: bool,
}

/// How often the builder looks for newly arrived transactions between ticks: every 10 ms
/// (at most every interval), whatever the interval. Each pass wakes the builder on the core
/// the node's readers share and leaves them its trie and EVM work in their caches; passes
/// every quarter of a 10 ms interval cost `eth_call` at `pending` a fifth of its throughput
/// under load (benches/RESULTS.md), for no gain in gaps or send → pending.
pub fn exec_poll(interval: Duration) -> Duration {
    interval.min(EXEC_POLL).max(Duration::from_micros(200))
}

const EXEC_POLL: Duration = Duration::from_millis(10);

/// When a pass between ticks stops: a little before the tick, so the tick is not late.
pub fn stop_before(tick: Instant, interval: Duration) -> Instant {
    let margin = (interval / 8).min(Duration::from_millis(2));
    tick.checked_sub(margin).unwrap_or(tick)
}

/// How long the pass at the tick itself may run (transactions that arrived since the last
/// pass; with short intervals most execution happens here): it delays the publication.
pub fn at_tick(interval: Duration) -> Duration {
    (interval / 2).min(Duration::from_millis(5))
}

impl Schedule {
    /// A clock whose first tick is due at `first_tick`; the open block's `block_time`
    /// counts from `now`.
    pub fn new(interval: Duration, block_time: Duration, now: Instant, first_tick: Instant) -> Self {
        let per_block = (block_time.as_nanos() / interval.as_nanos().max(1)).max(1) as u64;
        Self {
            interval,
            per_block,
            block_time,
            seal_at: now + block_time,
            poll: exec_poll(interval),
            next: first_tick,
            rest_until: now,
            owed: false,
        }
    }

    pub fn next(&mut self, f: Facts) -> Action {
        if f.stopping {
            return Action::Stop;
        }
        if f.now >= self.next {
            let due = self.next;
            self.next += self.interval;
            let seal = f.preconf_index + 1 >= self.per_block || due + self.interval / 2 >= self.seal_at;
            if seal {
                self.seal_at += self.block_time;
                if self.seal_at <= due {
                    // More than a block behind: the next block gets its whole time.
                    self.seal_at = due + self.block_time;
                }
            }
            return Action::Tick { due, execute_until: f.now + at_tick(self.interval), seal };
        }
        let stop_at = stop_before(self.next, self.interval);
        self.owed |= f.rung;
        if f.now >= stop_at || !(self.owed || f.prefetch_behind) {
            // The last moments before the tick, or nothing to do: wait for either.
            self.owed = false;
            return Action::Wait { until: self.next };
        }
        if f.now < self.rest_until {
            return Action::Rest { until: self.rest_until.min(self.next) };
        }
        self.owed = false;
        Action::Pass { until: stop_at }
    }

    /// Whether the open block is due to be sealed within `within` of `now`.
    pub fn seals_within(&self, now: Instant, within: Duration) -> bool {
        self.seal_at <= now + within
    }

    /// A pass between ticks ended at `now`: the next one not before `poll` from here.
    pub fn passed(&mut self, now: Instant) {
        self.rest_until = now + self.poll;
    }

    /// The tick's work ended at `now`: ticks missed meanwhile are skipped, not burst.
    pub fn ticked(&mut self, now: Instant) {
        if self.next < now {
            self.next = now + self.interval;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    fn clock() -> (Schedule, Instant) {
        let t0 = Instant::now();
        (Schedule::new(200 * MS, 2000 * MS, t0, t0 + 200 * MS), t0)
    }

    fn at(now: Instant) -> Facts {
        Facts { now, rung: false, prefetch_behind: false, preconf_index: 0, stopping: false }
    }

    #[test]
    fn idle_it_sleeps_on_the_bell_until_the_tick() {
        let (mut s, t0) = clock();
        assert_eq!(s.next(at(t0)), Action::Wait { until: t0 + 200 * MS });
    }

    #[test]
    fn an_arrival_is_executed_at_once_until_just_before_the_tick() {
        let (mut s, t0) = clock();
        let now = t0 + 50 * MS;
        assert_eq!(s.next(Facts { rung: true, ..at(now) }), Action::Pass { until: t0 + 198 * MS });
    }

    #[test]
    fn arrivals_right_after_a_pass_wait_for_the_poll_then_are_executed_together() {
        let (mut s, t0) = clock();
        s.passed(t0 + 50 * MS);
        // Poll is 10 ms.
        assert_eq!(s.next(Facts { rung: true, ..at(t0 + 52 * MS) }), Action::Rest { until: t0 + 60 * MS });
        // The ring heard while resting is owed a pass even if nothing rings again.
        assert_eq!(s.next(at(t0 + 60 * MS)), Action::Pass { until: t0 + 198 * MS });
        assert_eq!(s.next(at(t0 + 61 * MS)), Action::Wait { until: t0 + 200 * MS });
    }

    #[test]
    fn an_arrival_in_the_last_moments_before_the_tick_waits_for_the_tick() {
        let (mut s, t0) = clock();
        assert_eq!(s.next(Facts { rung: true, ..at(t0 + 199 * MS) }), Action::Wait { until: t0 + 200 * MS });
    }

    #[test]
    fn at_a_10_ms_interval_arrivals_after_a_pass_wait_for_the_tick() {
        let t0 = Instant::now();
        let mut s = Schedule::new(10 * MS, 1000 * MS, t0, t0 + 10 * MS);
        let rung = |now| Facts { rung: true, ..at(now) };
        let stop = t0 + 10 * MS - MS * 5 / 4;
        assert_eq!(s.next(rung(t0 + MS)), Action::Pass { until: stop });
        s.passed(t0 + 2 * MS);
        // No second pass before the tick (one every 2.5 ms took a fifth of the reads).
        assert_eq!(s.next(rung(t0 + 3 * MS)), Action::Rest { until: t0 + 10 * MS });
        assert_eq!(s.next(at(t0 + 6 * MS)), Action::Rest { until: t0 + 10 * MS });
        let tick = Action::Tick { due: t0 + 10 * MS, execute_until: t0 + 15 * MS, seal: false };
        assert_eq!(s.next(at(t0 + 10 * MS)), tick);
    }

    #[test]
    fn a_prefetch_cut_short_resumes_after_the_poll_without_a_ring() {
        let (mut s, t0) = clock();
        s.passed(t0 + 20 * MS);
        let behind = |now| Facts { prefetch_behind: true, ..at(now) };
        assert_eq!(s.next(behind(t0 + 21 * MS)), Action::Rest { until: t0 + 30 * MS });
        assert_eq!(s.next(behind(t0 + 30 * MS)), Action::Pass { until: t0 + 198 * MS });
    }

    #[test]
    fn the_tick_comes_on_its_due_time_and_the_next_one_an_interval_later() {
        let (mut s, t0) = clock();
        let now = t0 + 200 * MS;
        assert_eq!(s.next(at(now)), Action::Tick { due: t0 + 200 * MS, execute_until: now + 5 * MS, seal: false });
        s.ticked(now + MS);
        assert_eq!(s.next(at(now + MS)), Action::Wait { until: t0 + 400 * MS });
    }

    #[test]
    fn the_last_pre_confirmation_of_a_block_seals_it() {
        let (mut s, t0) = clock();
        let now = t0 + 200 * MS;
        let facts = Facts { preconf_index: 9, ..at(now) };
        assert_eq!(s.next(facts), Action::Tick { due: t0 + 200 * MS, execute_until: now + 5 * MS, seal: true });
    }

    #[test]
    fn a_late_wake_up_ticks_once_and_skips_what_it_missed() {
        let (mut s, t0) = clock();
        let late = t0 + 900 * MS;
        assert!(matches!(s.next(at(late)), Action::Tick { due, .. } if due == t0 + 200 * MS));
        s.ticked(late + MS);
        // Not four ticks in a row: the next is an interval after the late one.
        assert_eq!(s.next(at(late + 2 * MS)), Action::Wait { until: late + MS + 200 * MS });
    }

    #[test]
    fn a_stop_comes_before_anything_due() {
        let (mut s, t0) = clock();
        assert_eq!(s.next(Facts { stopping: true, rung: true, ..at(t0 + 500 * MS) }), Action::Stop);
    }

    #[test]
    fn a_first_tick_due_at_once_comes_first() {
        let t0 = Instant::now();
        let mut s = Schedule::new(200 * MS, 2000 * MS, t0, t0);
        assert!(matches!(s.next(Facts { rung: true, ..at(t0) }), Action::Tick { .. }));
    }

    /// Runs the ticks from `t0` to `end`, waking `late` after each due time (a busy core),
    /// and returns the due times of the seals.
    fn seals(mut s: Schedule, t0: Instant, end: Instant, late: Duration) -> Vec<Duration> {
        let (mut now, mut index, mut out) = (t0, 0, Vec::new());
        while now < end {
            match s.next(Facts { preconf_index: index, ..at(now) }) {
                Action::Tick { due, seal, .. } => {
                    s.ticked(now + late);
                    index = if seal { 0 } else { index + 1 };
                    if seal {
                        out.push(due - t0);
                    }
                }
                Action::Wait { until } | Action::Rest { until } => now = until + late,
                other => panic!("{other:?}"),
            }
        }
        out
    }

    #[test]
    fn blocks_of_many_short_ticks_are_sealed_on_the_block_time() {
        let t0 = Instant::now();
        let s = Schedule::new(10 * MS, 1000 * MS, t0, t0 + 10 * MS);
        assert_eq!(seals(s, t0, t0 + 3001 * MS, Duration::ZERO), vec![1000 * MS, 2000 * MS, 3000 * MS]);
    }

    #[test]
    fn ticks_skipped_while_late_do_not_stretch_the_block() {
        let t0 = Instant::now();
        // Every wake-up 13 ms late with 10 ms ticks: about half the ticks are skipped, and
        // a count of 100 ticks would make 2.3 s blocks.
        let s = Schedule::new(10 * MS, 1000 * MS, t0, t0 + 10 * MS);
        let at = seals(s, t0, t0 + 3100 * MS, 13 * MS);
        assert_eq!(at.len(), 3, "{at:?}");
        for (i, due) in at.iter().enumerate() {
            let nominal = (i as u32 + 1) * 1000 * MS;
            assert!(*due + 5 * MS >= nominal && *due <= nominal + 30 * MS, "seal {i} due at {due:?}");
        }
    }

    #[test]
    fn it_says_when_the_seal_is_near() {
        let (s, t0) = clock();
        let block = s.block_time;
        assert!(!s.seals_within(t0, block / 2));
        assert!(s.seals_within(t0 + block / 2, block / 2));
    }
}
