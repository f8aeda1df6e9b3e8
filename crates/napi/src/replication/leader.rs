//! The leader's publisher on a thread of its own: chain events go in as they happen (the
//! bus never blocks the builder), encoded messages come out when JavaScript asks for the
//! next one, in stream order.

use std::sync::mpsc::{channel, sync_channel, Sender, SyncSender};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use alloy_primitives::B256;
use napi::bindgen_prelude::{Buffer, Object};
use napi::Env;
use napi_derive::napi;
use parking_lot::Mutex;
use preconf_chain::events::ChainEvent;
use preconf_chain::replica::{Publisher, PublisherStats, StreamMark};

use super::{roles, Deferred, MessageKind};
use crate::NativeNode;

/// One message to publish: `data` under `Nats-Msg-Id: id`.
#[napi(object)]
pub struct Publication {
    pub kind: MessageKind,
    pub number: i64,
    pub index: i64,
    pub id: String,
    pub data: Buffer,
}

/// The newest sealed block a stream holds (from its last sealed message).
#[napi(object)]
pub struct StreamHead {
    pub number: i64,
    pub hash: String,
}

#[napi(object)]
#[derive(Clone, Copy, Default)]
pub struct PublisherStatus {
    pub queued: i64,
    pub published: i64,
    pub dropped: i64,
    pub republished: i64,
    pub snapshots: i64,
    /// The newest sealed block handed out for publishing.
    pub sealed: i64,
}

impl From<PublisherStats> for PublisherStatus {
    fn from(s: PublisherStats) -> Self {
        Self {
            queued: s.queued as i64,
            published: s.published as i64,
            dropped: s.dropped as i64,
            republished: s.republished as i64,
            snapshots: s.snapshots as i64,
            sealed: s.sealed as i64,
        }
    }
}

enum Command {
    Event(ChainEvent),
    Next(Deferred<Option<Publication>>),
    Reset(Option<StreamMark>, SyncSender<Result<(), String>>),
    Stop,
}

pub(super) struct LeaderHandle {
    commands: Sender<Command>,
    status: Arc<Mutex<PublisherStatus>>,
}

impl LeaderHandle {
    pub fn stop(self) {
        let _ = self.commands.send(Command::Stop);
    }
}

/// The publisher's thread: takes events, answers `next` as soon as there is something.
fn run(mut publisher: Publisher, commands: std::sync::mpsc::Receiver<Command>, status: Arc<Mutex<PublisherStatus>>) {
    let mut waiting: Option<Deferred<Option<Publication>>> = None;
    for command in commands {
        match command {
            Command::Event(e) => publisher.on_event(e),
            Command::Next(d) => waiting = Some(d),
            Command::Reset(mark, reply) => {
                let _ = reply.send(publisher.reset(mark).map_err(|e| e.to_string()));
            }
            Command::Stop => break,
        }
        if let Some(d) = waiting.take() {
            match publisher.next_publication() {
                Ok(Some(p)) => d.resolve(Box::new(move |_| {
                    Ok(Some(Publication {
                        kind: p.kind.into(),
                        number: p.number as i64,
                        index: p.index as i64,
                        id: p.id,
                        data: p.data.into(),
                    }))
                })),
                Ok(None) => waiting = Some(d),
                Err(e) => d.reject(napi::Error::from_reason(e.to_string())),
            }
        }
        *status.lock() = publisher.stats().into();
    }
    if let Some(d) = waiting {
        d.resolve(Box::new(|_| Ok(None)));
    }
}

#[napi]
impl NativeNode {
    /// Starts publishing this node's chain events (a leader; the node keeps change sets).
    /// `capacity`: events queued while the stream is unreachable before the queue is
    /// emptied (the gap is then refilled from the store and a snapshot).
    #[napi]
    pub fn publisher_start(&self, capacity: u32) -> napi::Result<()> {
        let mut roles = roles().lock();
        let role = roles.entry(self.handle).or_default();
        if role.leader.is_some() || role.follower.is_some() {
            return Err(napi::Error::from_reason("replication already runs on this node"));
        }
        let chain = self.node.chain().clone();
        let build = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(1);
        let publisher = Publisher::new(chain.clone(), build, capacity as usize);
        let (tx, rx) = channel();
        let status = Arc::new(Mutex::new(PublisherStatus::default()));
        let events = chain.events.subscribe();
        let forward = tx.clone();
        // The bus's queue is drained at once into the publisher's bounded one.
        std::thread::Builder::new()
            .name("preconf-publish-events".into())
            .spawn(move || {
                for e in events {
                    if forward.send(Command::Event(e)).is_err() {
                        break;
                    }
                }
            })
            .map_err(|e| napi::Error::from_reason(e.to_string()))?;
        let thread_status = status.clone();
        std::thread::Builder::new()
            .name("preconf-publisher".into())
            .spawn(move || run(publisher, rx, thread_status))
            .map_err(|e| napi::Error::from_reason(e.to_string()))?;
        role.leader = Some(LeaderHandle { commands: tx, status });
        Ok(())
    }

    /// The next message to publish, once there is one; `null` after `replicationStop`.
    /// Publish it (retrying until the stream has it) before asking for the next.
    #[napi(ts_return_type = "Promise<Publication | null>")]
    pub fn publisher_next<'env>(&self, env: &'env Env) -> napi::Result<Object<'env>> {
        let (deferred, promise) = env.create_deferred()?;
        let sent = self.leader_commands().and_then(|c| c.send(Command::Next(deferred)).ok());
        if let Some(()) = sent {
            return Ok(promise);
        }
        Err(napi::Error::from_reason("the publisher is not running"))
    }

    /// What the stream holds (its newest sealed block; `null` when it is empty). Throws when
    /// the stream cannot be this node's (another chain, or ahead of this node).
    #[napi]
    pub fn publisher_reset(&self, head: Option<StreamHead>) -> napi::Result<()> {
        let mark = match head {
            Some(h) => Some(StreamMark {
                number: u64::try_from(h.number).map_err(|_| napi::Error::from_reason("negative block number"))?,
                hash: h.hash.parse::<B256>().map_err(|e| napi::Error::from_reason(format!("bad hash: {e}")))?,
            }),
            None => None,
        };
        let commands =
            self.leader_commands().ok_or_else(|| napi::Error::from_reason("the publisher is not running"))?;
        let (reply, answer) = sync_channel(1);
        commands.send(Command::Reset(mark, reply)).map_err(|_| napi::Error::from_reason("the publisher stopped"))?;
        answer.recv().map_err(|_| napi::Error::from_reason("the publisher stopped"))?.map_err(napi::Error::from_reason)
    }

    /// Stops the builder (it seals what it pre-confirmed), so that a leader shutting down
    /// can publish its last block before it closes.
    #[napi]
    pub fn publisher_drain(&self) {
        self.node.shutdown();
    }

    #[napi]
    pub fn publisher_status(&self) -> PublisherStatus {
        let roles = roles().lock();
        roles.get(&self.handle).and_then(|r| r.leader.as_ref()).map(|l| *l.status.lock()).unwrap_or_default()
    }

    fn leader_commands(&self) -> Option<Sender<Command>> {
        roles().lock().get(&self.handle).and_then(|r| r.leader.as_ref()).map(|l| l.commands.clone())
    }
}
