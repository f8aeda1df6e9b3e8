//! preconf-replication: a node's place in a replicated chain, over NATS JetStream.
//!
//! - `--publish`: a static leader streams every pre-confirmation and sealed block (publish.rs).
//! - `--follow`: a static replica applies the stream (follow.rs).
//! - `--cluster`: every node the same; a lease in a key-value bucket names the leader, whose
//!   appends are fenced by the stream's sequence and made before anything is shown
//!   (cluster.rs, lease.rs, ledger.rs).
//!
//! The chain's rules (wire format, what follows what, checks on apply) are in preconf-chain;
//! this crate moves bytes and decides roles, by the rules in rules/ (pure, tested without
//! NATS). It runs on a small tokio runtime of its own,
//! never on a JavaScript event loop.

pub mod cluster;
mod follow;
pub mod health;
mod lease;
mod ledger;
mod nats;
mod publish;
pub mod rules;
pub mod status;

use std::sync::atomic::Ordering;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use preconf_chain::replica::Follower;
use preconf_chain::wire::TermStart;
use preconf_chain::Node;
use tokio::sync::watch;

use cluster::{ClusterConfig, Controller};
use follow::Following;
use health::Health;
use lease::Lease;
use nats::{wait_or_stop, Link};
use publish::{Publishing, RunMarker};
use status::{LeaderInfo, Role, Status};

pub enum Mode {
    /// A static leader, queueing up to this many events while NATS is away.
    Publish {
        queue: usize,
    },
    /// A static replica.
    Follow,
    Cluster(ClusterConfig),
}

pub struct ReplicationConfig {
    pub mode: Mode,
    /// NATS servers (any of them; the client learns the rest of a NATS cluster).
    pub servers: Vec<String>,
    pub stream: String,
    /// NATS unreachable this long: `/health` says so.
    pub nats_timeout: Duration,
    /// Copies JetStream keeps of the stream (and the lease bucket) when this node creates it.
    pub stream_replicas: usize,
}

pub struct Replication {
    rt: Option<tokio::runtime::Runtime>,
    stop: watch::Sender<bool>,
    main: Option<tokio::task::JoinHandle<()>>,
    node: Arc<Node>,
    status: Arc<Status>,
    health: Arc<Health>,
    /// A static leader's, once it builds.
    publishing: Arc<OnceLock<Arc<Publishing>>>,
    following: Option<Following>,
    /// A static leader's: removed by a stop that left every streamed block durable.
    run_marker: Option<RunMarker>,
}

const MARKER_WHAT: &str = "the leader's run marker in the datadir";

