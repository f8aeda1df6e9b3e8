//! A cluster's node (`--cluster`): every node runs this same controller. It follows the
//! stream; when the leader's lease lapses and this node is ready (it has applied the stream
//! to its end, its chain is healthy, it is not backing off), it takes the lease, catches up
//! to the end again, writes its term's first message (fenced like every append, so nobody
//! can have written after what it applied), and starts the builder, which continues the
//! block the log shows open. It leads until its ledger is refused, its lease cannot be
//! renewed in time, or its builder stops; then it steps down and follows again.

use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use preconf_chain::error::Fault;
use preconf_chain::ledger::{LedgerError, Record};
use preconf_chain::wire::{self as codec, Kind, TermStart};
use preconf_chain::Node;
use tokio::runtime::Handle;
use tokio::sync::{watch, Notify};

use crate::follow::{self, Following};
use crate::health::Cause;
use crate::lease::{unseen, Lease, LeaseError, LeaseValue, Seen};
use crate::ledger::StreamLedger;
use crate::nats::{self, wait_or_stop, Link};
use crate::status::{LeaderInfo, Role, Status};

#[derive(Clone, Debug)]
pub struct ClusterConfig {
    pub node_id: String,
    /// Where this node takes forwarded transactions when it leads.
    pub advertise: String,
    pub lease: Duration,
    /// How long a node may be without a leader before `/health` says so.
    pub leader_wait: Duration,
}

/// How often a follower looks at the lease, and a leader checks its own.
const LOOK: Duration = Duration::from_millis(50);

pub struct Controller {
    pub node: Arc<Node>,
    pub link: Link,
    pub following: Following,
    pub config: ClusterConfig,
    pub status: Arc<Status>,
    pub lease: Lease,
    pub rt: Handle,
    pub stop: watch::Receiver<bool>,
    /// Not yet caught up with the stream since this node started.
    pub starting: bool,
}

/// Why a leader stops leading.
enum Deposed {
    Refused(LedgerError),
    LeaseLost,
    LeaseExpired,
    BuilderStopped(Option<Fault>),
    /// Elected, but sealed nothing within the bound: another node may be able to.
    NotProducing(String),
    Shutdown,
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

/// The lease while this node holds it: renewed in the background.
struct Held {
    revision: u64,
    /// Until when this node may act as the leader (its own clock, from the renewal's send).
    valid_until: Instant,
    lost: bool,
}

impl Controller {
    pub async fn run(mut self) {
        let (seen_tx, seen) = watch::channel(unseen());
        self.rt.spawn(self.lease.clone().observe(seen_tx, self.stop.clone()));
        let mut not_before = Instant::now();
        loop {
            let Some((term, revision, seen_at)) = self.follow_until_elected(&seen, not_before).await else { return };
            match self.lead(term, revision, seen_at).await {
                Ok(()) => not_before = Instant::now() + self.config.lease,
                // A takeover that could not finish (or a builder that cannot build) backs off
                // longer, so a node that is ready gets the lease first.
                Err(backoff) => not_before = Instant::now() + backoff,
            }
            if *self.stop.borrow() {
                return;
            }
        }
    }

    fn on_term(&self) -> Arc<dyn Fn(TermStart) + Send + Sync> {
        let status = self.status.clone();
        Arc::new(move |t: TermStart| {
            status.term.fetch_max(t.term, Relaxed);
            eprintln!("[preconf-node] cluster: term {} begins, led by {} ({})", t.term, t.node, t.url);
        })
    }

