//! The ledger of a clustered node: the replicated log (a JetStream stream) its chain is
//! written to before anybody sees it. The builder appends every pre-confirmation and sealed
//! block and exposes it only once the ledger holds it; the submission path appends every
//! accepted transaction before returning its hash. So whatever any client saw, on any node,
//! is in the log, and a new leader continues from exactly there.
//!
//! Appends are fenced: each one names the log position it expects to follow, and a leader
//! that was replaced (another one appended since) is refused. The transport lives outside
//! this crate (preconf-replication); here is only the contract.

use alloy_primitives::Bytes;

use crate::wire::Kind;

pub use crate::error::LedgerError;

/// One message about the chain, encoded by `wire`.
#[derive(Clone, Debug)]
pub struct Record {
    pub kind: Kind,
    /// The block it is about (the block being built for pre-confirmations).
    pub number: u64,
    /// Pre-confirmation index (0 for a sealed block).
    pub index: u64,
    pub data: Vec<u8>,
}

pub trait Ledger: Send + Sync {
    /// Appends one message; returns its log position once the log holds it.
    fn append(&self, record: Record) -> Result<u64, LedgerError>;

    /// Appends an accepted transaction (batched with concurrent callers into one message);
    /// returns once the log holds it.
    fn append_tx(&self, raw: Bytes) -> Result<(), LedgerError>;

    /// The leader's term: it identifies this leader's messages (their `build`).
    fn term(&self) -> u64;

    /// The log's name (stored with each sealed block's position in it).
    fn stream(&self) -> &str;
}