impl Replication {
    pub fn start(node: Arc<Node>, config: ReplicationConfig) -> Result<Self, String> {
        let chain = node.chain().clone();
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("preconf-nats")
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?;
        let (stop, stop_rx) = watch::channel(false);
        let servers = config.servers.join(",");
        let (what, role) = match &config.mode {
            Mode::Publish { .. } => (format!("replication: cannot publish to NATS at {servers}"), Role::Leader),
            Mode::Follow => {
                (format!("replica: cannot read stream \"{}\" from NATS at {servers}", config.stream), Role::Replica)
            }
            Mode::Cluster(_) => (format!("cluster: cannot reach NATS at {servers}"), Role::Replica),
        };
        if matches!(config.mode, Mode::Follow) && chain.config().build {
            return Err("a replica must not build blocks (open it with build: false)".into());
        }
        let health = Health::new(chain.clone(), what, config.nats_timeout);
        if matches!(config.mode, Mode::Cluster(_)) {
            health.set(health::Cause::Starting, Some(preconf_chain::chain_state::STARTING.into()));
        }
        let ticker = health.clone();
        let mut tick_stop = stop_rx.clone();
        rt.spawn(async move {
            while !wait_or_stop(&mut tick_stop, Duration::from_millis(250)).await {
                ticker.tick();
            }
        });
        let status = Arc::new(Status::new(role, None));
        let new_follower = || -> Result<Following, String> {
            let (landed, on_landed) = Following::notifier();
            let f = Follower::new(chain.clone(), node.api().submit.clone(), config.stream.clone(), on_landed)
                .map_err(|e| e.to_string())?;
            Ok(Following::new(f, landed))
        };
        let open = {
            let (servers, stream, health) = (config.servers.clone(), config.stream.clone(), health.clone());
            let replicas = config.stream_replicas;
            move |client: &'static str, mut stop: watch::Receiver<bool>| {
                let (servers, stream, health) = (servers.clone(), stream.clone(), health.clone());
                async move { Link::open(&servers, client, &stream, replicas, health, &mut stop).await }
            }
        };
        let publishing: Arc<OnceLock<Arc<Publishing>>> = Arc::new(OnceLock::new());
        let (mut following, mut run_marker) = (None, None);
        let main = match config.mode {
            Mode::Publish { queue } => {
                let marker = RunMarker::new(chain.config().datadir.as_deref());
                let must_read_back = marker.left();
                marker.set().map_err(|e| format!("cannot write {MARKER_WHAT}: {e}"))?;
                run_marker = Some(marker);
                let detail = publishing.clone();
                health.set_detail(move || {
                    let Some(s) = detail.get().map(|p| p.publisher.lock().stats()) else { return String::new() };
                    format!(
                        "; {} events queued, {} dropped (sealed blocks are republished from the store)",
                        s.queued, s.dropped
                    )
                });
                let start = publish::Start {
                    node: node.clone(),
                    open: Box::new(move |stop| Box::pin(open("preconf-node leader", stop))),
                    following: new_follower()?,
                    must_read_back,
                    wait: config.nats_timeout,
                    health: health.clone(),
                    queue,
                    publishing: publishing.clone(),
                };
                rt.spawn(publish::lead(start, stop_rx.clone()))
            }
            Mode::Follow => {
                let f = new_follower()?;
                following = Some(f.clone());
                let stop = stop_rx.clone();
                let on_term: Arc<dyn Fn(TermStart) + Send + Sync> = Arc::new(|_| {});
                rt.spawn(async move {
                    if let Some(link) = open("preconf-node replica", stop.clone()).await {
                        follow::follow(link, f, stop, on_term).await;
                    }
                })
            }
            Mode::Cluster(cluster) => {
                let f = new_follower()?;
                following = Some(f.clone());
                let (node, status, stop) = (node.clone(), status.clone(), stop_rx.clone());
                let handle = rt.handle().clone();
                rt.spawn(async move {
                    let Some(link) = open("preconf-node cluster", stop.clone()).await else { return };
                    let mut wait = stop.clone();
                    let kv = loop {
                        match nats::ensure_lease_bucket(&link.js, &link.name, config.stream_replicas).await {
                            Ok(kv) => break kv,
                            Err(e) => link.health.fail(format!("cannot open the lease bucket: {e}")),
                        }
                        if wait_or_stop(&mut wait, Duration::from_millis(250)).await {
                            return;
                        }
                    };
                    let controller = Controller {
                        node,
                        link,
                        following: f,
                        config: cluster,
                        status,
                        lease: Lease::new(kv),
                        rt: handle,
                        stop,
                        starting: true,
                    };
                    controller.run().await;
                })
            }
        };
        Ok(Self { rt: Some(rt), stop, main: Some(main), node, status, health, publishing, following, run_marker })
    }

    pub fn status(&self) -> &Status {
        &self.status
    }

    /// The stream sequence this node applied last (a replica or a cluster's node).
    pub fn applied(&self) -> Option<u64> {
        self.following.as_ref().map(|f| f.applied())
    }

    /// Calls `done` once a leader other than `not` is known, or with `None` after `within`.
    pub fn on_leader(
        &self,
        within: Duration,
        not: Option<LeaderInfo>,
        done: impl FnOnce(Option<LeaderInfo>) + Send + 'static,
    ) {
        let status = self.status.clone();
        if let Some(rt) = &self.rt {
            rt.spawn(async move { done(status.wait_for_leader(within, not.as_ref()).await) });
        }
    }

    /// Stops: a static leader first seals what it pre-confirmed and publishes it (for up to
    /// 2 s); a cluster's leader seals through its ledger and releases the lease.
    pub fn stop(mut self) {
        if let Some(p) = self.publishing.get() {
            if !self.health.failing() {
                self.node.stop_building();
                let deadline = Instant::now() + Duration::from_secs(2);
                let mut quiet = 0;
                while quiet < 3 && Instant::now() < deadline {
                    std::thread::sleep(Duration::from_millis(20));
                    quiet = if p.queued() == 0 && !p.busy.load(Ordering::Acquire) { quiet + 1 } else { 0 };
                }
                let sealed = p.publisher.lock().stats().sealed;
                let fields = serde_json::json!({ "block": sealed });
                preconf_chain::log::info("replication", &format!("stopped after publishing block {sealed}"), fields);
            }
            // Every block streamed is durable: the next start need not wait for the stream.
            let durable = self.node.chain().store().head().ok().flatten().unwrap_or_default();
            let clean = durable >= p.publisher.lock().stats().sealed;
            if let Some(marker) = self.run_marker.as_ref().filter(|_| clean) {
                if let Err(e) = marker.clear() {
                    let fields = serde_json::json!({ "error": e.to_string() });
                    preconf_chain::log::warn("replication", &format!("cannot remove {MARKER_WHAT}"), fields);
                }
            }
        }
        let _ = self.stop.send(true);
        if let (Some(rt), Some(main)) = (self.rt.take(), self.main.take()) {
            let _ = rt.block_on(async { tokio::time::timeout(Duration::from_secs(6), main).await });
            rt.shutdown_timeout(Duration::from_secs(1));
        }
        // A clean stop leaves every applied block durable (a crash re-reads them instead).
        if let Some(mut follower) =
            self.following.as_ref().and_then(|f| f.follower.try_lock_for(Duration::from_secs(2)))
        {
            if let Err(e) = follower.close() {
                let fields = serde_json::json!({ "error": e.to_string() });
                preconf_chain::log::error("replica", "could not store the applied blocks at shutdown", fields);
            }
        }
    }
}
