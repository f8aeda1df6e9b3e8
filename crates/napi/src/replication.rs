//! Replication through the addon: TypeScript only starts and stops it and asks where it
//! stands (for `/health`, `/metrics` and forwarding writes to the leader); the NATS client,
//! the roles and the lease run in Rust (crates/replication), off every event loop.

use std::collections::HashMap;
use std::sync::OnceLock;
use std::time::Duration;

use napi::bindgen_prelude::PromiseRaw;
use napi::Env;
use napi_derive::napi;
use parking_lot::Mutex;
use preconf_replication::cluster::ClusterConfig;
use preconf_replication::status::LeaderInfo;
use preconf_replication::{Mode, Replication, ReplicationConfig};

use crate::work::typed;
use crate::NativeNode;

/// A promise settled from another thread.
type Deferred<T> = napi::JsDeferred<T, Box<dyn FnOnce(Env) -> napi::Result<T> + Send>>;

/// What a node does in replication.
#[napi(string_enum = "camelCase")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplicationMode {
    /// `--publish`: a static leader.
    Publish,
    /// `--follow`: a static replica.
    Follow,
    /// `--cluster`: the lease decides.
    Cluster,
}

#[napi(object)]
pub struct ReplicationOptions {
    pub mode: ReplicationMode,
    /// NATS server URLs.
    pub servers: Vec<String>,
    pub stream: String,
    /// NATS unreachable this long: `/health` answers 503.
    pub nats_timeout_ms: u32,
    /// Events a static leader queues while NATS is away.
    pub queue: Option<u32>,
    /// Copies JetStream keeps of a stream this node creates (default: 3 in a cluster, else 1;
    /// fewer when the NATS deployment has fewer servers).
    pub stream_replicas: Option<u32>,
    /// A cluster node's name (default: its advertised URL).
    pub node_id: Option<String>,
    /// Where a cluster node takes forwarded transactions.
    pub advertise: Option<String>,
    pub lease_ms: Option<u32>,
    /// How long a cluster may be without a leader before `/health` answers 503.
    pub leader_wait_ms: Option<u32>,
}

#[napi(object)]
#[derive(Clone)]
pub struct LeaderRef {
    pub node: String,
    pub url: String,
    pub term: i64,
}

impl From<LeaderInfo> for LeaderRef {
    fn from(l: LeaderInfo) -> Self {
        Self { node: l.node, url: l.url, term: l.term as i64 }
    }
}

#[napi(object)]
pub struct ReplicationStatus {
    /// `leader`, `replica` or `candidate`.
    pub role: String,
    pub leader: Option<LeaderRef>,
    /// The newest term this node knows of.
    pub term: i64,
    /// How long this node has known of no leader (absent while it knows one).
    pub leaderless_ms: Option<f64>,
    pub leaderless_total_ms: f64,
    pub elections: i64,
    pub fenced: i64,
    /// Leases given up because this node sealed nothing within the bound.
    pub stalled: i64,
    pub last_takeover_ms: Option<f64>,
    /// Why this node would not campaign.
    pub not_ready: Option<String>,
    /// The stream sequence applied last.
    pub applied: Option<i64>,
}

fn running() -> &'static Mutex<HashMap<u32, Replication>> {
    static RUNNING: OnceLock<Mutex<HashMap<u32, Replication>>> = OnceLock::new();
    RUNNING.get_or_init(Default::default)
}

/// Stops whatever replication the node runs (blocking; seals and publishes first).
pub(crate) fn stop(handle: u32) {
    let r = running().lock().remove(&handle);
    if let Some(r) = r {
        r.stop();
    }
}