    /// Follows the stream until this node takes the lease: the term and the lease revision
    /// it holds, and when it read the lease it took. `None` on stop.
    async fn follow_until_elected(
        &mut self,
        seen: &watch::Receiver<Seen>,
        not_before: Instant,
    ) -> Option<(u64, u64, Instant)> {
        self.status.set_role(Role::Replica);
        let (follow_stop, follow_rx) = watch::channel(false);
        let task = self.rt.spawn(follow::follow(self.link.clone(), self.following.clone(), follow_rx, self.on_term()));
        let mut looked = Instant::now();
        let elected = loop {
            if wait_or_stop(&mut self.stop, LOOK).await {
                break None;
            }
            if self.starting && looked.elapsed() >= Duration::from_millis(250) {
                looked = Instant::now();
                self.check_started().await;
            }
            let now = seen.borrow().clone();
            let holder = now.holder(self.config.lease).cloned();
            self.status.set_leader(holder.as_ref().map(|v| LeaderInfo {
                node: v.node.clone(),
                url: v.url.clone(),
                term: v.term,
            }));
            self.report_leaderless();
            if !now.open(self.config.lease) || Instant::now() < not_before {
                // Why a node does not campaign only matters while nobody leads.
                if holder.is_some() {
                    self.status.set_not_ready(None);
                }
                continue;
            }
            if !self.ready().await {
                continue;
            }
            let mine = LeaseValue {
                node: self.config.node_id.clone(),
                url: self.config.advertise.clone(),
                term: now.next_term(),
                released: false,
            };
            match self.lease.take(&now, &mine).await {
                Ok(revision) => {
                    self.link.health.ok();
                    break Some((mine.term, revision, Instant::now()));
                }
                Err(LeaseError::Lost(_)) => {} // somebody was faster; the watch brings it
                Err(e) => self.link.health.fail(e),
            }
        };
        let _ = follow_stop.send(true);
        let _ = task.await;
        elected
    }

    /// Healthy once this node has applied everything the stream held when it looked.
    async fn check_started(&mut self) {
        if let Ok(last) = nats::last_seq(&self.link.stream).await {
            if self.following.applied() >= last {
                self.starting = false;
                self.link.health.set(Cause::Starting, None);
            }
        }
    }

    fn report_leaderless(&self) {
        let reason = self
            .status
            .leaderless_for()
            .filter(|d| *d > self.config.leader_wait)
            .map(|d| format!("cluster: no leader for {:.1} s (election in progress)", d.as_secs_f64()));
        self.link.health.set(Cause::Leaderless, reason);
    }

    /// Whether this node may campaign: healthy, not stopped on a mismatch, and holding
    /// every message the stream has. Why not is kept for `/health`.
    async fn ready(&self) -> bool {
        let why = if self.following.stopped.load(Relaxed) {
            Some("stopped on a block that does not match".to_string())
        } else if let Some(fault) = self.node.chain().fault() {
            Some(fault.to_string())
        } else if let Some(fault) = self.node.chain().store_fault() {
            Some(fault.to_string())
        } else {
            match nats::last_seq(&self.link.stream).await {
                Ok(last) if self.following.applied() >= last => None,
                Ok(last) => Some(format!("catching up: {} stream messages behind", last - self.following.applied())),
                Err(e) => Some(format!("cannot read the stream: {e}")),
            }
        };
        let ready = why.is_none();
        self.status.set_not_ready(why);
        ready
    }

