//! Read replicas: the leader publishes every change of its published view (each
//! pre-confirmation, each sealed block) to a stream, and replicas apply them to their own
//! store and view, so that they answer every read as the leader does.
//!
//! - `publish`: the leader's ordering and recovery (bounded queue, republishing sealed blocks
//!   from the store, snapshots of the block being built).
//! - `apply`: the replica's checks and writes (state root over its own trie, stream position
//!   in the block's transaction).
//!
//! The transport (NATS JetStream) is not here: these types take and give bytes and stream
//! sequences.

pub mod apply;
pub mod publish;
mod verify;

pub use crate::wire::{Envelope, Kind, Position, POSITION_KEY};
pub use apply::{Applied, ApplyError, Follower, Skip};
pub use publish::{Publication, PublishError, Publisher, PublisherStats, StreamMark};

/// Wall-clock milliseconds: when a message's state became visible.
pub fn unix_now_ms() -> u64 {
    use std::time::{SystemTime, UNIX_EPOCH};
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or_default()
}
