//! What a block did to an account, as the state root takes it, and an account leaf read
//! back from the trie.

use alloy_primitives::{B256, U256};
use alloy_rlp::Decodable;
use alloy_trie::TrieAccount;

use crate::error::{TrieError, TrieResult};

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

pub(crate) fn decode_account(leaf: &[u8], hashed_address: B256) -> TrieResult<TrieAccount> {
    TrieAccount::decode(&mut &leaf[..]).map_err(|e| TrieError::CorruptNode {
        owner: None,
        path: alloy_trie::Nibbles::unpack(hashed_address),
        reason: format!("account leaf: {e}"),
    })
}
