//! The static leader (`--publish`): asks the chain's publisher (crates/chain/src/replica/
//! publish.rs) for the next message, publishes it under its message id, and so on. The chain
//! decides what comes next, in stream order; this loop only moves bytes and tells it what
//! the stream holds whenever that may have changed (start, a failed publish). A failed
//! message is not retried as such: after re-reading the stream's newest sealed block, the
//! publisher republishes whatever the stream lacks. The builder never waits for any of it.
//!
//! Sealed blocks are streamed before they are durable (replicas show a block as soon as
//! the leader seals it, not a commit later), so the stream can hold blocks a crash kept from
//! the store: the leader reads the stream back before it builds (`lead`).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::RecvTimeoutError;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use async_nats::jetstream::message::PublishMessage;
use futures_util::future::BoxFuture;
use parking_lot::Mutex;
use preconf_chain::replica::{Publisher, StreamMark};

use preconf_chain::Node;
use tokio::sync::{watch, Notify};

use crate::follow::{self, Following};
use crate::health::{Cause, Health};
use crate::nats::{self, wait_or_stop, Link, REQUEST_TIMEOUT};

const RETRY: Duration = Duration::from_millis(250);
/// The file that says a leader's run did not stop cleanly (see `RunMarker`).
const MARKER: &str = "publishing.unclean";

pub struct Publishing {
    pub publisher: Arc<Mutex<Publisher>>,
    ready: Arc<Notify>,
    /// A publish is on its way (a shutdown waits for it).
    pub busy: Arc<AtomicBool>,
}

impl Publishing {
    /// The publisher, fed with the chain's events on a thread of its own until `stop`.
    pub fn start(node: &Node, queue: usize, stop: watch::Receiver<bool>) -> Self {
        let chain = node.chain().clone();
        let build = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1);
        let publisher = Arc::new(Mutex::new(Publisher::new(chain.clone(), build, queue)));
        let ready = Arc::new(Notify::new());
        let events = chain.events().subscribe();
        let (feed, wake) = (publisher.clone(), ready.clone());
        std::thread::Builder::new()
            .name("preconf-publish-events".into())
            .spawn(move || loop {
                match events.recv_timeout(Duration::from_millis(200)) {
                    Ok(e) => {
                        feed.lock().on_event(e);
                        wake.notify_one();
                    }
                    Err(RecvTimeoutError::Timeout) if !*stop.borrow() => {}
                    Err(_) => return,
                }
            })
            .expect("spawn the publisher's event thread");
        Self { publisher, ready, busy: Arc::new(AtomicBool::new(false)) }
    }

    pub fn queued(&self) -> u64 {
        self.publisher.lock().stats().queued
    }
}

/// Whether a leader's last run may have streamed blocks its store lacks: a file in the
/// datadir that exists while the leader runs, removed by a stop that left every streamed
/// block durable. Without a datadir there is nothing to come back to.
pub struct RunMarker(Option<PathBuf>);

impl RunMarker {
    pub fn new(datadir: Option<&Path>) -> Self {
        Self(datadir.map(|d| d.join(MARKER)))
    }

    /// The last run did not stop cleanly.
    pub fn left(&self) -> bool {
        self.0.as_ref().is_some_and(|p| p.exists())
    }

    /// Written (and synced) before anything is streamed.
    pub fn set(&self) -> std::io::Result<()> {
        let Some(path) = &self.0 else { return Ok(()) };
        let text = "a --publish leader runs (or was killed) on this datadir: \
                    its next start reads the stream back before it builds\n";
        let mut file = std::fs::File::create(path)?;
        std::io::Write::write_all(&mut file, text.as_bytes())?;
        file.sync_all()?;
        sync_dir(path)
    }

    pub fn clear(&self) -> std::io::Result<()> {
        let Some(path) = &self.0 else { return Ok(()) };
        std::fs::remove_file(path)?;
        sync_dir(path)
    }
}

fn sync_dir(path: &Path) -> std::io::Result<()> {
    match path.parent() {
        Some(dir) => std::fs::File::open(dir)?.sync_all(),
        None => Ok(()),
    }
}

pub type OpenLink = Box<dyn Fn(watch::Receiver<bool>) -> BoxFuture<'static, Option<Link>> + Send + Sync>;

/// How a static leader starts.
pub struct Start {
    pub node: Arc<Node>,
    pub open: OpenLink,
    /// A follower for reading the stream back (dropped once done).
    pub following: Following,
    /// The last run did not stop cleanly: wait for the stream however long it takes.
    pub must_read_back: bool,
    /// Otherwise, how long to wait for NATS before building without it.
    pub wait: Duration,
    pub health: Arc<Health>,
    /// Events the publisher queues while NATS is away (`--publish-queue`).
    pub queue: usize,
    /// Where the publisher goes once the builder runs (a shutdown finds it there).
    pub publishing: Arc<OnceLock<Arc<Publishing>>>,
}

