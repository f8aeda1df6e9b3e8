//! Following the stream: reads it in order from where this node stands and hands every
//! message to the chain's follower (crates/chain/src/replica/apply.rs), which applies it and
//! says what it did. The position is the JetStream sequence: the chain stores the sequence
//! of each sealed block with the block, so a restart resumes after it; a datadir without one
//! (fresh, or copied from another node) is placed by looking its head up in the stream. A
//! message that is not the next one is never skipped: the stream is read again from the one
//! that is (`rules::catch_up`). What a message may follow and the checks on apply are the
//! chain's; here is only the reading.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use async_nats::jetstream::consumer::{pull::OrderedConfig, DeliverPolicy};
use futures_util::StreamExt;
use parking_lot::Mutex;
use preconf_chain::replica::{Applied, ApplyError, Follower};
use preconf_chain::wire::{self as codec, Kind, TermStart};
use preconf_chain::{ChainError, InternalError};
use tokio::sync::{watch, Notify};

use crate::health::Cause;
use crate::nats::{self, wait_or_stop, Link};
use crate::rules::catch_up::{self, Behind, Delivery, GapReport, Gaps, Reading};

const RETRY: Duration = Duration::from_millis(250);

/// The chain's follower and what the reader knows of it, shared with a cluster's controller.
#[derive(Clone)]
pub struct Following {
    pub follower: Arc<Mutex<Follower>>,
    /// Sequence of the last message applied.
    pub applied: Arc<AtomicU64>,
    /// Stopped for good on a block that does not match.
    pub stopped: Arc<AtomicBool>,
    /// Where the next reading starts (`None`: look the head up first).
    next: Arc<Mutex<Option<u64>>>,
    /// Notified by the follower's committer thread when a commit landed.
    landed: Arc<Notify>,
}

impl Following {
    /// A follower whose committer notifies `landed` (`Follower::new`'s `on_landed`).
    pub fn new(follower: Follower, landed: Arc<Notify>) -> Self {
        let applied = follower.last_seq();
        Self {
            follower: Arc::new(Mutex::new(follower)),
            applied: Arc::new(AtomicU64::new(applied)),
            stopped: Arc::new(AtomicBool::new(false)),
            next: Arc::new(Mutex::new(None)),
            landed,
        }
    }

    /// A notifier to hand to `Follower::new` and then to `new`.
    pub fn notifier() -> (Arc<Notify>, impl Fn() + Send + 'static) {
        let landed = Arc::new(Notify::new());
        let notify = landed.clone();
        (landed, move || notify.notify_one())
    }

    /// Shows the commits that landed (`safe` moves), on a blocking thread.
    pub async fn land(&self) -> Result<(), ChainError> {
        self.blocking("landing", |f| f.land()).await?
    }

    /// Waits until every applied block is durable: before this node builds on them (the
    /// builder's own commits must come after them).
    pub async fn settle(&self) -> Result<(), ChainError> {
        self.blocking("settling", |f| f.settle()).await?
    }

    /// Runs `work` on the follower on a blocking thread (it applies and waits for the
    /// disk); a panic there comes back as an internal error.
    async fn blocking<T: Send + 'static>(
        &self,
        what: &'static str,
        work: impl FnOnce(&mut Follower) -> T + Send + 'static,
    ) -> Result<T, ChainError> {
        let follower = self.follower.clone();
        tokio::task::spawn_blocking(move || work(&mut follower.lock()))
            .await
            .map_err(|e| InternalError::Panicked { what, message: e.to_string() }.into())
    }

    /// After this node led up to `last_seq` in `term`: reading goes on right after it, but
    /// nothing is applied before `step_down` has run (it can wait for a disk with no room
    /// for the blocks the builder sealed). Returns once the follower is held for it.
    pub async fn resume_after_leading(&self, last_seq: u64, term: u64, step_down: impl FnOnce() + Send + 'static) {
        self.applied.store(last_seq, Ordering::Release);
        *self.next.lock() = Some(last_seq + 1);
        let follower = self.follower.clone();
        let (held_tx, held) = tokio::sync::oneshot::channel();
        tokio::task::spawn_blocking(move || {
            let mut f = follower.lock();
            let _ = held_tx.send(());
            step_down();
            f.resume_after_leading(last_seq, term);
        });
        let _ = held.await;
    }

    pub fn applied(&self) -> u64 {
        self.applied.load(Ordering::Acquire)
    }

    /// Applies one message on a blocking thread; what the follower said.
    pub async fn apply(&self, seq: u64, data: bytes::Bytes) -> Result<Applied, ApplyError> {
        let r = self.blocking("apply", move |f| f.apply(seq, &data)).await.unwrap_or_else(|e| Err(e.into()));
        match &r {
            Ok(_) => {
                self.applied.fetch_max(seq, Ordering::AcqRel);
            }
            Err(ApplyError::Stopped { .. }) => self.stopped.store(true, Ordering::Release),
            Err(_) => {}
        }
        r
    }

    /// Applies the stream's messages after the last applied one, up to `upto`, one read at a
    /// time (a candidate catching up to the end before it leads).
    pub async fn catch_up(
        &self,
        link: &Link,
        upto: u64,
        on_term: &(dyn Fn(TermStart) + Send + Sync),
    ) -> Result<(), String> {
        while let Some(seq) = catch_up::next_to_apply(self.applied(), upto) {
            let Some((data, _)) = nats::message_at(&link.stream, seq).await.map_err(|e| e.to_string())? else {
                return Err(format!("stream message {seq} is missing"));
            };
            match self.apply(seq, data).await {
                Ok(Applied::Term(t)) => on_term(t),
                Ok(_) => {}
                Err(e) => return Err(e.to_string()),
            }
        }
        Ok(())
    }
}

