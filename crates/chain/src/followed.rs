//! A block this node already executed as another node built it (a flashblocks follower's
//! pending block), for whoever stores the canonical block: it is not executed twice.

use std::sync::Arc;

use alloy_primitives::B256;
use preconf_trie::TrieDiff;

use crate::changes::StateChanges;
use crate::types::ExecutedTx;

/// A followed block as executed here, sealed: what executing the canonical block would give
/// (its header is the canonical block's: the hashes are equal).
pub struct FollowedBlock {
    pub txs: Vec<Arc<ExecutedTx>>,
    pub changes: StateChanges,
    pub trie: TrieDiff,
}

/// Whoever follows blocks built elsewhere.
pub trait FollowedBlocks: Send + Sync {
    /// The block followed on `parent`, if it is block `hash`; it is handed over (taken).
    fn take(&self, parent: B256, hash: B256) -> Option<FollowedBlock>;
}
