//! The leader lease: one key in a JetStream key-value bucket, taken and renewed with
//! compare-and-set on the key's revision. Its value (`LeaseValue`) names the leader, where
//! it takes transactions, and its term; what a node makes of it (who leads, when it lapses)
//! is in `rules::election`.

use std::time::{Duration, Instant};

use async_nats::jetstream::kv::{self, Operation, UpdateErrorKind};
use bytes::Bytes;
use futures_util::StreamExt;
use tokio::sync::watch;

use crate::rules::election;
pub use crate::rules::election::{LeaseValue, Seen};

const KEY: &str = "leader";

#[derive(Clone)]
pub struct Lease {
    kv: kv::Store,
}

#[derive(Debug, thiserror::Error)]
pub enum LeaseError {
    /// Somebody else changed the key first.
    #[error("the lease changed hands (revision {0} is not the newest)")]
    Lost(u64),
    #[error("cannot reach the lease bucket: {0}")]
    Unreachable(String),
}

impl Lease {
    pub fn new(kv: kv::Store) -> Self {
        Self { kv }
    }

    /// Keeps `seen` up to date with the key's revisions until `stop`; restarts its watch
    /// whenever NATS drops it, or when a read of the key finds a revision it did not bring
    /// (`rules::election::watch_quiet_after`).
    pub async fn observe(self, seen: watch::Sender<Seen>, lease: Duration, mut stop: watch::Receiver<bool>) {
        // What the key holds now, before any update: a node that just started knows the
        // lease from here on (a released one may be taken at once, a held one only after a
        // whole duration without renewal).
        loop {
            let entry = tokio::select! {
                e = self.kv.entry(KEY) => e,
                _ = stop.changed() => return,
            };
            match entry {
                Ok(entry) => {
                    seen.send_replace(seen_of(entry));
                    break;
                }
                Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
            }
        }
        let quiet = election::watch_quiet_after(lease);
        loop {
            let watch = tokio::select! {
                w = self.kv.watch_with_history(KEY) => w,
                _ = stop.changed() => return,
            };
            let mut entries = match watch {
                Ok(w) => w,
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(200)).await;
                    continue;
                }
            };
            loop {
                let next = tokio::select! {
                    n = tokio::time::timeout(quiet, entries.next()) => n,
                    _ = stop.changed() => return,
                };
                let Ok(next) = next else {
                    // Quiet: the key read directly says whether the watch still delivers.
                    let read = tokio::select! {
                        e = self.kv.entry(KEY) => e,
                        _ = stop.changed() => return,
                    };
                    let Ok(entry) = read else { continue };
                    let read = seen_of(entry);
                    if !seen.borrow().superseded_by(read.revision) {
                        continue;
                    }
                    eprintln!(
                        "[preconf-node] cluster: the lease watch missed revision {}: watching again",
                        read.revision
                    );
                    seen.send_replace(read);
                    break;
                };
                let Some(Ok(entry)) = next else { break };
                if !seen.borrow().superseded_by(entry.revision) {
                    continue;
                }
                let value = match entry.operation {
                    Operation::Put => serde_json::from_slice::<LeaseValue>(&entry.value).ok(),
                    Operation::Delete | Operation::Purge => None,
                };
                seen.send_replace(Seen { revision: entry.revision, value, at: Instant::now(), read: true });
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Takes the lease if it is still at `seen`'s revision; the new revision on success.
    pub async fn take(&self, seen: &Seen, value: &LeaseValue) -> Result<u64, LeaseError> {
        let bytes = Bytes::from(serde_json::to_vec(value).expect("lease value serializes"));
        if seen.revision == 0 {
            // Anything but a transport failure means the key exists: somebody was first.
            return self.kv.create(KEY, bytes).await.map_err(|e| match e.kind() {
                kv::CreateErrorKind::Publish | kv::CreateErrorKind::Ack => LeaseError::Unreachable(e.to_string()),
                _ => LeaseError::Lost(0),
            });
        }
        self.update(seen.revision, bytes).await
    }

    /// Renews (or, with `released`, gives up) the lease held at `revision`.
    pub async fn put(&self, revision: u64, value: &LeaseValue) -> Result<u64, LeaseError> {
        self.update(revision, Bytes::from(serde_json::to_vec(value).expect("lease value serializes"))).await
    }

    async fn update(&self, revision: u64, bytes: Bytes) -> Result<u64, LeaseError> {
        self.kv.update(KEY, bytes, revision).await.map_err(|e| match e.kind() {
            UpdateErrorKind::WrongLastRevision => LeaseError::Lost(revision),
            _ => LeaseError::Unreachable(e.to_string()),
        })
    }
}

/// The lease as read now: `None` when the key was never written.
fn seen_of(entry: Option<kv::Entry>) -> Seen {
    let now = Instant::now();
    match entry {
        Some(e) if e.operation == Operation::Put => Seen {
            revision: e.revision,
            value: serde_json::from_slice::<LeaseValue>(&e.value).ok(),
            at: now,
            read: true,
        },
        Some(e) => Seen { revision: e.revision, value: None, at: now, read: true },
        None => Seen { read: true, ..Seen::unseen(now) },
    }
}
