//! The state root of one block: storage tries first (each account's storage root), then
//! the account trie with `TrieAccount` leaves. Read-only: the result is a root and a diff.

use alloy_primitives::B256;

use crate::account::AccountUpdate;
use crate::diff::TrieDiff;
use crate::error::TrieResult;
use crate::prefetch::WarmTries;
use crate::reader::NodeReader;
use crate::running::RunningState;

/// The state root after `updates`, and the trie nodes that changed.
///
/// Reads only the nodes on the paths of the changed keys (plus one sibling per collapsed
/// branch), so the cost is O(changes x depth). Exception: removing a storage trie (a
/// deleted account, or `storage_wiped`) reads every node of that trie.
/// Each account may appear once; to stream a large genesis, call this once per chunk
/// (later chunks may add storage to an account of an earlier chunk).
pub fn state_root<R: NodeReader + ?Sized>(reader: &R, updates: &[AccountUpdate]) -> TrieResult<(B256, TrieDiff)> {
    state_root_warm(reader, updates, WarmTries::default())
}

/// `state_root`, starting from tries `warm` loaded earlier from the same reader: nodes
/// already there are neither read nor decoded again. The result is the same.
pub fn state_root_warm<R: NodeReader + ?Sized>(
    reader: &R,
    updates: &[AccountUpdate],
    warm: WarmTries,
) -> TrieResult<(B256, TrieDiff)> {
    let mut state = RunningState::from(warm);
    let root = state.apply(reader, updates)?;
    Ok((root, state.into_diff()))
}

/// The state root the reader holds (no changes applied).
pub fn current_root<R: NodeReader + ?Sized>(reader: &R) -> TrieResult<B256> {
    Ok(state_root(reader, &[])?.0)
}
