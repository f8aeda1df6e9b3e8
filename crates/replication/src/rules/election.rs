//! Who leads and when a follower campaigns.
//!
//! Nobody compares clocks: a node sees the lease lapse when its revision has not changed for
//! a whole lease duration on its own clock, counted from when it saw the revision arrive.
//! The leader counts its own lease from when it sent the renewal, which is earlier, so it
//! stops leading before anyone else may start (`term`).

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

/// The lease key's value: the leader, where it takes transactions, and its term, which grows
/// by one with every new leader (a released lease keeps its term, so terms never repeat).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeaseValue {
    pub node: String,
    /// Where the leader takes forwarded transactions (its `--advertise` URL).
    pub url: String,
    pub term: u64,
    /// Given up on purpose (a clean shutdown, or a takeover that could not finish):
    /// anyone ready may take it at once.
    #[serde(default)]
    pub released: bool,
}

/// The lease as this node last saw it.
#[derive(Clone, Debug)]
pub struct Seen {
    /// Revision of the key (0: never written).
    pub revision: u64,
    pub value: Option<LeaseValue>,
    /// When this node saw that revision arrive (on its own clock).
    pub at: Instant,
    /// The key has been read at least once (before that nothing is known of the lease).
    pub read: bool,
}

impl Seen {
    /// What a node knows of the lease before it has read it.
    pub fn unseen(now: Instant) -> Self {
        Self { revision: 0, value: None, at: now, read: false }
    }

    /// The leader, while its lease runs.
    pub fn holder(&self, now: Instant, lease: Duration) -> Option<&LeaseValue> {
        self.value.as_ref().filter(|v| !v.released && now.saturating_duration_since(self.at) < lease)
    }

    /// Whether a node may try to take the lease: it has read it, and nobody holds it.
    pub fn open(&self, now: Instant, lease: Duration) -> bool {
        self.read && self.holder(now, lease).is_none()
    }

    /// The term a new leader takes.
    pub fn next_term(&self) -> u64 {
        self.value.as_ref().map_or(0, |v| v.term) + 1
    }

    /// Whether the key at `revision` (watched, or read directly) is news to this node: only
    /// a newer revision is. The same one read again must not restart the lease's clock, or a
    /// dead leader's lease would never lapse.
    pub fn superseded_by(&self, revision: u64) -> bool {
        revision > self.revision
    }
}

/// The watch on the lease key brings every revision, but once the NATS server its consumer
/// lived on is lost it can stop delivering without an error. A node with such a watch saw
/// a live leader's lease lapse, and its takes were refused as stale forever while it
/// answered "no leader". A leader renews every quarter lease (`term::renew_every`), so a
/// watch quiet for half a lease is checked by reading the key directly, well before a lease
/// it missed the renewals of would lapse; a newer revision read replaces the watch.
pub fn watch_quiet_after(lease: Duration) -> Duration {
    lease / 2
}

/// What a following node does after looking at the lease.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Look {
    /// Somebody leads, the lease has not been read yet, or this node backs off: keep following.
    Follow,
    /// The lease is open: if this node is ready, take it for `term`.
    Campaign { term: u64 },
}

/// How a term this node held ended, for how long it then stays out of elections.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ended {
    /// Deposed by the stream or the lease, or shut down: ready again after one lease.
    Deposed,
    /// Took the lease but could not finish the takeover (catching up, first message, the
    /// builder's start): two leases, so a node that can gets the lease first.
    TakeoverFailed,
    /// Its builder stopped or sealed nothing: four leases, for the same reason.
    CouldNotProduce,
}

/// A following node's view of elections: when it may campaign.
#[derive(Debug)]
pub struct Campaign {
    lease: Duration,
    /// No campaign before this (a node that just led backs off).
    not_before: Instant,
}

impl Campaign {
    pub fn new(lease: Duration, now: Instant) -> Self {
        Self { lease, not_before: now }
    }

    /// The leader this node knows of now.
    pub fn leader<'a>(&self, now: Instant, seen: &'a Seen) -> Option<&'a LeaseValue> {
        seen.holder(now, self.lease)
    }

    /// Whether to campaign, given the lease as seen at `now`.
    pub fn look(&self, now: Instant, seen: &Seen) -> Look {
        if !seen.open(now, self.lease) || now < self.not_before {
            return Look::Follow;
        }
        Look::Campaign { term: seen.next_term() }
    }

    /// This node's term ended at `now`: when it may campaign again.
    pub fn ended(&mut self, now: Instant, how: Ended) {
        let wait = match how {
            Ended::Deposed => self.lease,
            Ended::TakeoverFailed => self.lease * 2,
            Ended::CouldNotProduce => self.lease * 4,
        };
        self.not_before = now + wait;
    }
}

/// What a node knows of itself when it would campaign.
#[derive(Clone, Debug, Default)]
pub struct Fitness {
    /// The follower stopped for good on a block that does not match.
    pub stopped: bool,
    /// The chain's or the store's fault, if any.
    pub fault: Option<String>,
    /// The last stream message applied.
    pub applied: u64,
}

/// Why this node may not campaign yet (shown on `/health`), before looking at the stream:
/// `None` when only the stream's end remains to check (`behind_stream`).
pub fn unfit(f: &Fitness) -> Option<String> {
    if f.stopped {
        return Some("stopped on a block that does not match".into());
    }
    f.fault.clone()
}

/// Why a node that applied up to `applied` may not campaign given the stream's end (or the
/// failure reading it): it must hold every message the stream has.
pub fn behind_stream(applied: u64, stream_end: Result<u64, String>) -> Option<String> {
    match stream_end {
        Ok(last) if applied >= last => None,
        Ok(last) => Some(format!("catching up: {} stream messages behind", last - applied)),
        Err(e) => Some(format!("cannot read the stream: {e}")),
    }
}

/// `/health`'s reason once a node has known no leader for longer than `wait`.
pub fn leaderless(without_leader: Option<Duration>, wait: Duration) -> Option<String> {
    without_leader
        .filter(|d| *d > wait)
        .map(|d| format!("cluster: no leader for {:.1} s (election in progress)", d.as_secs_f64()))
}

/// A starting node is healthy once it has applied everything the stream held when it
/// looked; it looks this often.
pub const START_LOOK: Duration = Duration::from_millis(250);

/// Whether a node that applied up to `applied` holds everything up to the stream's `last`.
pub fn caught_up(applied: u64, last: u64) -> bool {
    applied >= last
}
