//! What a node says about its place in replication: its role, the leader it knows of and
//! the term, and counters for `/metrics`. Read by the N-API layer at any time; written by
//! the cluster's controller (or fixed, for the static roles).

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use tokio::sync::watch;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Builds and writes the stream.
    Leader,
    /// Follows the stream.
    Replica,
    /// Won the lease, not yet building (catching up to the end of the stream, first message).
    Candidate,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Leader => "leader",
            Role::Replica => "replica",
            Role::Candidate => "candidate",
        }
    }
}

/// The leader as far as this node knows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeaderInfo {
    pub node: String,
    pub url: String,
    pub term: u64,
}

struct State {
    role: Role,
    /// Since when this node knows of no leader (`None` while it knows one).
    leaderless_since: Option<Instant>,
    /// Time without a leader, summed over every gap.
    leaderless_total: Duration,
    last_takeover: Option<Duration>,
    /// Why this node does not campaign, when it would otherwise.
    not_ready: Option<String>,
}

pub struct Status {
    state: Mutex<State>,
    leader: watch::Sender<Option<LeaderInfo>>,
    /// Leases this node took.
    pub elections: AtomicU64,
    /// Appends the stream refused because another leader had written (this node deposed).
    pub fenced: AtomicU64,
    /// Leases this node gave up because it sealed nothing within the bound.
    pub stalled: AtomicU64,
    pub term: AtomicU64,
}

impl Status {
    pub fn new(role: Role, leader: Option<LeaderInfo>) -> Self {
        let leaderless_since = leader.is_none().then(Instant::now);
        Self {
            state: Mutex::new(State {
                role,
                leaderless_since,
                leaderless_total: Duration::ZERO,
                last_takeover: None,
                not_ready: None,
            }),
            leader: watch::channel(leader).0,
            elections: AtomicU64::new(0),
            fenced: AtomicU64::new(0),
            stalled: AtomicU64::new(0),
            term: AtomicU64::new(0),
        }
    }

    pub fn role(&self) -> Role {
        self.state.lock().role
    }

    pub fn set_role(&self, role: Role) {
        self.state.lock().role = role;
    }

    pub fn leader(&self) -> Option<LeaderInfo> {
        self.leader.borrow().clone()
    }

    pub fn set_leader(&self, leader: Option<LeaderInfo>) {
        if let Some(l) = &leader {
            self.term.fetch_max(l.term, Relaxed);
        }
        let mut st = self.state.lock();
        match (&leader, st.leaderless_since) {
            (Some(_), Some(since)) => {
                st.leaderless_total += since.elapsed();
                st.leaderless_since = None;
            }
            (None, None) => st.leaderless_since = Some(Instant::now()),
            _ => {}
        }
        drop(st);
        self.leader.send_if_modified(|l| {
            let changed = *l != leader;
            *l = leader;
            changed
        });
    }

    /// How long this node has known of no leader (`None` while it knows one).
    pub fn leaderless_for(&self) -> Option<Duration> {
        self.state.lock().leaderless_since.map(|s| s.elapsed())
    }

    pub fn leaderless_total(&self) -> Duration {
        let st = self.state.lock();
        st.leaderless_total + st.leaderless_since.map_or(Duration::ZERO, |s| s.elapsed())
    }

    pub fn set_takeover(&self, took: Duration) {
        self.state.lock().last_takeover = Some(took);
    }

    pub fn last_takeover(&self) -> Option<Duration> {
        self.state.lock().last_takeover
    }

    pub fn set_not_ready(&self, why: Option<String>) {
        self.state.lock().not_ready = why;
    }

    pub fn not_ready(&self) -> Option<String> {
        self.state.lock().not_ready.clone()
    }

    /// Waits up to `within` for a leader other than `not` (a leader that did not answer).
    pub async fn wait_for_leader(&self, within: Duration, not: Option<&LeaderInfo>) -> Option<LeaderInfo> {
        let mut rx = self.leader.subscribe();
        let wait = async {
            loop {
                {
                    let l = rx.borrow_and_update();
                    if l.is_some() && l.as_ref() != not {
                        return l.clone();
                    }
                }
                if rx.changed().await.is_err() {
                    return None;
                }
            }
        };
        tokio::time::timeout(within, wait).await.ok().flatten()
    }
}
