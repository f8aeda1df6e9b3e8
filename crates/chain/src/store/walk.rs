//! Walking the whole state at a block (`anvil_dumpState`): every account and every
//! non-zero slot, in key order. O(history): each table is read once, start to end.

use alloy_primitives::{Address, U256};
use redb::ReadableTable;

use super::codec;
use super::snapshot::StoreSnapshot;
use crate::changes::AccountState;
use crate::error::ChainResult;

impl StoreSnapshot {
    /// Calls `f` with every account that exists at the end of `block`, by address. Reads
    /// the committed tables only: blocks still in flight (`tips`) are the caller's to add.
    pub fn each_account(&self, block: u64, mut f: impl FnMut(Address, AccountState)) -> ChainResult<()> {
        let mut current: Option<(Address, Option<AccountState>)> = None;
        for entry in self.accounts_table().iter()? {
            let (key, value) = entry?;
            let key = key.value();
            if u64::from_be_bytes(key[20..28].try_into().expect("8 bytes")) > block {
                continue;
            }
            let address = Address::from_slice(&key[..20]);
            let state = codec::decode_account(value.value());
            match &mut current {
                Some((a, s)) if *a == address => *s = state,
                _ => {
                    if let Some((a, Some(s))) = current.take() {
                        f(a, s);
                    }
                    current = Some((address, state));
                }
            }
        }
        if let Some((a, Some(s))) = current {
            f(a, s);
        }
        Ok(())
    }

    /// Calls `f` with every slot whose value at the end of `block` is not zero, by address
    /// and slot (committed tables only, as `each_account`).
    pub fn each_slot(&self, block: u64, mut f: impl FnMut(Address, U256, U256)) -> ChainResult<()> {
        let mut current: Option<(Address, U256, U256)> = None;
        for entry in self.storage_table().iter()? {
            let (key, value) = entry?;
            let key = key.value();
            if u64::from_be_bytes(key[52..60].try_into().expect("8 bytes")) > block {
                continue;
            }
            let address = Address::from_slice(&key[..20]);
            let slot = U256::from_be_slice(&key[20..52]);
            let value = U256::from_be_bytes(*value.value());
            match &mut current {
                Some((a, s, v)) if *a == address && *s == slot => *v = value,
                _ => {
                    if let Some((a, s, v)) = current.take().filter(|c| !c.2.is_zero()) {
                        f(a, s, v);
                    }
                    current = Some((address, slot, value));
                }
            }
        }
        if let Some((a, s, v)) = current.filter(|c| !c.2.is_zero()) {
            f(a, s, v);
        }
        Ok(())
    }
}
