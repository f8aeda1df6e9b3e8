//! The state root of one block: storage tries first (each account's storage root), then
//! the account trie with `TrieAccount` leaves. Read-only: the result is a root and a diff.

use alloy_primitives::{B256, U256};
use alloy_rlp::Decodable;
use alloy_trie::TrieAccount;

use crate::diff::TrieDiff;
use crate::error::{TrieError, TrieResult};
use crate::prefetch::WarmTries;
use crate::reader::NodeReader;
use crate::running::RunningState;

/// Nonce, balance and code hash of an existing account (its storage root is the trie's).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AccountFields {
    pub nonce: u64,
    pub balance: U256,
    pub code_hash: B256,
}

/// What one block did to one account.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccountUpdate {
    /// keccak256(address)
    pub hashed_address: B256,
    /// `None`: the account no longer exists; its storage trie is removed with it.
    pub account: Option<AccountFields>,
    /// The storage trie is removed and rebuilt from `storage` alone (a contract created
    /// over an address that had storage, or a self-destruct that re-creates it).
    pub storage_wiped: bool,
    /// (keccak256(slot), new value); zero removes the slot.
    pub storage: Vec<(B256, U256)>,
}

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

pub(crate) fn decode_account(leaf: &[u8], hashed_address: B256) -> TrieResult<TrieAccount> {
    TrieAccount::decode(&mut &leaf[..]).map_err(|e| TrieError::CorruptNode {
        owner: None,
        path: alloy_trie::Nibbles::unpack(hashed_address),
        reason: format!("account leaf: {e}"),
    })
}
