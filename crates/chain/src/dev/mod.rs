//! The test methods anvil and Hardhat serve (`--dev`): state edits, impersonation, mining
//! on demand, time, snapshots and reverts, state dumps. Off on a production node.
//!
//! Every change goes through the builder, the chain's only writer (builder/dev/): an edit
//! lands in the block being built and is shown at once as that block's next
//! pre-confirmation, then sealed with it; a revert puts the store back at a sealed snapshot
//! and opens a new block on it. So `pending`, `latest` and the subscriptions tell one story.
//! docs/test-methods.md lists what each method does to them.

mod api;
pub mod clock;
mod dump;
pub mod erc20;
pub mod requests;
pub mod rewind;

pub use crate::error::DevError;
pub use api::{DevApi, ForkReset};

/// The most blocks one `anvil_mine` may seal: each is a real block, committed to the store.
pub const MAX_MINE_BLOCKS: u64 = 100_000;
