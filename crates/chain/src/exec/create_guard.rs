//! EIP-7610 (every fork): creating a contract at an address whose storage is not empty is
//! a collision, like one with a nonce or code, so the creation fails and burns its gas.
//! revm checks only nonce and code, and its create frame asks the journal; so every EVM
//! gets [`GuardedJournal`], revm's journal with that one check added, and the builder,
//! import, calls and simulation all follow the rule.
//!
//! Such an account (storage, no nonce, no code) cannot arise from execution since EIP-161;
//! only a genesis alloc or pre-Spurious-Dragon history holds one, so the extra reads
//! happen only when a creation targets an address with neither nonce nor code.

use std::ops::{Deref, DerefMut};

use alloy_primitives::{Address, Log, B256, U256};
use revm::bytecode::Bytecode;
use revm::context::Journal;
use revm::context_interface::context::{SStoreResult, SelfDestructResult, StateLoad};
use revm::context_interface::journaled_state::entry::JournalEntry;
use revm::context_interface::journaled_state::{
    AccountInfoLoad, AccountLoad, JournalCheckpoint, JournalLoadError, JournalTr, TransferError,
};
use revm::database::{AccountState, CacheDB};
use revm::database_interface::{Database, DatabaseRef};
use revm::inspector::JournalExt;
use revm::primitives::hardfork::SpecId;
use revm::primitives::{AddressMap, AddressSet, HashSet, StorageKey, StorageValue, KECCAK_EMPTY};
use revm::state::{Account, EvmState};

use crate::error::ChainError;
use crate::state::StateView;

/// A database that can list the storage slots an account may hold (a superset is fine:
/// the values are read before anything is decided).
pub trait StorageSlots: DatabaseRef {
    fn storage_slots_ref(&self, address: Address) -> Result<Vec<U256>, Self::Error>;
}

/// revm's journal over `CacheDB<D>`, refusing creations at addresses with storage.
#[derive(Debug)]
pub struct GuardedJournal<D: DatabaseRef> {
    pub journal: Journal<CacheDB<D>>,
}

impl<D: DatabaseRef> Deref for GuardedJournal<D> {
    type Target = Journal<CacheDB<D>>;
    fn deref(&self) -> &Self::Target {
        &self.journal
    }
}

impl<D: DatabaseRef> DerefMut for GuardedJournal<D> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.journal
    }
}

impl<D: StorageSlots> GuardedJournal<D> {
    /// Whether `address` (which has neither nonce nor code now) holds any non-zero slot, as
    /// this transaction sees it: the journal's writes, then the block's (the cache), then
    /// the stored state, unless the account's storage was wiped in this block. The cache
    /// forgets a wipe once the destroyed account is touched again (`NotExisting` becomes
    /// `Touched` and reads fall through to the stored slots), so an account that had a nonce
    /// or code when the block started and has neither now counts as destroyed here.
    fn has_storage(&self, address: Address) -> Result<bool, D::Error> {
        let journaled = self.journal.state.get(&address);
        if journaled.is_some_and(|a| a.storage.values().any(|s| !s.present_value.is_zero())) {
            return Ok(true);
        }
        let cache = &self.journal.database;
        let cached = cache.cache.accounts.get(&address);
        let destroyed = || -> Result<bool, D::Error> {
            Ok(cache.db.basic_ref(address)?.is_some_and(|a| a.nonce != 0 || a.code_hash != KECCAK_EMPTY))
        };
        let cleared = cached
            .is_some_and(|a| matches!(a.account_state, AccountState::StorageCleared | AccountState::NotExisting))
            || destroyed()?;
        let mut slots: Vec<U256> = cached.map(|a| a.storage.keys().copied().collect()).unwrap_or_default();
        if !cleared {
            slots.extend(cache.db.storage_slots_ref(address)?);
        }
        for slot in slots {
            if journaled.is_some_and(|a| a.storage.contains_key(&slot)) {
                continue; // the journal's value, zero (checked above)
            }
            let value = match cached.and_then(|a| a.storage.get(&slot)) {
                Some(v) => *v,
                None if cleared => U256::ZERO,
                None => cache.db.storage_ref(address, slot)?,
            };
            if !value.is_zero() {
                return Ok(true);
            }
        }
        Ok(false)
    }
}