/// A static leader's start: applies what the stream holds about blocks after this node's
/// head (sealed blocks it streamed before a crash kept them from its store, and the block it
/// was building), and waits until they are durable. Returns how many blocks it read back.
pub async fn read_back(link: &Link, f: &Following) -> Result<u64, String> {
    let head = f.follower.lock().head();
    let from = locate(link, f).await?;
    let last = nats::last_seq(&link.stream).await.map_err(|e| e.to_string())?;
    f.follower.lock().read_from(from);
    f.applied.store(from.saturating_sub(1), Ordering::Release);
    f.catch_up(link, last, &|_| {}).await?;
    f.settle().await.map_err(|e| format!("cannot store the blocks read back: {e}"))?;
    Ok(f.follower.lock().head().saturating_sub(head))
}

/// Follows the stream until `stop` (or for good, once the follower stopped on a mismatch).
pub async fn follow(
    link: Link,
    f: Following,
    mut stop: watch::Receiver<bool>,
    on_term: Arc<dyn Fn(TermStart) + Send + Sync>,
) {
    let mut gaps = Gaps::default();
    while !*stop.borrow() && !f.stopped.load(Ordering::Acquire) {
        let next = *f.next.lock();
        let from = match next {
            Some(n) => Ok(n),
            None => locate(&link, &f).await,
        };
        let from = match from {
            Ok(n) => n,
            Err(e) => {
                link.health.fail(e);
                if wait_or_stop(&mut stop, RETRY).await {
                    return;
                }
                continue;
            }
        };
        *f.next.lock() = Some(from);
        match read(&link, &f, from, &mut stop, &*on_term).await {
            Ok(()) => {}
            Err(Reread::Gap(expected)) => {
                let what = format!("stream gap: reading again from message {expected}");
                match gaps.met(expected) {
                    GapReport::Fail(times) => {
                        link.health.fail(format!("{what} ({times} times: is it deleted from the stream?)"))
                    }
                    GapReport::Warn => preconf_chain::log::warn("replica", &what, serde_json::json!({})),
                }
                *f.next.lock() = Some(expected);
            }
            Err(Reread::Failed(e)) => {
                link.health.fail(e);
                if wait_or_stop(&mut stop, RETRY).await {
                    return;
                }
            }
        }
    }
}

enum Reread {
    Gap(u64),
    Failed(String),
}

