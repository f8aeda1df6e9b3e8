//! Read views of the state for the EVM and for RPC reads.

use std::sync::Arc;

use alloy_primitives::{Address, Bytes, B256, KECCAK256_EMPTY, U256};
use parking_lot::Mutex;
use revm::bytecode::Bytecode;
use revm::database_interface::{DBErrorMarker, DatabaseRef};
use revm::state::AccountInfo;
use schnellru::{ByLength, LruMap};

use crate::changes::AccountState;
use crate::error::{ChainError, ChainResult, InternalError};
use crate::store::StoreSnapshot;

mod overlay;
pub use overlay::{Overlay, MERGE_UP_TO};

impl DBErrorMarker for ChainError {}

/// Analysed bytecode by hash, shared by every view: code is immutable, and analysing it
/// (jump table) on every call would cost more than the call. The least recently used
/// code leaves first.
pub struct CodeCache {
    map: Mutex<LruMap<B256, Bytecode, ByLength>>,
}

const CODE_CACHE_ENTRIES: u32 = 4096;

impl Default for CodeCache {
    fn default() -> Self {
        Self { map: Mutex::new(LruMap::new(ByLength::new(CODE_CACHE_ENTRIES))) }
    }
}

impl CodeCache {
    fn get_or_insert(&self, hash: B256, load: impl FnOnce() -> ChainResult<Option<Bytes>>) -> ChainResult<Bytecode> {
        if let Some(code) = self.map.lock().get(&hash) {
            return Ok(code.clone());
        }
        // Loaded and analysed outside the lock: two readers may both load it, once.
        let Some(raw) = load()? else {
            return Err(InternalError::MissingCode(hash).into());
        };
        let code = Bytecode::new_raw(raw);
        self.map.lock().insert(hash, code.clone());
        Ok(code)
    }
}

/// The state as of the end of a stored block, optionally with the pending block's
/// changes on top. Immutable: readers hold it for as long as a request runs.
#[derive(Clone)]
pub struct StateView {
    pub snapshot: Arc<StoreSnapshot>,
    /// The stored block the reads start from.
    pub block: u64,
    /// Changes made after `block` (the pre-confirmed part of the block being built).
    pub overlay: Option<Overlay>,
    pub codes: Arc<CodeCache>,
}

impl StateView {
    pub fn account(&self, address: &Address) -> ChainResult<Option<AccountState>> {
        if let Some(overlay) = &self.overlay {
            if let Some(known) = overlay.account(address) {
                return Ok(known);
            }
        }
        self.snapshot.account(address, self.block)
    }

    pub fn balance(&self, address: &Address) -> ChainResult<U256> {
        Ok(self.account(address)?.map(|a| a.balance).unwrap_or_default())
    }

    pub fn nonce(&self, address: &Address) -> ChainResult<u64> {
        Ok(self.account(address)?.map(|a| a.nonce).unwrap_or_default())
    }

    pub fn storage(&self, address: &Address, slot: &U256) -> ChainResult<U256> {
        if let Some(overlay) = &self.overlay {
            if let Some(v) = overlay.storage(address, slot) {
                return Ok(v);
            }
        }
        self.snapshot.storage(address, slot, self.block)
    }

    pub fn code_bytes(&self, address: &Address) -> ChainResult<Bytes> {
        match self.account(address)? {
            Some(a) if a.code_hash != KECCAK256_EMPTY => Ok(self.bytecode(a.code_hash)?.original_bytes()),
            _ => Ok(Bytes::new()),
        }
    }

    fn bytecode(&self, hash: B256) -> ChainResult<Bytecode> {
        if hash == KECCAK256_EMPTY || hash.is_zero() {
            return Ok(Bytecode::default());
        }
        self.codes.get_or_insert(hash, || {
            if let Some(code) = self.overlay.as_ref().and_then(|o| o.code(&hash)) {
                return Ok(Some(code));
            }
            self.snapshot.code(&hash)
        })
    }
}

impl DatabaseRef for StateView {
    type Error = ChainError;

    fn basic_ref(&self, address: Address) -> Result<Option<AccountInfo>, Self::Error> {
        Ok(self.account(&address)?.map(|a| AccountInfo {
            balance: a.balance,
            nonce: a.nonce,
            code_hash: a.code_hash,
            account_id: None,
            code: None,
        }))
    }

    fn code_by_hash_ref(&self, code_hash: B256) -> Result<Bytecode, Self::Error> {
        self.bytecode(code_hash)
    }

    fn storage_ref(&self, address: Address, index: U256) -> Result<U256, Self::Error> {
        self.storage(&address, &index)
    }

    fn block_hash_ref(&self, number: u64) -> Result<B256, Self::Error> {
        Ok(self.snapshot.block_hash(number)?.unwrap_or_default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::changes::{AccountChange, StateChanges};

    /// Tick `t` sets account `t % 5`'s nonce to `t` and its slot `t % 3` to `t`; every
    /// seventh tick wipes the account's storage.
    fn tick(t: u64) -> Arc<StateChanges> {
        let mut c = StateChanges::default();
        let info = Some(AccountState { nonce: t, balance: U256::ZERO, code_hash: KECCAK256_EMPTY });
        let mut change = AccountChange { info, storage_wiped: t.is_multiple_of(7), ..Default::default() };
        change.storage.insert(U256::from(t % 3), U256::from(t));
        c.accounts.insert(Address::with_last_byte((t % 5) as u8), change);
        Arc::new(c)
    }

    #[test]
    fn merged_layers_read_as_the_ticks_they_hold() {
        let mut overlay = Overlay::default();
        let mut ticks = Vec::new();
        for t in 1..=100 {
            ticks.push(tick(t));
            overlay = overlay.with(ticks[ticks.len() - 1].clone());
            for a in 0..6u8 {
                let address = Address::with_last_byte(a);
                let naive = ticks.iter().rev().find_map(|l| l.account(&address));
                assert_eq!(overlay.account(&address), naive, "tick {t}, account {a}");
                for slot in 0..4u64 {
                    let slot = U256::from(slot);
                    let naive = ticks.iter().rev().find_map(|l| l.storage(&address, &slot));
                    assert_eq!(overlay.storage(&address, &slot), naive, "tick {t}, account {a}, slot {slot}");
                }
            }
        }
        // 100 ticks: six full layers of 16, then 4 in a layer of 4.
        assert_eq!(overlay.spans(), [16, 16, 16, 16, 16, 16, 4]);
    }
}
