//! A leader's term: how its lease is renewed and counted, its takeover, and when it must stop
//! leading.
//!
//! The leader counts its lease from when it sent the last renewal that was accepted (earlier
//! than anyone saw it arrive) and stops one look before it lapses, so it has stopped before
//! any other node may start. It also stops once the stream refuses an append (another leader
//! wrote: fenced), someone else took the lease, its builder stopped, or it sealed nothing for
//! a whole lease and two block times while the stream took appends or its store could not
//! write: a node that can produce should lead instead.

use std::time::{Duration, Instant};

use preconf_chain::error::Fault;
use preconf_chain::ledger::LedgerError;

use super::election::Ended;

/// How often a follower looks at the lease, and a leader checks its own.
pub const LOOK: Duration = Duration::from_millis(50);

/// A leader renews its lease every quarter of its duration ...
pub fn renew_every(lease: Duration) -> Duration {
    lease / 4
}

/// ... and gives a renewal half of it to be answered.
pub fn renew_timeout(lease: Duration) -> Duration {
    lease / 2
}

/// The lease while this node holds it.
#[derive(Clone, Debug)]
pub struct Term {
    lease: Duration,
    /// The key's revision this node wrote last.
    revision: u64,
    /// Until when this node may act as the leader (its own clock, from the renewal's send).
    valid_until: Instant,
    lost: bool,
}

impl Term {
    /// Taken at `revision`, with the lease read at `taken_at` (before the take was sent).
    pub fn new(lease: Duration, revision: u64, taken_at: Instant) -> Self {
        Self { lease, revision, valid_until: taken_at + lease, lost: false }
    }

    pub fn revision(&self) -> u64 {
        self.revision
    }

    pub fn lost(&self) -> bool {
        self.lost
    }

    /// A renewal sent at `sent` was written as `revision`: the lease runs a whole duration
    /// from the send.
    pub fn renewed(&mut self, sent: Instant, revision: u64) {
        self.revision = revision;
        self.valid_until = sent + self.lease;
    }

    /// Somebody else changed the key: this node no longer holds the lease.
    pub fn lose(&mut self) {
        self.lost = true;
    }

    /// The lease would lapse before the next look: stop now, not after it lapsed.
    pub fn expiring(&self, now: Instant) -> bool {
        now + LOOK >= self.valid_until
    }
}

/// Why a leader stops leading.
#[derive(Debug)]
pub enum Deposed {
    Refused(LedgerError),
    LeaseLost,
    LeaseExpired,
    BuilderStopped(Option<Fault>),
    /// Elected, but sealed nothing within the bound: another node may be able to.
    NotProducing(String),
    Shutdown,
}

impl Deposed {
    /// How the term ended, for when this node may campaign again.
    pub fn ended(&self) -> Ended {
        match self {
            Deposed::BuilderStopped(_) | Deposed::NotProducing(_) => Ended::CouldNotProduce,
            _ => Ended::Deposed,
        }
    }

    /// Another leader wrote the stream: this node was fenced (a counter on `/metrics`).
    pub fn fenced(&self) -> bool {
        matches!(self, Deposed::Refused(LedgerError::Fenced(_)))
    }
}

impl std::fmt::Display for Deposed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Deposed::Refused(e) => write!(f, "the stream refused an append: {e}"),
            Deposed::LeaseLost => write!(f, "another node took the lease"),
            Deposed::LeaseExpired => write!(f, "the lease could not be renewed in time"),
            Deposed::BuilderStopped(Some(fault)) => write!(f, "the builder stopped: {fault}"),
            Deposed::BuilderStopped(None) => write!(f, "the builder stopped: it ended"),
            Deposed::NotProducing(why) => write!(f, "it could not produce: {why}"),
            Deposed::Shutdown => write!(f, "shutting down"),
        }
    }
}