    /// Takes over and leads until deposed. `Err(backoff)` when the takeover could not be
    /// finished (the lease is released at once for another node).
    async fn lead(&mut self, term: u64, revision: u64, taken_at: Instant) -> Result<(), Duration> {
        let started = Instant::now();
        self.status.set_role(Role::Candidate);
        self.status.elections.fetch_add(1, Relaxed);
        self.status.term.fetch_max(term, Relaxed);
        let me =
            LeaseValue { node: self.config.node_id.clone(), url: self.config.advertise.clone(), term, released: false };
        let held = Arc::new(Mutex::new(Held { revision, valid_until: taken_at + self.config.lease, lost: false }));
        let lost = Arc::new(Notify::new());
        let (renew_stop, renew_rx) = watch::channel(false);
        let renewal = Renewal {
            lease: self.lease.clone(),
            me: me.clone(),
            held: held.clone(),
            lost: lost.clone(),
            health: self.link.health.clone(),
        };
        self.rt.spawn(renewal.run(self.config.lease, renew_rx));

        let ledger = match self.take_over(term, &held).await {
            Ok(l) => l,
            Err(why) => {
                eprintln!("[preconf-node] cluster: gave up taking over (term {term}): {why}");
                let _ = renew_stop.send(true);
                self.release(&held, &me).await;
                self.status.set_role(Role::Replica);
                return Err(self.config.lease * 2);
            }
        };
        self.starting = false;
        self.link.health.set(Cause::Starting, None);
        self.status.set_role(Role::Leader);
        self.status.set_leader(Some(LeaderInfo { node: me.node.clone(), url: me.url.clone(), term }));
        self.link.health.set(Cause::Leaderless, None);
        self.status.set_takeover(started.elapsed());
        eprintln!(
            "[preconf-node] cluster: leading (term {term}) after a {} ms takeover",
            started.elapsed().as_millis()
        );

        let why = self.lead_until_deposed(&ledger, &held, &lost).await;
        let _ = renew_stop.send(true);
        match &why {
            Deposed::Refused(LedgerError::Fenced(_)) => _ = self.status.fenced.fetch_add(1, Relaxed),
            Deposed::NotProducing(_) => _ = self.status.stalled.fetch_add(1, Relaxed),
            _ => {}
        }
        if matches!(why, Deposed::Shutdown) {
            // Seal what was pre-confirmed (through the ledger), bounded: an unreachable stream
            // must not hold the shutdown.
            let node = self.node.clone();
            let sealing = tokio::task::spawn_blocking(move || node.stop_building());
            if tokio::time::timeout(Duration::from_secs(3), sealing).await.is_err() {
                ledger.close();
            }
        }
        // Nothing more reaches the stream from this node; the lease goes before the builder
        // stops, which can wait (for a disk with no room) while another node leads.
        ledger.close();
        eprintln!("[preconf-node] cluster: stopped leading (term {term}): {why}");
        if !held.lock().lost {
            self.release(&held, &me).await;
        }
        self.status.set_role(Role::Replica);
        self.status.set_leader(None);
        let node = self.node.clone();
        self.following.resume_after_leading(ledger.last_seq(), term, move || node.step_down()).await;
        match why {
            Deposed::BuilderStopped(_) | Deposed::NotProducing(_) => Err(self.config.lease * 4),
            _ => Ok(()),
        }
    }

    /// Applies the stream to its end, writes this term's first message right after it
    /// (again if another leader's last message slipped in meanwhile), and starts the builder.
    async fn take_over(&mut self, term: u64, held: &Mutex<Held>) -> Result<Arc<StreamLedger>, String> {
        let deadline = Instant::now() + self.config.lease;
        let on_term = self.on_term();
        let ledger = loop {
            if Instant::now() > deadline || held.lock().lost {
                return Err("the lease ran out before this node could write to the stream".into());
            }
            let last = nats::last_seq(&self.link.stream).await.map_err(|e| e.to_string())?;
            self.following.catch_up(&self.link, last, &*on_term).await?;
            let chain = self.node.chain().clone();
            let ledger = StreamLedger::start(
                &self.rt,
                chain.clone(),
                &self.link,
                &self.config.node_id,
                term,
                self.following.applied(),
            );
            let view = chain.view();
            let (number, index) =
                (view.pending_header().number, view.pending.as_ref().map_or(0, |p| p.preconf_index()));
            let start = TermStart {
                term,
                node: self.config.node_id.clone(),
                url: self.config.advertise.clone(),
                unix_ms: preconf_chain::replica::unix_now_ms(),
            };
            let record = Record { kind: Kind::Term, number, index, data: codec::encode_term(number, index, &start) };
            match ledger.append_async(record).await {
                Ok(_) => break ledger,
                Err(LedgerError::Fenced(_)) => ledger.close(), // something landed after `last`: apply it too
                Err(e) => {
                    ledger.close();
                    return Err(e.to_string());
                }
            }
        };
        // The builder's commits come after the follower's: every applied block durable first.
        if let Err(e) = self.following.settle().await {
            ledger.close();
            return Err(format!("cannot store the applied blocks: {e}"));
        }
        let node = self.node.clone();
        let leading = ledger.clone();
        match tokio::task::spawn_blocking(move || node.lead(leading)).await {
            Ok(Ok(())) => Ok(ledger),
            Ok(Err(e)) => {
                ledger.close();
                Err(format!("cannot build: {e}"))
            }
            Err(e) => {
                ledger.close();
                Err(format!("cannot build: {e}"))
            }
        }
    }