type DbError<D> = <CacheDB<D> as Database>::Error;

impl<D: StorageSlots> JournalTr for GuardedJournal<D> {
    type Database = CacheDB<D>;
    type State = EvmState;
    type JournaledAccount<'a>
        = <Journal<CacheDB<D>> as JournalTr>::JournaledAccount<'a>
    where
        Self: 'a;

    fn new(database: CacheDB<D>) -> Self {
        Self { journal: Journal::new(database) }
    }

    fn create_account_checkpoint(
        &mut self,
        caller: Address,
        address: Address,
        balance: U256,
        spec_id: SpecId,
    ) -> Result<JournalCheckpoint, TransferError> {
        // revm's own check (nonce, code) comes first; storage only matters without them.
        let target = self.journal.state.get(&address);
        let bare = target.is_some_and(|a| a.info.nonce == 0 && a.info.code_hash == KECCAK_EMPTY);
        // A database error here cannot be returned as one: count it as a collision, the
        // safe side (the creation fails; the block it would make is refused on import).
        if bare && self.has_storage(address).unwrap_or(true) {
            return Err(TransferError::CreateCollision);
        }
        self.journal.create_account_checkpoint(caller, address, balance, spec_id)
    }

    fn db(&self) -> &Self::Database {
        self.journal.db()
    }
    fn db_mut(&mut self) -> &mut Self::Database {
        self.journal.db_mut()
    }
    fn sload(&mut self, address: Address, key: StorageKey) -> Result<StateLoad<StorageValue>, DbError<D>> {
        self.journal.sload(address, key)
    }
    fn sload_skip_cold_load(
        &mut self,
        address: Address,
        key: StorageKey,
        skip_cold_load: bool,
    ) -> Result<StateLoad<StorageValue>, JournalLoadError<DbError<D>>> {
        self.journal.sload_skip_cold_load(address, key, skip_cold_load)
    }
    fn sstore(
        &mut self,
        address: Address,
        key: StorageKey,
        value: StorageValue,
    ) -> Result<StateLoad<SStoreResult>, DbError<D>> {
        self.journal.sstore(address, key, value)
    }
    fn sstore_skip_cold_load(
        &mut self,
        address: Address,
        key: StorageKey,
        value: StorageValue,
        skip_cold_load: bool,
    ) -> Result<StateLoad<SStoreResult>, JournalLoadError<DbError<D>>> {
        self.journal.sstore_skip_cold_load(address, key, value, skip_cold_load)
    }
    fn tload(&mut self, address: Address, key: StorageKey) -> StorageValue {
        self.journal.tload(address, key)
    }
    fn tstore(&mut self, address: Address, key: StorageKey, value: StorageValue) {
        self.journal.tstore(address, key, value)
    }
    fn log(&mut self, log: Log) {
        self.journal.log(log)
    }
    fn logs(&self) -> &[Log] {
        self.journal.logs()
    }
    fn take_logs(&mut self) -> Vec<Log> {
        self.journal.take_logs()
    }
    fn selfdestruct(
        &mut self,
        address: Address,
        target: Address,
        skip_cold_load: bool,
    ) -> Result<StateLoad<SelfDestructResult>, JournalLoadError<DbError<D>>> {
        self.journal.selfdestruct(address, target, skip_cold_load)
    }
    fn warm_access_list(&mut self, access_list: AddressMap<HashSet<StorageKey>>) {
        self.journal.warm_access_list(access_list)
    }
    fn warm_coinbase_account(&mut self, address: Address) {
        self.journal.warm_coinbase_account(address)
    }
    fn warm_precompiles(&mut self, precompiles: AddressSet) {
        self.journal.warm_precompiles(precompiles)
    }
    fn precompile_addresses(&self) -> &AddressSet {
        self.journal.precompile_addresses()
    }
    fn depth(&self) -> usize {
        self.journal.depth()
    }
    fn set_spec_id(&mut self, spec_id: SpecId) {
        self.journal.set_spec_id(spec_id)
    }
    fn set_eip7708_config(&mut self, disabled: bool, eip8246_delayed_clear_disabled: bool) {
        self.journal.set_eip7708_config(disabled, eip8246_delayed_clear_disabled)
    }
    fn transfer(&mut self, from: Address, to: Address, balance: U256) -> Result<Option<TransferError>, DbError<D>> {
        self.journal.transfer(from, to, balance)
    }
    fn transfer_loaded(&mut self, from: Address, to: Address, balance: U256) -> Option<TransferError> {
        self.journal.transfer_loaded(from, to, balance)
    }
    fn touch_account(&mut self, address: Address) {
        self.journal.touch_account(address)
    }
    #[allow(deprecated)]
    fn caller_accounting_journal_entry(&mut self, address: Address, old_balance: U256, bump_nonce: bool) {
        self.journal.caller_accounting_journal_entry(address, old_balance, bump_nonce)
    }
    fn balance_incr(&mut self, address: Address, balance: U256) -> Result<(), DbError<D>> {
        self.journal.balance_incr(address, balance)
    }
    #[allow(deprecated)]
    fn nonce_bump_journal_entry(&mut self, address: Address) {
        self.journal.nonce_bump_journal_entry(address)
    }
    fn load_account(&mut self, address: Address) -> Result<StateLoad<&Account>, DbError<D>> {
        self.journal.load_account(address)
    }
    fn load_account_mut_skip_cold_load(
        &mut self,
        address: Address,
        skip_cold_load: bool,
    ) -> Result<StateLoad<Self::JournaledAccount<'_>>, JournalLoadError<DbError<D>>> {
        self.journal.load_account_mut_skip_cold_load(address, skip_cold_load)
    }
    fn load_account_mut_optional_code(
        &mut self,
        address: Address,
        load_code: bool,
    ) -> Result<StateLoad<Self::JournaledAccount<'_>>, DbError<D>> {
        self.journal.load_account_mut_optional_code(address, load_code)
    }
    fn load_account_with_code(&mut self, address: Address) -> Result<StateLoad<&Account>, DbError<D>> {
        self.journal.load_account_with_code(address)
    }
    fn load_account_delegated(&mut self, address: Address) -> Result<StateLoad<AccountLoad>, DbError<D>> {
        self.journal.load_account_delegated(address)
    }
    fn load_account_info_skip_cold_load(
        &mut self,
        address: Address,
        load_code: bool,
        skip_cold_load: bool,
    ) -> Result<AccountInfoLoad<'_>, JournalLoadError<DbError<D>>> {
        self.journal.load_account_info_skip_cold_load(address, load_code, skip_cold_load)
    }
    fn checkpoint(&mut self) -> JournalCheckpoint {
        self.journal.checkpoint()
    }
    fn checkpoint_commit(&mut self) {
        self.journal.checkpoint_commit()
    }
    fn checkpoint_revert(&mut self, checkpoint: JournalCheckpoint) {
        self.journal.checkpoint_revert(checkpoint)
    }
    fn set_code_with_hash(&mut self, address: Address, code: Bytecode, hash: B256) {
        self.journal.set_code_with_hash(address, code, hash)
    }
    fn commit_tx(&mut self) {
        self.journal.commit_tx()
    }
    fn discard_tx(&mut self) {
        self.journal.discard_tx()
    }
    fn finalize(&mut self) -> Self::State {
        self.journal.finalize()
    }
}

impl<D: StorageSlots> JournalExt for GuardedJournal<D> {
    fn journal(&self) -> &[JournalEntry] {
        &self.journal.journal
    }
    fn evm_state(&self) -> &EvmState {
        &self.journal.state
    }
    fn evm_state_mut(&mut self) -> &mut EvmState {
        &mut self.journal.state
    }
}

/// The state's slots of an account: the store's, and those the pre-confirmed layers wrote.
impl StorageSlots for StateView {
    fn storage_slots_ref(&self, address: Address) -> Result<Vec<U256>, ChainError> {
        let mut slots = self.snapshot.storage_slots(&address, self.block)?;
        for layer in self.overlay.iter().flat_map(|o| o.layers()) {
            if let Some(change) = layer.accounts.get(&address) {
                slots.extend(change.storage.keys().copied());
            }
        }
        Ok(slots)
    }
}
