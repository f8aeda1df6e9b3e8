//! `StateChanges`: what a set of transactions did to the state. One type serves three
//! purposes: the pending overlay readers see, the per-block change set written to the
//! store's history tables, and the input of the incremental state-root computation.

use alloy_primitives::{
    map::{AddressMap, B256Map, HashMap},
    Address, Bytes, B256, KECCAK256_EMPTY, U256,
};
use revm::primitives::hardfork::SpecId;
use revm::state::EvmState;

/// Balance, nonce and code hash of an existing account.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AccountState {
    pub nonce: u64,
    pub balance: U256,
    pub code_hash: B256,
}

impl AccountState {
    pub fn is_empty(&self) -> bool {
        self.nonce == 0 && self.balance.is_zero() && self.code_hash == KECCAK256_EMPTY
    }
}

/// The new state of one account.
#[derive(Clone, Debug, Default)]
pub struct AccountChange {
    /// `None`: the account does not exist (destroyed, or deleted as empty).
    pub info: Option<AccountState>,
    /// Storage written (zero means cleared).
    pub storage: HashMap<U256, U256>,
    /// All storage that existed before is gone (self-destruct, or created anew).
    pub storage_wiped: bool,
}

#[derive(Clone, Debug, Default)]
pub struct StateChanges {
    pub accounts: AddressMap<AccountChange>,
    /// New code, by hash.
    pub codes: B256Map<Bytes>,
}

impl StateChanges {
    pub fn is_empty(&self) -> bool {
        self.accounts.is_empty() && self.codes.is_empty()
    }

    /// Folds the state revm returned for one transaction into this change set.
    pub fn apply_evm_state(&mut self, state: &EvmState, spec: SpecId) {
        let clear_empty = spec.is_enabled_in(SpecId::SPURIOUS_DRAGON);
        for (address, account) in state.iter() {
            if !account.is_touched() {
                continue;
            }
            let change = self.accounts.entry(*address).or_default();
            if account.is_selfdestructed() || (clear_empty && account.is_empty()) {
                // Destroyed, or an empty account removed by EIP-161.
                change.info = None;
                change.storage.clear();
                change.storage_wiped = true;
                continue;
            }
            if account.is_created() {
                change.storage.clear();
                change.storage_wiped = true;
            }
            if let Some(code) = &account.info.code {
                if account.info.code_hash != KECCAK256_EMPTY && !code.is_empty() {
                    self.codes.entry(account.info.code_hash).or_insert_with(|| code.original_bytes());
                }
            }
            change.info = Some(AccountState {
                nonce: account.info.nonce,
                balance: account.info.balance,
                code_hash: account.info.code_hash,
            });
            for (slot, value) in account.storage.iter() {
                if value.is_changed() || account.is_created() {
                    change.storage.insert(*slot, value.present_value);
                }
            }
        }
    }

    /// Appends a later change set on top of this one.
    pub fn extend(&mut self, later: StateChanges) {
        for (address, change) in later.accounts {
            let entry = self.accounts.entry(address).or_default();
            if change.storage_wiped {
                entry.storage.clear();
                entry.storage_wiped = true;
            }
            entry.info = change.info;
            entry.storage.extend(change.storage);
        }
        self.codes.extend(later.codes);
    }

    /// What this change set says about an account: `Some(None)` when it removed it,
    /// `None` when it does not know.
    pub fn account(&self, address: &Address) -> Option<Option<AccountState>> {
        self.accounts.get(address).map(|c| c.info)
    }

    /// What this change set says about a slot: `None` when the base state decides.
    pub fn storage(&self, address: &Address, slot: &U256) -> Option<U256> {
        let change = self.accounts.get(address)?;
        match change.storage.get(slot) {
            Some(v) => Some(*v),
            None if change.storage_wiped || change.info.is_none() => Some(U256::ZERO),
            None => None,
        }
    }
}