    /// Leads until the stream, the lease or a shutdown says otherwise, or until this node
    /// shows it cannot produce: no block sealed within the lease and two block times while
    /// the stream takes its appends (a builder stuck) or its store cannot write, so that a
    /// node that can takes over.
    async fn lead_until_deposed(&mut self, ledger: &StreamLedger, held: &Mutex<Held>, lost: &Notify) -> Deposed {
        let chain = self.node.chain().clone();
        let bound = self.config.lease + Duration::from_millis(chain.config().block_time_ms) * 2;
        let (mut head, mut sealed_at, mut seq_at_seal) =
            (chain.view().head_number(), Instant::now(), ledger.last_seq());
        loop {
            let lease_lost = lost.notified();
            tokio::select! {
                _ = ledger.failed() => return Deposed::Refused(ledger.failure().unwrap_or(LedgerError::Closed)),
                _ = lease_lost => return Deposed::LeaseLost,
                _ = self.stop.changed() => return Deposed::Shutdown,
                _ = tokio::time::sleep(LOOK) => {}
            }
            if held.lock().lost {
                return Deposed::LeaseLost;
            }
            // Stop before anyone else may start: a margin for the time to notice.
            if Instant::now() + LOOK >= held.lock().valid_until {
                return Deposed::LeaseExpired;
            }
            if !self.node.building() {
                return Deposed::BuilderStopped(chain.fault());
            }
            // Only this node's own inability counts: while the stream itself cannot take
            // appends (a NATS server lost, its raft electing), the lease decides, as before.
            let now_head = chain.view().head_number();
            let stream_moves = ledger.last_seq() > seq_at_seal;
            if now_head > head {
                (head, sealed_at, seq_at_seal) = (now_head, Instant::now(), ledger.last_seq());
            } else if sealed_at.elapsed() > bound && (stream_moves || chain.store_fault().is_some()) {
                let why = chain.store_fault().map_or_else(|| "the builder seals nothing".into(), |f| f.to_string());
                return Deposed::NotProducing(format!("no block sealed for {} ms: {why}", bound.as_millis()));
            }
        }
    }

    /// Gives the lease up for anyone ready (keeping its term, so terms never repeat).
    async fn release(&self, held: &Mutex<Held>, me: &LeaseValue) {
        let revision = held.lock().revision;
        let released = LeaseValue { released: true, ..me.clone() };
        if let Err(e) = self.lease.put(revision, &released).await {
            eprintln!("[preconf-node] cluster: could not release the lease: {e}");
        }
    }
}

/// The lease while this node holds it, renewed in the background.
struct Renewal {
    lease: Lease,
    me: LeaseValue,
    held: Arc<Mutex<Held>>,
    lost: Arc<Notify>,
    health: Arc<crate::health::Health>,
}

impl Renewal {
    /// Renews the lease every quarter of its duration until stopped, or until it is lost.
    async fn run(self, duration: Duration, mut stop: watch::Receiver<bool>) {
        loop {
            if wait_or_stop(&mut stop, duration / 4).await {
                return;
            }
            let revision = self.held.lock().revision;
            let sent = Instant::now();
            match tokio::time::timeout(duration / 2, self.lease.put(revision, &self.me)).await {
                Ok(Ok(revision)) => {
                    let mut h = self.held.lock();
                    h.revision = revision;
                    h.valid_until = sent + duration;
                    drop(h);
                    self.health.ok();
                }
                Ok(Err(LeaseError::Lost(_))) => {
                    self.held.lock().lost = true;
                    self.lost.notify_one();
                    return;
                }
                Ok(Err(e)) => self.health.fail(format!("lease renewal failed: {e}")),
                Err(_) => self.health.fail("lease renewal timed out"),
            }
        }
    }
}
