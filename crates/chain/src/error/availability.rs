//! What the node cannot serve now, though the request is sound: data it no longer keeps,
//! test methods that are off, a transaction sent to a node that does not lead.

/// The data or service asked for is not available on this node.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unavailable {
    /// A proof at a block whose trie versions were pruned (store::trie::TRIE_HISTORY).
    #[error("state of block {block} is no longer available: trie history goes back to block {oldest}")]
    StatePruned { block: u64, oldest: u64 },
    #[error("the test methods are off on this node (start it with --dev)")]
    TestMethodsOff,
    #[error("the builder is not running, so the test methods cannot change the chain")]
    BuilderGone,
    /// Driven by op-node, every block and its state must come from payload attributes: a
    /// block a test method changed would be refused by every node that verifies it.
    #[error("blocks on this node come from the Engine API (op-node): test methods that change the chain, its clock or the block being built are off")]
    EngineDriven,
    /// On a forked chain, a block the upstream executed: its traces need the upstream's
    /// state before it, which this node does not hold.
    #[error("block {block} is at or before the fork block {fork}: it was executed upstream and cannot be traced on this node (trace it on the upstream)")]
    TraceBeforeFork { block: u64, fork: u64 },
}

/// Why a clustered node cannot accept a transaction: the caller sends it to the leader.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotLeader {
    #[error("this node follows")]
    Follows,
    /// This node led, and the replicated log refused or lost its append.
    #[error(transparent)]
    Ledger(#[from] LedgerError),
}

/// Why the replicated log (ledger.rs) refused an append.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LedgerError {
    /// Another leader appended since this one's last append: this node must stop building.
    #[error("deposed: {0}")]
    Fenced(String),
    /// The log could not be reached in time; what was sent may or may not be held, so this
    /// node must stop building as well (the log decides, as a replica reads it).
    #[error("the replication log is unavailable: {0}")]
    Unavailable(String),
    /// The ledger was closed (the node steps down or shuts down).
    #[error("the replication log is closed")]
    Closed,
}
