//! The replica's follower on a thread of its own: messages are applied one at a time, in
//! the order JavaScript hands them over, and each promise settles with what applying did.

use std::sync::mpsc::{channel, Sender};

use napi::bindgen_prelude::{Object, Uint8Array};
use napi::Env;
use napi_derive::napi;
use preconf_chain::replica::{Applied, ApplyError, Follower};

use super::{roles, Deferred};
use crate::NativeNode;

/// Where a replica starts.
#[napi(object)]
pub struct ReplicaStart {
    /// Stream sequence of the head's message, when this datadir followed this stream.
    pub seq: Option<i64>,
    pub head: i64,
    pub head_hash: String,
}

/// What applying one message did.
#[napi(string_enum = "camelCase")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ApplyStatus {
    /// A sealed block was written (and its position with it).
    Sealed,
    /// The pending block moved on.
    Pending,
    /// Applied before: nothing changed.
    Duplicate,
    /// A pre-confirmation whose predecessor this replica does not have (`detail` says why).
    Skipped,
    /// Not the message after the last applied: re-read from `expected`.
    Gap,
    /// Fatal (`detail` says why): the replica serves what it has.
    Stopped,
    /// The store failed (`detail`): hand the same message over again.
    Retry,
    /// Replication was stopped before this message.
    Closed,
}

#[napi(object)]
pub struct ApplyResult {
    pub status: ApplyStatus,
    pub number: Option<i64>,
    pub index: Option<i64>,
    pub expected: Option<i64>,
    pub detail: Option<String>,
}

impl ApplyResult {
    fn status(status: ApplyStatus) -> Self {
        Self { status, number: None, index: None, expected: None, detail: None }
    }
}

impl From<Result<Applied, ApplyError>> for ApplyResult {
    fn from(r: Result<Applied, ApplyError>) -> Self {
        match r {
            Ok(Applied::Sealed { number }) => Self { number: Some(number as i64), ..Self::status(ApplyStatus::Sealed) },
            Ok(Applied::Pending { number, index }) => {
                Self { number: Some(number as i64), index: Some(index as i64), ..Self::status(ApplyStatus::Pending) }
            }
            Ok(Applied::Duplicate) => Self::status(ApplyStatus::Duplicate),
            Ok(Applied::Skipped { reason }) => Self { detail: Some(reason), ..Self::status(ApplyStatus::Skipped) },
            Err(ApplyError::Gap { expected, .. }) => {
                Self { expected: Some(expected as i64), ..Self::status(ApplyStatus::Gap) }
            }
            Err(e @ ApplyError::Stopped { .. }) => {
                Self { detail: Some(e.to_string()), ..Self::status(ApplyStatus::Stopped) }
            }
            Err(ApplyError::Chain(e)) => Self { detail: Some(e.to_string()), ..Self::status(ApplyStatus::Retry) },
        }
    }
}

enum Command {
    Apply(u64, Vec<u8>, u64, Deferred<ApplyResult>),
    Stop,
}

pub(super) struct FollowerHandle {
    commands: Sender<Command>,
}

impl FollowerHandle {
    pub fn stop(self) {
        let _ = self.commands.send(Command::Stop);
    }
}

#[napi]
impl NativeNode {
    /// Starts following `stream` (a replica: a node opened with `build: false`).
    #[napi]
    pub fn follower_start(&self, stream: String) -> napi::Result<ReplicaStart> {
        let mut roles = roles().lock();
        let role = roles.entry(self.handle).or_default();
        if role.leader.is_some() || role.follower.is_some() {
            return Err(napi::Error::from_reason("replication already runs on this node"));
        }
        let chain = self.node.chain().clone();
        if chain.config.build {
            return Err(napi::Error::from_reason("a replica must not build blocks (open it with build: false)"));
        }
        let mut follower = Follower::new(chain.clone(), stream).map_err(|e| napi::Error::from_reason(e.to_string()))?;
        let view = chain.view();
        let start = ReplicaStart {
            seq: follower.position().map(|s| s as i64),
            head: view.head_number() as i64,
            head_hash: view.head_hash().to_string(),
        };
        let (tx, rx) = channel::<Command>();
        std::thread::Builder::new()
            .name("preconf-follower".into())
            .spawn(move || {
                for command in rx.iter() {
                    match command {
                        Command::Apply(seq, data, behind, d) => {
                            let result = ApplyResult::from(follower.apply(seq, &data, behind));
                            d.resolve(Box::new(move |_| Ok(result)));
                        }
                        Command::Stop => break,
                    }
                }
                // Whatever was handed over after the stop is not applied.
                for command in rx.try_iter() {
                    if let Command::Apply(_, _, _, d) = command {
                        d.resolve(Box::new(|_| Ok(ApplyResult::status(ApplyStatus::Closed))));
                    }
                }
            })
            .map_err(|e| napi::Error::from_reason(e.to_string()))?;
        role.follower = Some(FollowerHandle { commands: tx });
        Ok(start)
    }

    /// Applies the stream message at sequence `seq`; `behind`: messages the stream already
    /// holds after it (while catching up, blocks are not fsynced one by one). Messages are
    /// applied in the order of the calls; await each before handing over the next to stop
    /// at a gap.
    #[napi(ts_return_type = "Promise<ApplyResult>")]
    pub fn follower_apply<'env>(
        &self,
        env: &'env Env,
        seq: i64,
        data: Uint8Array,
        behind: i64,
    ) -> napi::Result<Object<'env>> {
        let seq = u64::try_from(seq).map_err(|_| napi::Error::from_reason("negative stream sequence"))?;
        let behind = u64::try_from(behind).unwrap_or(0);
        let (deferred, promise) = env.create_deferred()?;
        let commands = roles().lock().get(&self.handle).and_then(|r| r.follower.as_ref()).map(|f| f.commands.clone());
        let commands = commands.ok_or_else(|| napi::Error::from_reason("the follower is not running"))?;
        commands
            .send(Command::Apply(seq, data.to_vec(), behind, deferred))
            .map_err(|_| napi::Error::from_reason("the follower stopped"))?;
        Ok(promise)
    }
}
