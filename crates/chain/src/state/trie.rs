//! Merkle-Patricia state root, kept incrementally: storage roots are recomputed only for
//! accounts a block changed; the account trie is rebuilt from the cached leaves.
//! The trie hashing itself is alloy-trie's `HashBuilder`.

use std::collections::BTreeMap;

use alloy_primitives::{keccak256, map::AddressMap, Address, B256, U256};
use alloy_rlp::Encodable;
use alloy_trie::{HashBuilder, Nibbles, TrieAccount, EMPTY_ROOT_HASH};

use super::changes::{AccountState, StateChanges};

#[derive(Default, Clone)]
struct AccountEntry {
    state: AccountState,
    storage_root: B256,
    /// Non-zero slots, by keccak(slot).
    storage: BTreeMap<B256, U256>,
}

impl Default for AccountState {
    fn default() -> Self {
        AccountState { nonce: 0, balance: U256::ZERO, code_hash: alloy_primitives::KECCAK256_EMPTY }
    }
}

/// The full latest state, in the form the state root needs.
#[derive(Default, Clone)]
pub struct StateTrie {
    /// Accounts by keccak(address).
    accounts: BTreeMap<B256, AccountEntry>,
    hashed: AddressMap<B256>,
}

impl StateTrie {
    fn hashed(&mut self, address: &Address) -> B256 {
        *self.hashed.entry(*address).or_insert_with(|| keccak256(address))
    }

    /// Sets an account as it is loaded from genesis or the store (storage roots are
    /// computed by `finish_load`).
    pub fn load_account(&mut self, address: Address, state: AccountState) {
        let key = self.hashed(&address);
        self.accounts.entry(key).or_default().state = state;
    }

    pub fn load_slot(&mut self, address: Address, slot: U256, value: U256) {
        if value.is_zero() {
            return;
        }
        let key = self.hashed(&address);
        let entry = self.accounts.entry(key).or_default();
        entry.storage.insert(keccak256(B256::from(slot)), value);
    }

    /// Computes every storage root after a bulk load.
    pub fn finish_load(&mut self) {
        for entry in self.accounts.values_mut() {
            entry.storage_root = storage_root(&entry.storage);
        }
    }

    /// Applies one block's changes.
    pub fn apply(&mut self, changes: &StateChanges) {
        for (address, change) in &changes.accounts {
            let key = self.hashed(address);
            let Some(state) = change.info else {
                self.accounts.remove(&key);
                continue;
            };
            let entry = self.accounts.entry(key).or_default();
            entry.state = state;
            if change.storage_wiped {
                entry.storage.clear();
            }
            for (slot, value) in &change.storage {
                let slot_key = keccak256(B256::from(*slot));
                if value.is_zero() {
                    entry.storage.remove(&slot_key);
                } else {
                    entry.storage.insert(slot_key, *value);
                }
            }
            if change.storage_wiped || !change.storage.is_empty() {
                entry.storage_root = storage_root(&entry.storage);
            }
        }
    }

    pub fn root(&self) -> B256 {
        if self.accounts.is_empty() {
            return EMPTY_ROOT_HASH;
        }
        let mut builder = HashBuilder::default();
        let mut buf = Vec::with_capacity(128);
        for (key, entry) in &self.accounts {
            buf.clear();
            TrieAccount {
                nonce: entry.state.nonce,
                balance: entry.state.balance,
                storage_root: entry.storage_root,
                code_hash: entry.state.code_hash,
            }
            .encode(&mut buf);
            builder.add_leaf(Nibbles::unpack(key), &buf);
        }
        builder.root()
    }
}

fn storage_root(storage: &BTreeMap<B256, U256>) -> B256 {
    if storage.is_empty() {
        return EMPTY_ROOT_HASH;
    }
    let mut builder = HashBuilder::default();
    let mut buf = Vec::with_capacity(33);
    for (key, value) in storage {
        buf.clear();
        value.encode(&mut buf);
        builder.add_leaf(Nibbles::unpack(key), &buf);
    }
    builder.root()
}