/// What a leader sees at one of its looks.
#[derive(Clone, Debug)]
pub struct Observed {
    pub now: Instant,
    /// The builder runs.
    pub building: bool,
    /// The chain's fault, when the builder stopped on one.
    pub fault: Option<Fault>,
    /// The newest sealed block.
    pub head: u64,
    /// The ledger's newest message in the stream.
    pub last_seq: u64,
    /// Why the store cannot write, if it cannot.
    pub store_fault: Option<String>,
}

/// What happens to a leader.
#[derive(Debug)]
pub enum Event {
    /// The stream refused an append (or the ledger closed).
    Refused(LedgerError),
    /// The renewal found someone else's revision.
    LeaseLost,
    /// The node shuts down.
    Stop,
    /// A look, every `LOOK`.
    Look(Observed),
}

/// Watches a leader for a reason to stop.
#[derive(Debug)]
pub struct Leading {
    /// Sealing nothing for longer than this while able to append is not producing.
    bound: Duration,
    head: u64,
    sealed_at: Instant,
    seq_at_seal: u64,
}

impl Leading {
    /// Starts leading at `now`, with `head` sealed and the ledger at `last_seq`.
    pub fn new(lease: Duration, block_time: Duration, now: Instant, head: u64, last_seq: u64) -> Self {
        Self { bound: lease + block_time * 2, head, sealed_at: now, seq_at_seal: last_seq }
    }

    /// Why the leader stops after `event`, with its lease as `term` holds it; `None`: it
    /// leads on.
    pub fn on(&mut self, event: Event, term: &Term) -> Option<Deposed> {
        let seen = match event {
            Event::Refused(e) => return Some(Deposed::Refused(e)),
            Event::LeaseLost => return Some(Deposed::LeaseLost),
            Event::Stop => return Some(Deposed::Shutdown),
            Event::Look(seen) => seen,
        };
        if term.lost() {
            return Some(Deposed::LeaseLost);
        }
        if term.expiring(seen.now) {
            return Some(Deposed::LeaseExpired);
        }
        if !seen.building {
            return Some(Deposed::BuilderStopped(seen.fault));
        }
        if seen.head > self.head {
            (self.head, self.sealed_at, self.seq_at_seal) = (seen.head, seen.now, seen.last_seq);
            return None;
        }
        // Only this node's own inability counts: while the stream itself cannot take
        // appends (a NATS server lost, its raft electing), the lease decides.
        let stream_moves = seen.last_seq > self.seq_at_seal;
        if seen.now.saturating_duration_since(self.sealed_at) > self.bound
            && (stream_moves || seen.store_fault.is_some())
        {
            let why = seen.store_fault.unwrap_or_else(|| "the builder seals nothing".into());
            return Some(Deposed::NotProducing(format!("no block sealed for {} ms: {why}", self.bound.as_millis())));
        }
        None
    }
}

/// A takeover: from taking the lease to the term's first message in the stream, within one
/// lease.
#[derive(Debug)]
pub struct Takeover {
    deadline: Instant,
}

/// What the answer to the term's first message means.
#[derive(Debug, PartialEq, Eq)]
pub enum FirstMessage {
    /// Written right after what this node applied: it may build.
    Written,
    /// Another leader's last message landed after what this node read: apply it, then
    /// write again.
    Again,
    /// The stream cannot take it: give the lease up.
    GiveUp(String),
}

impl Takeover {
    pub fn new(now: Instant, lease: Duration) -> Self {
        Self { deadline: now + lease }
    }

    /// Whether to try (again) to catch up and write the first message.
    pub fn attempt(&self, now: Instant, term: &Term) -> Result<(), String> {
        if now > self.deadline || term.lost() {
            return Err("the lease ran out before this node could write to the stream".into());
        }
        Ok(())
    }

    pub fn first_message(answer: Result<u64, LedgerError>) -> FirstMessage {
        match answer {
            Ok(_) => FirstMessage::Written,
            Err(LedgerError::Fenced(_)) => FirstMessage::Again,
            Err(e) => FirstMessage::GiveUp(e.to_string()),
        }
    }
}