#[napi]
impl NativeNode {
    /// Starts publishing, following or clustering as `options` say.
    #[napi]
    pub fn replication_start(&self, options: ReplicationOptions) -> napi::Result<()> {
        let mut map = running().lock();
        if map.contains_key(&self.handle) {
            return Err(napi::Error::from_reason("replication already runs on this node"));
        }
        let cluster = options.mode == ReplicationMode::Cluster;
        let mode = match options.mode {
            ReplicationMode::Publish => Mode::Publish { queue: options.queue.unwrap_or(1024).max(1) as usize },
            ReplicationMode::Follow => Mode::Follow,
            ReplicationMode::Cluster => {
                let advertise = options
                    .advertise
                    .clone()
                    .ok_or_else(|| napi::Error::from_reason("a cluster node needs its advertised URL"))?;
                Mode::Cluster(ClusterConfig {
                    node_id: options.node_id.clone().unwrap_or_else(|| advertise.clone()),
                    advertise,
                    lease: Duration::from_millis(options.lease_ms.unwrap_or(2000).max(100) as u64),
                    leader_wait: Duration::from_millis(options.leader_wait_ms.unwrap_or(3000) as u64),
                })
            }
        };
        let config = ReplicationConfig {
            mode,
            servers: options.servers,
            stream: options.stream,
            nats_timeout: Duration::from_millis(options.nats_timeout_ms as u64),
            stream_replicas: options.stream_replicas.map_or(if cluster { 3 } else { 1 }, |r| r as usize),
        };
        let r = Replication::start(self.node.clone(), config).map_err(napi::Error::from_reason)?;
        map.insert(self.handle, r);
        Ok(())
    }

    /// Stops replication; resolves once a leader has sealed and published what it showed.
    #[napi]
    pub fn replication_stop<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, ()>> {
        let (deferred, promise): (Deferred<()>, _) = env.create_deferred()?;
        let handle = self.handle;
        std::thread::Builder::new()
            .name("preconf-replication-stop".into())
            .spawn(move || {
                stop(handle);
                deferred.resolve(Box::new(|_| Ok(())));
            })
            .map_err(|e| napi::Error::from_reason(e.to_string()))?;
        Ok(typed(env, promise))
    }

    /// Where this node stands in replication; `null` when it does not replicate.
    #[napi]
    pub fn replication_status(&self) -> Option<ReplicationStatus> {
        let map = running().lock();
        let r = map.get(&self.handle)?;
        let s = r.status();
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        use std::sync::atomic::Ordering::Relaxed;
        Some(ReplicationStatus {
            role: s.role().as_str().to_string(),
            leader: s.leader().map(Into::into),
            term: s.term.load(Relaxed) as i64,
            leaderless_ms: s.leaderless_for().map(ms),
            leaderless_total_ms: ms(s.leaderless_total()),
            elections: s.elections.load(Relaxed) as i64,
            fenced: s.fenced.load(Relaxed) as i64,
            stalled: s.stalled.load(Relaxed) as i64,
            last_takeover_ms: s.last_takeover().map(ms),
            not_ready: s.not_ready(),
            applied: r.applied().map(|a| a as i64),
        })
    }

    /// Resolves with the cluster's leader once one other than the one of term `notTerm`
    /// is known, or with `null` after `withinMs`.
    #[napi]
    pub fn wait_for_leader<'env>(
        &self,
        env: &'env Env,
        within_ms: u32,
        not_term: Option<i64>,
    ) -> napi::Result<PromiseRaw<'env, Option<LeaderRef>>> {
        let (deferred, promise): (Deferred<Option<LeaderRef>>, _) = env.create_deferred()?;
        let map = running().lock();
        let Some(r) = map.get(&self.handle) else {
            deferred.resolve(Box::new(|_| Ok(None)));
            return Ok(typed(env, promise));
        };
        let not = not_term.and_then(|t| r.status().leader().filter(|l| l.term as i64 == t));
        r.on_leader(Duration::from_millis(within_ms as u64), not, move |leader| {
            deferred.resolve(Box::new(move |_| Ok(leader.map(Into::into))));
        });
        Ok(typed(env, promise))
    }
}
