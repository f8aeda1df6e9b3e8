//! Following a sequencer's flashblocks (`--flashblocks-url`): each flashblock is executed
//! again on this node's canonical head and the result is shown as the pending block, in
//! the same view and with the same events as the builder's pre-confirmations, so every
//! pending read, receipt and stream answers from one snapshot.
//!
//! The rules (follower.rs): index 0 opens a block on the head when its parent is the
//! head, later indices append their transactions; a block whose parent is not (yet) the
//! head waits for it, at most `max_wait`; a flashblock the head has passed is dropped.
//! When the head moves to the block being followed, the block is promoted (its hash is the
//! one the flashblocks named) or counted a mismatch and dropped; either way pending reads
//! fall back to the head (as a node without pre-confirmations answers) until the next
//! block's flashblocks are executed on it. Canonical blocks come from whatever moves this
//! node's head (a replica's stream, the Engine API); the follower only watches `Sealed`.
//! newPayload first asks the follower for the block it executed: when that block hashes to
//! the payload's, it is stored as executed here, not executed a second time.

mod follower;
mod stats;

pub use follower::{spawn, FollowerHandle, Input};
pub use stats::FollowStats;
