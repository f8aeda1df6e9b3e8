//! What replication says about the node's health (`/health`): degraded (HTTP 503, with the
//! reason) once NATS has been unreachable longer than `--nats-timeout-ms`, while a replica is
//! far behind the stream, or while a cluster has been without a leader for too long; healthy
//! again as soon as the cause is gone. Each cause is kept apart and the reasons are joined.

use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use preconf_chain::chain_state::ChainState;

/// The causes, in the order their reasons are listed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cause {
    /// A node that started has not yet applied what the stream held then: it would show
    /// older state than it (or another node) showed before.
    Starting,
    /// A replica far behind the end of the stream.
    Behind,
    /// A cluster without a leader.
    Leaderless,
    /// Something else that must be said (the stream cannot be this node's, ...).
    Stream,
}

struct State {
    /// Since when NATS fails, and the last error.
    outage: Option<(Instant, String)>,
    /// Whether the outage was reported (and must be reported over).
    reported: bool,
    causes: [Option<String>; 4],
}

pub struct Health {
    chain: Arc<ChainState>,
    /// What fails, as the start of the outage's reason ("replica: cannot read stream …").
    what: String,
    timeout: Duration,
    state: Mutex<State>,
    /// More to say while NATS is unreachable (a leader's queued events).
    detail: Mutex<Option<Box<dyn Fn() -> String + Send>>>,
}

impl Health {
    pub fn new(chain: Arc<ChainState>, what: String, timeout: Duration) -> Arc<Self> {
        let state = State { outage: None, reported: false, causes: [None, None, None, None] };
        Arc::new(Self { chain, what, timeout, state: Mutex::new(state), detail: Mutex::new(None) })
    }

    pub fn set_detail(&self, detail: impl Fn() -> String + Send + 'static) {
        *self.detail.lock() = Some(Box::new(detail));
    }

    /// NATS failed; the outage starts now unless it already runs.
    pub fn fail(&self, error: impl std::fmt::Display) {
        let mut st = self.state.lock();
        let error = error.to_string();
        match &mut st.outage {
            Some((_, e)) => *e = error,
            None => {
                eprintln!("[preconf-node] {}: {error}", self.what);
                st.outage = Some((Instant::now(), error));
            }
        }
    }

    /// NATS answered: the outage (if any) is over.
    pub fn ok(&self) {
        let mut st = self.state.lock();
        if let Some((since, _)) = st.outage.take() {
            if st.reported {
                eprintln!("[preconf-node] {}: recovered after {:.1} s", self.what, since.elapsed().as_secs_f64());
            }
            st.reported = false;
            drop(st);
            self.publish();
        }
    }

    pub fn failing(&self) -> bool {
        self.state.lock().outage.is_some()
    }

    pub fn set(&self, cause: Cause, reason: Option<String>) {
        let mut st = self.state.lock();
        let slot = &mut st.causes[cause as usize];
        if *slot == reason {
            return;
        }
        *slot = reason;
        drop(st);
        self.publish();
    }

    /// Called periodically: an outage becomes a reason once it lasted `timeout`.
    pub fn tick(&self) {
        let mut st = self.state.lock();
        if let Some((since, _)) = &st.outage {
            if since.elapsed() >= self.timeout {
                st.reported = true;
            }
        }
        drop(st);
        self.publish();
    }

    fn publish(&self) {
        let st = self.state.lock();
        let mut reasons: Vec<String> = Vec::new();
        if let (true, Some((since, error))) = (st.reported, &st.outage) {
            let detail = self.detail.lock().as_ref().map(|d| d()).unwrap_or_default();
            reasons.push(format!("{} for {:.1} s ({error}){detail}", self.what, since.elapsed().as_secs_f64()));
        }
        reasons.extend(st.causes.iter().flatten().cloned());
        drop(st);
        self.chain.set_replication_health((!reasons.is_empty()).then(|| reasons.join("; ")));
    }
}
