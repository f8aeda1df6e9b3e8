//! Replication through the addon. The NATS client is TypeScript's (src/replication/); here
//! bytes cross the boundary: a leader's publisher hands out encoded messages in stream order,
//! a replica's follower applies the messages it is given, each on a thread of its own so that
//! encoding, store reads, state roots and fsyncs never run on an event loop.

mod follower;
mod leader;

use std::collections::HashMap;
use std::sync::OnceLock;

use napi::bindgen_prelude::Uint8Array;
use napi::Env;
use napi_derive::napi;
use parking_lot::Mutex;
use preconf_chain::replica::{codec, Kind};

use crate::NativeNode;

/// A promise settled from another thread.
type Deferred<T> = napi::JsDeferred<T, Box<dyn FnOnce(Env) -> napi::Result<T> + Send>>;

/// The replication role of each open node, by handle.
#[derive(Default)]
struct Roles {
    leader: Option<leader::LeaderHandle>,
    follower: Option<follower::FollowerHandle>,
}

fn roles() -> &'static Mutex<HashMap<u32, Roles>> {
    static ROLES: OnceLock<Mutex<HashMap<u32, Roles>>> = OnceLock::new();
    ROLES.get_or_init(Default::default)
}

/// Stops whatever replication the node runs (its threads let go of the store).
pub(crate) fn stop(handle: u32) {
    let role = roles().lock().remove(&handle);
    if let Some(role) = role {
        if let Some(l) = role.leader {
            l.stop();
        }
        if let Some(f) = role.follower {
            f.stop();
        }
    }
}

/// What a stream message is about.
#[napi(string_enum = "camelCase")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MessageKind {
    /// The block being built: opened, one more pre-confirmation, or a snapshot.
    Pending,
    /// A sealed block (with the block opened after it, when there is one).
    Sealed,
}

impl From<Kind> for MessageKind {
    fn from(k: Kind) -> Self {
        match k {
            Kind::Pending => MessageKind::Pending,
            Kind::Sealed => MessageKind::Sealed,
        }
    }
}

/// Where a stream message stands in the chain, from its first bytes.
#[napi(object)]
pub struct PeekedMessage {
    pub kind: MessageKind,
    pub number: i64,
    pub index: i64,
    /// The block hash of a sealed block's message.
    pub hash: Option<String>,
}

/// Reads where a stream message stands without applying it.
#[napi]
pub fn peek_replication_message(data: Uint8Array) -> napi::Result<PeekedMessage> {
    let env = codec::peek(&data).map_err(|e| napi::Error::from_reason(e.to_string()))?;
    let hash = match env.kind {
        Kind::Sealed => {
            Some(codec::peek_sealed_hash(&data).map_err(|e| napi::Error::from_reason(e.to_string()))?.to_string())
        }
        Kind::Pending => None,
    };
    Ok(PeekedMessage { kind: env.kind.into(), number: env.number as i64, index: env.index as i64, hash })
}

#[napi]
impl NativeNode {
    /// Replication's own health: `null` when fine, else why (joined to the node's reason).
    #[napi]
    pub fn set_replication_health(&self, reason: Option<String>) {
        self.node.chain().set_replication_health(reason);
    }

    /// Stops publishing or following (also done by `close`).
    #[napi]
    pub fn replication_stop(&self) {
        stop(self.handle);
    }
}