/// A static leader: reads the stream back (what it holds about blocks after the store's
/// head), starts the builder, and publishes until `stop`. Once NATS answered, the read-back
/// is finished before anything is built, however long it takes: a block built beside one
/// the stream holds would fork the replicas.
pub async fn lead(start: Start, mut stop: watch::Receiver<bool>) {
    let Start { node, open, following, mut must_read_back, wait, health, queue, publishing } = start;
    let began = Instant::now();
    let mut link: Option<Link> = None;
    loop {
        if link.is_none() {
            link = match must_read_back {
                true => open(stop.clone()).await,
                false => {
                    let left = wait.saturating_sub(began.elapsed());
                    tokio::time::timeout(left, open(stop.clone())).await.ok().flatten()
                }
            };
        }
        if *stop.borrow() {
            return;
        }
        if let Some(l) = &link {
            must_read_back = true;
            match follow::read_back(l, &following).await {
                Ok(blocks) => {
                    if blocks > 0 {
                        let head = node.chain().view().head_number();
                        let message = format!("read {blocks} sealed blocks back from the stream before building");
                        let fields = serde_json::json!({ "blocks": blocks, "head": head });
                        preconf_chain::log::info("replication", &message, fields);
                    }
                    health.set(Cause::Stream, None);
                    break;
                }
                Err(e) => health.set(Cause::Stream, Some(format!("leader: cannot read the stream back: {e}"))),
            }
        } else if began.elapsed() >= wait {
            let message =
                "building without reading the stream back: NATS did not answer (no earlier run left blocks in the stream that this store lacks)";
            preconf_chain::log::warn(
                "replication",
                message,
                serde_json::json!({ "waited_ms": wait.as_millis() as u64 }),
            );
            break;
        }
        if wait_or_stop(&mut stop, RETRY).await {
            return;
        }
    }
    drop(following);
    // Subscribed after the read-back (the stream has what it applied), before the builder.
    let p = Arc::new(Publishing::start(&node, queue, stop.clone()));
    if let Err(e) = node.start_building() {
        health.set(Cause::Stream, Some(format!("leader: cannot start building: {e}")));
        return;
    }
    let _ = publishing.set(p.clone());
    health.set(Cause::Starting, None);
    let link = match link {
        Some(l) => l,
        None => match open(stop.clone()).await {
            Some(l) => l,
            None => return,
        },
    };
    publish(link, p, stop).await;
}

/// Publishes until `stop`.
pub async fn publish(link: Link, p: Arc<Publishing>, mut stop: watch::Receiver<bool>) {
    let mut resync = true;
    loop {
        if *stop.borrow() {
            return;
        }
        if resync {
            match sync(&link, &p).await {
                Ok(()) => resync = false,
                Err(e) => {
                    link.health.fail(e);
                    if wait_or_stop(&mut stop, RETRY).await {
                        return;
                    }
                    continue;
                }
            }
        }
        let next = p.publisher.lock().next_publication();
        let publication = match next {
            Ok(Some(publication)) => publication,
            Ok(None) => {
                tokio::select! {
                    _ = p.ready.notified() => {}
                    _ = tokio::time::sleep(Duration::from_millis(200)) => {}
                    _ = stop.changed() => {}
                }
                continue;
            }
            Err(e) => {
                // The stream lacks a block this node cannot republish.
                link.health.set(Cause::Stream, Some(format!("replication: {e}")));
                if wait_or_stop(&mut stop, Duration::from_secs(1)).await {
                    return;
                }
                resync = true;
                continue;
            }
        };
        p.busy.store(true, Ordering::Release);
        let message = PublishMessage::build().payload(publication.data.into()).message_id(&publication.id);
        let sent = async {
            let ack = link.js.send_publish(nats::subject(&link.name, publication.kind), message).await?;
            ack.await
        };
        match tokio::time::timeout(REQUEST_TIMEOUT, sent).await {
            Ok(Ok(_)) => link.health.ok(),
            Ok(Err(e)) => {
                link.health.fail(e);
                resync = true;
            }
            Err(_) => {
                link.health.fail("publish timed out");
                resync = true;
            }
        }
        p.busy.store(false, Ordering::Release);
        if resync && wait_or_stop(&mut stop, RETRY).await {
            return;
        }
    }
}

/// Tells the publisher what the stream holds: its newest sealed block, or the block its
/// last rewind went back to.
async fn sync(link: &Link, p: &Publishing) -> Result<(), String> {
    let last = nats::last_head(&link.stream, &link.name).await?;
    let mark = last.map(|(_, head)| StreamMark { number: head.number, hash: head.hash });
    let reset = p.publisher.lock().reset(mark);
    match reset {
        Ok(()) => {
            link.health.set(Cause::Stream, None);
            Ok(())
        }
        Err(e) => {
            link.health.set(Cause::Stream, Some(format!("replication: {e}")));
            Err(e.to_string())
        }
    }
}
