//! `--flashblocks-url`: the WebSocket client (crates/flashblocks `client`, its own thread)
//! feeding the chain's follower (crates/chain `flashblocks`, its own thread); TypeScript
//! only starts and stops them and reads their figures for `/metrics`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::thread::JoinHandle;
use std::time::Duration;

use napi_derive::napi;
use parking_lot::Mutex;
use preconf_chain::flashblocks::{self as follow, FollowStats, FollowerHandle, Input};
use preconf_flashblocks::client::{self, ClientConfig, ClientStats};

use crate::metrics::NativeHistogram;
use crate::NativeNode;

#[napi(object)]
pub struct FlashblocksFollowOptions {
    /// The sequencer's flashblocks endpoint: `ws://host:port/` (JSON) or `…/brotli`.
    pub url: String,
    /// A stream silent this long is connected again.
    pub stale_after_ms: u32,
    /// The longest a flashblock waits for its canonical parent before it is dropped.
    pub max_wait_ms: u32,
}

#[napi(object)]
pub struct FlashblocksFollowStatus {
    pub connected: bool,
    pub frames: f64,
    pub undecodable: f64,
    pub reconnects: f64,
    /// Reconnections because the stream went silent.
    pub stale: f64,
    pub applied: f64,
    pub dropped: f64,
    pub mismatches: f64,
    pub promoted: f64,
    /// Canonical blocks newPayload took from the follower instead of executing them again.
    pub reused: f64,
    /// The block shown as pending from flashblocks (0: none; pending reads the head).
    pub pending_number: f64,
    /// Seconds from a flashblock's arrival to its state shown as pending.
    pub lag_seconds: NativeHistogram,
    /// Seconds of one flashblock's execution.
    pub exec_seconds: NativeHistogram,
}

struct Running {
    stop: Arc<AtomicBool>,
    client: Option<JoinHandle<()>>,
    follower: Option<FollowerHandle>,
    client_stats: Arc<ClientStats>,
    follow_stats: Arc<FollowStats>,
}

fn running() -> &'static Mutex<HashMap<u32, Running>> {
    static RUNNING: OnceLock<Mutex<HashMap<u32, Running>>> = OnceLock::new();
    RUNNING.get_or_init(Default::default)
}

/// Stops the client and the follower (at node close).
pub(crate) fn stop(handle: u32) {
    let r = running().lock().remove(&handle);
    if let Some(mut r) = r {
        r.stop.store(true, Ordering::Release);
        if let Some(f) = r.follower.take() {
            f.stop();
        }
        if let Some(c) = r.client.take() {
            let _ = c.join();
        }
    }
}

#[napi]
impl NativeNode {
    /// Follows a sequencer's flashblocks: the pending block is theirs, executed here.
    #[napi]
    pub fn flashblocks_follow_start(&self, options: FlashblocksFollowOptions) -> napi::Result<()> {
        let mut map = running().lock();
        if map.contains_key(&self.handle) {
            return Err(napi::Error::from_reason("this node already follows flashblocks"));
        }
        let chain = self.node.chain().clone();
        if !chain.config().follow_flashblocks {
            return Err(napi::Error::from_reason("the node was opened without followFlashblocks"));
        }
        if chain.config().build {
            // Two writers of the pending block: the builder's would be overwritten.
            return Err(napi::Error::from_reason(
                "a node that builds blocks cannot follow flashblocks (give --follow or --no-build)",
            ));
        }
        let follow_stats = Arc::new(FollowStats::default());
        let max_wait = Duration::from_millis(options.max_wait_ms.max(1) as u64);
        let follower = follow::spawn(chain, max_wait, follow_stats.clone())
            .map_err(|e| napi::Error::from_reason(e.to_string()))?;
        let frames = follower.sender();
        let stop = Arc::new(AtomicBool::new(false));
        let client_stats = Arc::new(ClientStats::default());
        let config =
            ClientConfig { url: options.url, stale_after: Duration::from_millis(options.stale_after_ms.max(1) as u64) };
        let (s, cs) = (stop.clone(), client_stats.clone());
        let client = std::thread::Builder::new()
            .name("preconf-fb-client".into())
            .spawn(move || {
                client::run(&config, &s, &cs, |fb, at| frames.send(Input::Frame(Box::new(fb), at)).is_ok());
            })
            .map_err(|e| napi::Error::from_reason(e.to_string()))?;
        map.insert(
            self.handle,
            Running { stop, client: Some(client), follower: Some(follower), client_stats, follow_stats },
        );
        Ok(())
    }

    /// The follower's figures; `null` when this node does not follow flashblocks.
    #[napi]
    pub fn flashblocks_follow_status(&self) -> Option<FlashblocksFollowStatus> {
        let map = running().lock();
        let r = map.get(&self.handle)?;
        let (c, f) = (&r.client_stats, &r.follow_stats);
        let n = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed) as f64;
        Some(FlashblocksFollowStatus {
            connected: c.connected.load(Ordering::Relaxed) == 1,
            frames: n(&c.frames),
            undecodable: n(&c.undecodable),
            reconnects: n(&c.reconnects),
            stale: n(&c.stale),
            applied: n(&f.applied),
            dropped: n(&f.dropped),
            mismatches: n(&f.mismatches),
            promoted: n(&f.promoted),
            reused: n(&f.reused),
            pending_number: n(&f.pending_number),
            lag_seconds: f.lag.snapshot().into(),
            exec_seconds: f.exec.snapshot().into(),
        })
    }
}
