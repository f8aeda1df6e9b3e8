//! The state trie's side of the store: change sets as trie updates, and the roots and
//! proofs computed over the persisted trie (crates/trie).

use alloy_primitives::{keccak256, Address, B256, U256};
use preconf_trie::{AccountFields, AccountUpdate, NodeReader, TrieDiff, TrieError};

use crate::changes::{AccountChange, AccountState, StateChanges};
use crate::error::{Cause, ChainError, InternalError, Unavailable};

/// How many recent blocks keep a complete trie (proofs at them); older versions are pruned.
/// geth's path scheme keeps 128 by default.
pub const TRIE_HISTORY: u64 = 128;

impl From<TrieError> for ChainError {
    fn from(e: TrieError) -> Self {
        match e {
            TrieError::Pruned { block, oldest } => Unavailable::StatePruned { block, oldest }.into(),
            other => InternalError::Trie(Cause::new(other)).into(),
        }
    }
}

/// One block's changes as the trie's updates (addresses and slots hashed).
pub fn trie_updates(changes: &StateChanges) -> Vec<AccountUpdate> {
    changes.accounts.iter().map(|(address, change)| trie_update(address, change)).collect()
}

/// One account's change as the trie's update.
pub fn trie_update(address: &Address, change: &AccountChange) -> AccountUpdate {
    AccountUpdate {
        hashed_address: keccak256(address),
        account: change.info.map(account_fields),
        storage_wiped: change.storage_wiped,
        storage: change.storage.iter().map(|(slot, value)| hashed_slot(slot, value)).collect(),
    }
}

pub fn account_fields(a: AccountState) -> AccountFields {
    AccountFields { nonce: a.nonce, balance: a.balance, code_hash: a.code_hash }
}

/// A storage write as the trie keys it.
pub fn hashed_slot(slot: &U256, value: &U256) -> (B256, U256) {
    (keccak256(B256::from(*slot)), *value)
}

/// The state root after `changes` on top of what `reader` holds, and the nodes it changed.
pub fn state_root(reader: &impl NodeReader, changes: &StateChanges) -> Result<(B256, TrieDiff), ChainError> {
    Ok(preconf_trie::state_root(reader, &trie_updates(changes))?)
}
