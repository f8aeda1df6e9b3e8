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
    /// Since when the connection to NATS is down (the client's own state, polled).
    link_down: Option<Instant>,
    /// Since when requests to NATS fail, and the last error.
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
    /// Whether the client is connected now. Kept apart from requests that succeed: a
    /// reader still applying what it had buffered must not hide a connection that is gone.
    connected: Mutex<Option<Box<dyn Fn() -> bool + Send>>>,
}

impl Health {
    pub fn new(chain: Arc<ChainState>, what: String, timeout: Duration) -> Arc<Self> {
        let state =
            State { link_down: Some(Instant::now()), outage: None, reported: false, causes: [None, None, None, None] };
        Arc::new(Self {
            chain,
            what,
            timeout,
            state: Mutex::new(state),
            detail: Mutex::new(None),
            connected: Mutex::new(None),
        })
    }

    pub fn set_detail(&self, detail: impl Fn() -> String + Send + 'static) {
        *self.detail.lock() = Some(Box::new(detail));
    }

    /// How to tell whether the client is connected (its own state).
    pub fn set_connected(&self, connected: impl Fn() -> bool + Send + 'static) {
        *self.connected.lock() = Some(Box::new(connected));
    }

    /// NATS failed; the outage starts now unless it already runs.
    pub fn fail(&self, error: impl std::fmt::Display) {
        let mut st = self.state.lock();
        let error = error.to_string();
        match &mut st.outage {
            Some((_, e)) => *e = error,
            None => {
                preconf_chain::log::warn(
                    "nats",
                    &format!("{}: {error}", self.what),
                    serde_json::json!({ "link": self.what, "error": error }),
                );
                st.outage = Some((Instant::now(), error));
            }
        }
    }

    /// NATS answered: the requests' outage (if any) is over.
    pub fn ok(&self) {
        let mut st = self.state.lock();
        if let Some((since, _)) = st.outage.take() {
            if st.reported && st.link_down.is_none() {
                recovered(&self.what, since);
                st.reported = false;
            }
            drop(st);
            self.publish();
        }
    }

    pub fn failing(&self) -> bool {
        let st = self.state.lock();
        st.outage.is_some() || st.link_down.is_some()
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
        let up = self.connected.lock().as_ref().is_some_and(|c| c());
        let mut st = self.state.lock();
        match (up, st.link_down) {
            (true, Some(since)) => {
                if st.reported && st.outage.is_none() {
                    recovered(&self.what, since);
                    st.reported = false;
                }
                st.link_down = None;
            }
            (false, None) => st.link_down = Some(Instant::now()),
            _ => {}
        }
        let since = [st.link_down, st.outage.as_ref().map(|(s, _)| *s)].into_iter().flatten().min();
        if since.is_some_and(|s| s.elapsed() >= self.timeout) {
            st.reported = true;
        }
        drop(st);
        self.publish();
    }

    fn publish(&self) {
        let st = self.state.lock();
        let mut reasons: Vec<String> = Vec::new();
        let down = match (&st.outage, st.link_down) {
            (Some((since, error)), link) => Some((link.map_or(*since, |l| l.min(*since)), error.clone())),
            (None, Some(since)) => Some((since, "disconnected".to_string())),
            (None, None) => None,
        };
        if let (true, Some((since, error))) = (st.reported, down) {
            let detail = self.detail.lock().as_ref().map(|d| d()).unwrap_or_default();
            reasons.push(format!("{} for {:.1} s ({error}){detail}", self.what, since.elapsed().as_secs_f64()));
        }
        reasons.extend(st.causes.iter().flatten().cloned());
        drop(st);
        self.chain.set_replication_health((!reasons.is_empty()).then(|| reasons.join("; ")));
    }
}

/// An outage of `what` that began at `since` is over.
fn recovered(what: &str, since: Instant) {
    let seconds = since.elapsed().as_secs_f64();
    let fields = serde_json::json!({ "link": what, "outageSeconds": seconds });
    preconf_chain::log::info("nats", &format!("{what}: recovered after {seconds:.1} s"), fields);
}