/// Reads from `from` in order until `stop` or something to re-read from.
async fn read(
    link: &Link,
    f: &Following,
    from: u64,
    stop: &mut watch::Receiver<bool>,
    on_term: &(dyn Fn(TermStart) + Send + Sync),
) -> Result<(), Reread> {
    let config =
        OrderedConfig { deliver_policy: DeliverPolicy::ByStartSequence { start_sequence: from }, ..Default::default() };
    let consumer = link.stream.create_consumer(config).await.map_err(|e| Reread::Failed(e.to_string()))?;
    let mut messages = consumer.messages().await.map_err(|e| Reread::Failed(e.to_string()))?;
    link.health.ok();
    let mut reading = Reading::from(from);
    loop {
        let m = tokio::select! {
            m = messages.next() => m,
            _ = stop.changed() => return Ok(()),
            // A commit landed while no message came: show it (`safe` moves) now.
            _ = f.landed.notified() => {
                f.land().await.map_err(|e| Reread::Failed(format!("cannot show a landed commit: {e}")))?;
                continue;
            }
        };
        let m = match m {
            Some(Ok(m)) => m,
            Some(Err(e)) => return Err(Reread::Failed(e.to_string())),
            None => return Err(Reread::Failed("the stream's consumer ended".into())),
        };
        let (seq, pending) = match m.info() {
            Ok(i) => (i.stream_sequence, i.pending),
            Err(e) => return Err(Reread::Failed(e.to_string())),
        };
        match reading.delivered(seq) {
            Delivery::Duplicate => continue,
            Delivery::Gap(next) => return Err(Reread::Gap(next)),
            Delivery::Apply => {}
        }
        match f.apply(seq, m.payload.clone()).await {
            Ok(applied) => {
                reading.applied(seq);
                *f.next.lock() = Some(reading.next());
                link.health.ok();
                behind(link, pending, &applied);
                if let Applied::Term(t) = applied {
                    on_term(t);
                }
            }
            Err(ApplyError::Gap { expected, .. }) => return Err(Reread::Gap(expected)),
            Err(ApplyError::Stopped { .. }) => return Ok(()),
            Err(ApplyError::Chain(e)) => return Err(Reread::Failed(format!("cannot apply stream message {seq}: {e}"))),
        }
    }
}

fn behind(link: &Link, pending: u64, applied: &Applied) {
    match catch_up::behind(pending) {
        Behind::Degraded => {
            let at = match applied {
                Applied::Sealed { number } | Applied::Pending { number, .. } | Applied::Rewound { number, .. } => {
                    number.to_string()
                }
                _ => "?".into(),
            };
            let why = format!("replica: catching up, {pending} stream messages behind (at block {at})");
            link.health.set(Cause::Behind, Some(why));
        }
        Behind::Clear => link.health.set(Cause::Behind, None),
        Behind::Unchanged => {}
    }
}

/// The first sequence to read: after the stored position when the stream still holds that
/// block there, else the first message about a block after the head.
async fn locate(link: &Link, f: &Following) -> Result<u64, String> {
    let (position, head, head_hash) = {
        let follower = f.follower.lock();
        (follower.position(), follower.head(), follower.head_hash())
    };
    let peek = |data: &[u8]| codec::peek(data).map_err(|e| e.to_string());
    if let Some(seq) = position {
        if let Some((data, _)) = nats::message_at(&link.stream, seq).await.map_err(|e| e.to_string())? {
            let at = codec::peek_head(&data).map_err(|e| e.to_string())?;
            if at.is_some_and(|at| at.number == head && at.hash == head_hash) {
                let fields = serde_json::json!({ "stream": link.name, "seq": seq, "block": head });
                let message = format!("resuming stream {} after message {seq} (block {head})", link.name);
                preconf_chain::log::info("replica", &message, fields);
                // From the head's own message: it also brings the block opened with it.
                return Ok(seq);
            }
        }
        let message = format!("stream message {seq} is not this replica's block {head} any more; looking the head up");
        preconf_chain::log::warn("replica", &message, serde_json::json!({ "seq": seq, "block": head }));
    }
    let info = link.stream.get_info().await.map_err(|e| e.to_string())?;
    let (first, last) = (info.state.first_sequence, info.state.last_sequence);
    if info.state.messages == 0 {
        return Ok(last + 1);
    }
    let number_at = |seq: u64| async move {
        match nats::message_at(&link.stream, seq).await.map_err(|e| e.to_string())? {
            Some((data, _)) => Ok(peek(&data)?.number),
            None => Err(format!("stream message {seq} is missing (deleted from the stream?)")),
        }
    };
    let first_block = number_at(first).await?;
    if first_block > head + 1 {
        return Err(format!(
            "the stream starts at block {first_block} (message {first}) but this replica's head is block {head}: \
             start it from a copy of a datadir at block {} or later",
            first_block - 1
        ));
    }
    // Messages are in block order since the last rewind (numbers go back only at one): the
    // smallest sequence about the head or after it (the head's own sealed message brings
    // the block opened with it; older ones are duplicates). A head older than the last
    // rewind is looked up over the whole stream.
    let rewound = nats::last_of(&link.stream, &link.name, Kind::Rewound).await.map_err(|e| e.to_string())?;
    let since = match rewound {
        Some((seq, data)) if peek(&data)?.number <= head => seq.max(first),
        _ => first,
    };
    let (mut lo, mut hi) = (since, last + 1);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if number_at(mid).await? >= head {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    let message = format!("block {head} is this replica's head; reading stream {} from message {lo}", link.name);
    preconf_chain::log::info("replica", &message, serde_json::json!({ "stream": link.name, "seq": lo, "block": head }));
    Ok(lo)
}
