//! The static leader (`--publish`): asks the chain's publisher (crates/chain/src/replica/
//! publish.rs) for the next message, publishes it under its message id, and so on. The chain
//! decides what comes next, in stream order; this loop only moves bytes and tells it what
//! the stream holds whenever that may have changed (start, a failed publish). A failed
//! message is not retried as such: after re-reading the stream's newest sealed block, the
//! publisher republishes whatever the stream lacks. The builder never waits for any of it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::RecvTimeoutError;
use std::sync::Arc;
use std::time::Duration;

use async_nats::jetstream::message::PublishMessage;
use parking_lot::Mutex;
use preconf_chain::replica::{Publisher, StreamMark};
use preconf_chain::wire::{self as codec, Kind};
use preconf_chain::Node;
use tokio::sync::{watch, Notify};

use crate::health::Cause;
use crate::nats::{self, wait_or_stop, Link, REQUEST_TIMEOUT};

const RETRY: Duration = Duration::from_millis(250);

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

/// Tells the publisher what the stream holds: its newest sealed block.
async fn sync(link: &Link, p: &Publishing) -> Result<(), String> {
    let last = nats::last_of(&link.stream, &link.name, Kind::Sealed).await.map_err(|e| e.to_string())?;
    let mark = match last {
        None => None,
        Some(data) => {
            let env = codec::peek(&data).map_err(|e| e.to_string())?;
            let hash = codec::peek_sealed_hash(&data).map_err(|e| e.to_string())?;
            Some(StreamMark { number: env.number, hash })
        }
    };
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
