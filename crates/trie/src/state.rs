//! The state root of one block: storage tries first (each account's storage root), then
//! the account trie with `TrieAccount` leaves. Read-only: the result is a root and a diff.

use alloy_primitives::{B256, U256};
use alloy_rlp::Decodable;
use alloy_trie::{TrieAccount, EMPTY_ROOT_HASH};

use crate::diff::TrieDiff;
use crate::error::{TrieError, TrieResult};
use crate::mpt::Trie;
use crate::prefetch::WarmTries;
use crate::reader::NodeReader;

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
    mut warm: WarmTries,
) -> TrieResult<(B256, TrieDiff)> {
    let mut order: Vec<&AccountUpdate> = updates.iter().collect();
    order.sort_unstable_by_key(|u| u.hashed_address);
    if let Some(pair) = order.windows(2).find(|w| w[0].hashed_address == w[1].hashed_address) {
        return Err(TrieError::DuplicateAccount(pair[0].hashed_address));
    }
    let mut diff = TrieDiff::default();
    let mut accounts = warm.trie(reader, None)?;
    let mut leaf = Vec::with_capacity(110);
    for update in order {
        let address = update.hashed_address;
        let Some(fields) = update.account else {
            let (_, nodes) = Trie::wiped(reader, Some(address))?.commit();
            if !nodes.is_empty() {
                diff.storage.insert(address, nodes);
            }
            accounts.remove(&address)?;
            continue;
        };
        let storage_root = if update.storage_wiped || !update.storage.is_empty() {
            let mut storage = if update.storage_wiped {
                Trie::wiped(reader, Some(address))?
            } else {
                warm.trie(reader, Some(address))?
            };
            for (slot, value) in &update.storage {
                if value.is_zero() {
                    storage.remove(slot)?;
                } else {
                    storage.insert(slot, alloy_rlp::encode(value))?;
                }
            }
            let (root, nodes) = storage.commit();
            if !nodes.is_empty() {
                diff.storage.insert(address, nodes);
            }
            root
        } else {
            // Storage untouched: keep the root the account's current leaf commits to.
            match accounts.get(&address)? {
                Some(old) => decode_account(&old, address)?.storage_root,
                None => EMPTY_ROOT_HASH,
            }
        };
        let account = TrieAccount::new(fields.nonce, fields.balance, storage_root, fields.code_hash);
        leaf.clear();
        alloy_rlp::Encodable::encode(&account, &mut leaf);
        accounts.insert(&address, leaf.clone())?;
    }
    let (root, nodes) = accounts.commit();
    diff.accounts = nodes;
    Ok((root, diff))
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
