//! Reading the stream in order. A message that is not the next one is never skipped: the
//! stream is read again from the one that is. A replica far behind the stream's end says so
//! (a load balancer should not send it reads meanwhile) until it is close again.

/// Messages behind the stream's end at which a replica reports itself as catching up, and
/// below which it is caught up again.
pub const BEHIND_DEGRADED: u64 = 256;
pub const BEHIND_OK: u64 = 16;

/// The same gap met this many times in a row is reported as a failure (a message deleted
/// from the stream never comes), not as a warning.
pub const GAP_FAILS_AFTER: u32 = 3;

/// The next message to apply when catching up to `upto` with `applied` applied; `None` once
/// there.
pub fn next_to_apply(applied: u64, upto: u64) -> Option<u64> {
    let next = applied + 1;
    (next <= upto).then_some(next)
}

/// What to do with a delivered message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Delivery {
    /// Delivered again: already applied.
    Duplicate,
    Apply,
    /// Messages are missing before it: read again from this one.
    Gap(u64),
}

/// A reading's position: the next sequence it expects.
#[derive(Debug)]
pub struct Reading {
    next: u64,
}

impl Reading {
    pub fn from(next: u64) -> Self {
        Self { next }
    }

    pub fn next(&self) -> u64 {
        self.next
    }

    pub fn delivered(&self, seq: u64) -> Delivery {
        if seq < self.next {
            Delivery::Duplicate
        } else if seq > self.next {
            Delivery::Gap(self.next)
        } else {
            Delivery::Apply
        }
    }

    /// `seq` was applied.
    pub fn applied(&mut self, seq: u64) {
        self.next = seq + 1;
    }
}

/// How a gap is reported.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GapReport {
    Warn,
    /// Met this many times in a row.
    Fail(u32),
}

/// Counts the same gap met again.
#[derive(Debug, Default)]
pub struct Gaps {
    at: u64,
    times: u32,
}

impl Gaps {
    /// A gap before message `expected`.
    pub fn met(&mut self, expected: u64) -> GapReport {
        self.times = if self.at == expected { self.times + 1 } else { 1 };
        self.at = expected;
        if self.times >= GAP_FAILS_AFTER {
            GapReport::Fail(self.times)
        } else {
            GapReport::Warn
        }
    }
}

/// What `/health` says of a replica with `pending` messages still to read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Behind {
    /// Far behind: catching up.
    Degraded,
    /// Close to the end again.
    Clear,
    /// In between: as it was.
    Unchanged,
}

pub fn behind(pending: u64) -> Behind {
    if pending >= BEHIND_DEGRADED {
        Behind::Degraded
    } else if pending < BEHIND_OK {
        Behind::Clear
    } else {
        Behind::Unchanged
    }
}
