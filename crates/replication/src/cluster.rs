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
use preconf_chain::ledger::{LedgerError, Record};
use preconf_chain::wire::{self as codec, Kind, TermStart};
use preconf_chain::Node;
use tokio::runtime::Handle;
use tokio::sync::{watch, Notify};

use crate::follow::{self, Following};
use crate::health::Cause;
use crate::lease::{Lease, LeaseError, LeaseValue, Seen};
use crate::ledger::StreamLedger;
use crate::nats::{self, wait_or_stop, Link};
use crate::rules::election::{self, Campaign, Ended, Fitness, Look};
use crate::rules::term::{self, Deposed, Event, FirstMessage, Leading, Observed, Takeover, Term, LOOK};
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

impl Controller {
    pub async fn run(mut self) {
        let (seen_tx, seen) = watch::channel(Seen::unseen(Instant::now()));
        self.rt.spawn(self.lease.clone().observe(seen_tx, self.config.lease, self.stop.clone()));
        let mut campaign = Campaign::new(self.config.lease, Instant::now());
        loop {
            let Some((term, revision, seen_at)) = self.follow_until_elected(&seen, &campaign).await else { return };
            let ended = self.lead(term, revision, seen_at).await;
            campaign.ended(Instant::now(), ended);
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
        campaign: &Campaign,
    ) -> Option<(u64, u64, Instant)> {
        self.status.set_role(Role::Replica);
        let (follow_stop, follow_rx) = watch::channel(false);
        let task = self.rt.spawn(follow::follow(self.link.clone(), self.following.clone(), follow_rx, self.on_term()));
        let mut looked = Instant::now();
        let elected = loop {
            if wait_or_stop(&mut self.stop, LOOK).await {
                break None;
            }
            if self.starting && looked.elapsed() >= election::START_LOOK {
                looked = Instant::now();
                self.check_started().await;
            }
            let now = seen.borrow().clone();
            let at = Instant::now();
            let holder = campaign.leader(at, &now).cloned();
            self.status.set_leader(holder.as_ref().map(|v| LeaderInfo {
                node: v.node.clone(),
                url: v.url.clone(),
                term: v.term,
            }));
            self.report_leaderless();
            let term = match campaign.look(at, &now) {
                Look::Campaign { term } => term,
                Look::Follow => {
                    // Why a node does not campaign only matters while nobody leads.
                    if holder.is_some() {
                        self.status.set_not_ready(None);
                    }
                    continue;
                }
            };
            if !self.ready().await {
                continue;
            }
            let mine = LeaseValue {
                node: self.config.node_id.clone(),
                url: self.config.advertise.clone(),
                term,
                released: false,
            };
            match self.lease.take(&now, &mine).await {
                Ok(revision) => {
                    self.link.health.ok();
                    break Some((mine.term, revision, Instant::now()));
                }
                Err(LeaseError::Lost(_)) => {} // somebody was faster; the watch (or its check) brings it
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
            if election::caught_up(self.following.applied(), last) {
                self.starting = false;
                self.link.health.set(Cause::Starting, None);
            }
        }
    }

    fn report_leaderless(&self) {
        let reason = election::leaderless(self.status.leaderless_for(), self.config.leader_wait);
        self.link.health.set(Cause::Leaderless, reason);
    }

    /// Whether this node may campaign: healthy, not stopped on a mismatch, and holding
    /// every message the stream has. Why not is kept for `/health`.
    async fn ready(&self) -> bool {
        let chain = self.node.chain();
        let fitness = Fitness {
            stopped: self.following.stopped.load(Relaxed),
            fault: chain.fault().map(|f| f.to_string()).or_else(|| chain.store_fault().map(|f| f.to_string())),
            applied: self.following.applied(),
        };
        let why = match election::unfit(&fitness) {
            Some(why) => Some(why),
            None => {
                let end = nats::last_seq(&self.link.stream).await.map_err(|e| e.to_string());
                election::behind_stream(fitness.applied, end)
            }
        };
        let ready = why.is_none();
        self.status.set_not_ready(why);
        ready
    }

    /// Takes over and leads until deposed; how the term ended. A takeover that could not be
    /// finished releases the lease at once for another node.
    async fn lead(&mut self, term: u64, revision: u64, taken_at: Instant) -> Ended {
        let started = Instant::now();
        self.status.set_role(Role::Candidate);
        self.status.elections.fetch_add(1, Relaxed);
        self.status.term.fetch_max(term, Relaxed);
        let me =
            LeaseValue { node: self.config.node_id.clone(), url: self.config.advertise.clone(), term, released: false };
        let held = Arc::new(Mutex::new(Term::new(self.config.lease, revision, taken_at)));
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
                return Ended::TakeoverFailed;
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
        if why.fenced() {
            self.status.fenced.fetch_add(1, Relaxed);
        }
        if matches!(why, Deposed::NotProducing(_)) {
            self.status.stalled.fetch_add(1, Relaxed);
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
        if !held.lock().lost() {
            self.release(&held, &me).await;
        }
        self.status.set_role(Role::Replica);
        self.status.set_leader(None);
        let node = self.node.clone();
        self.following.resume_after_leading(ledger.last_seq(), term, move || node.step_down()).await;
        why.ended()
    }

    /// Applies the stream to its end, writes this term's first message right after it
    /// (again if another leader's last message slipped in meanwhile), and starts the builder.
    async fn take_over(&mut self, term: u64, held: &Mutex<Term>) -> Result<Arc<StreamLedger>, String> {
        let takeover = Takeover::new(Instant::now(), self.config.lease);
        let on_term = self.on_term();
        let ledger = loop {
            takeover.attempt(Instant::now(), &held.lock())?;
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
            match Takeover::first_message(ledger.append_async(record).await) {
                FirstMessage::Written => break ledger,
                FirstMessage::Again => ledger.close(),
                FirstMessage::GiveUp(why) => {
                    ledger.close();
                    return Err(why);
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
    /// shows it cannot produce (`rules::term::Leading`).
    async fn lead_until_deposed(&mut self, ledger: &StreamLedger, held: &Mutex<Term>, lost: &Notify) -> Deposed {
        let chain = self.node.chain().clone();
        let block_time = Duration::from_millis(chain.config().block_time_ms);
        let mut leading =
            Leading::new(self.config.lease, block_time, Instant::now(), chain.view().head_number(), ledger.last_seq());
        loop {
            let lease_lost = lost.notified();
            let event = tokio::select! {
                _ = ledger.failed() => Event::Refused(ledger.failure().unwrap_or(LedgerError::Closed)),
                _ = lease_lost => Event::LeaseLost,
                _ = self.stop.changed() => Event::Stop,
                _ = tokio::time::sleep(LOOK) => {
                    let building = self.node.building();
                    Event::Look(Observed {
                        now: Instant::now(),
                        building,
                        fault: if building { None } else { chain.fault() },
                        head: chain.view().head_number(),
                        last_seq: ledger.last_seq(),
                        store_fault: chain.store_fault().map(|f| f.to_string()),
                    })
                }
            };
            if let Some(why) = leading.on(event, &held.lock()) {
                return why;
            }
        }
    }

    /// Gives the lease up for anyone ready (keeping its term, so terms never repeat).
    async fn release(&self, held: &Mutex<Term>, me: &LeaseValue) {
        let revision = held.lock().revision();
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
    held: Arc<Mutex<Term>>,
    lost: Arc<Notify>,
    health: Arc<crate::health::Health>,
}

impl Renewal {
    /// Renews the lease every quarter of its duration until stopped, or until it is lost.
    async fn run(self, duration: Duration, mut stop: watch::Receiver<bool>) {
        loop {
            if wait_or_stop(&mut stop, term::renew_every(duration)).await {
                return;
            }
            let revision = self.held.lock().revision();
            let sent = Instant::now();
            match tokio::time::timeout(term::renew_timeout(duration), self.lease.put(revision, &self.me)).await {
                Ok(Ok(revision)) => {
                    self.held.lock().renewed(sent, revision);
                    self.health.ok();
                }
                Ok(Err(LeaseError::Lost(_))) => {
                    self.held.lock().lose();
                    self.lost.notify_one();
                    return;
                }
                Ok(Err(e)) => self.health.fail(format!("lease renewal failed: {e}")),
                Err(_) => self.health.fail("lease renewal timed out"),
            }
        }
    }
}
