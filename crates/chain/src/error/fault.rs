//! Why a node stopped doing its part: `/health` reports it, and such a node must not lead.

use super::{Cause, ChainError};

#[derive(Debug, Clone, thiserror::Error)]
pub enum Fault {
    /// The builder met an error it cannot build past.
    #[error("builder stopped: {0}")]
    BuilderStopped(ChainError),
    /// The replica refused a stream message, or could not store what it applied; it
    /// serves what it has.
    #[error("replica stopped: {0}")]
    ReplicaStopped(Cause),
}
